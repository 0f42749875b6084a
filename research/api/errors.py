"""Every API error has one shape: {"error": {"code", "message"}} with the right status."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404
from django_ratelimit.exceptions import Ratelimited
from rest_framework import exceptions
from rest_framework.response import Response

from uedu_dr.errors import ServiceError


def _flatten(detail) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{key}: {_flatten(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return " ".join(_flatten(item) for item in detail)
    return str(detail)


def error_response(code: str, message: str, status: int, retry_after: int | None = None) -> Response:
    # Always JSON, even when the request negotiated text/event-stream.
    response = Response(
        {"error": {"code": code, "message": message}}, status=status, content_type="application/json"
    )
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def api_exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        return error_response(exc.code, str(exc.message), exc.status, exc.retry_after)
    if isinstance(exc, Ratelimited):
        return error_response("rate_limited", "Too many requests; please wait a minute.", 429, 60)
    if isinstance(exc, Http404):
        return error_response("not_found", "Not found.", 404)
    if isinstance(exc, RequestDataTooBig):
        return error_response("request_too_large", "The request is too large.", 413)
    if isinstance(exc, SuspiciousOperation):  # too many form fields or files, a malformed multipart body
        return error_response("bad_request", str(exc) or "Malformed request.", 400)
    if isinstance(exc, DjangoPermissionDenied):
        return error_response("forbidden", "You may not do this.", 403)
    if isinstance(exc, exceptions.ValidationError):
        return error_response("invalid", _flatten(exc.detail), 400)
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return error_response("not_authenticated", _flatten(exc.detail), exc.status_code)
    if isinstance(exc, exceptions.APIException):
        code = exc.default_code if isinstance(exc.default_code, str) else "error"
        response = error_response(code, _flatten(exc.detail), exc.status_code)
        if getattr(exc, "wait", None):
            response["Retry-After"] = str(int(exc.wait))
        return response
    return None  # a real bug: Django's 500 handling and logging apply
