"""Error answers outside the views: the request size check's refusals and the project's handler400,
handler404 and handler500. Under /api/ (and for scripts asking for JSON) every error has the API's
shape `{"error": {"code", "message"}}`, so a client never has to parse an HTML page; browsers get
the site's readable pages."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from django.views import defaults


def wants_json(request) -> bool:
    return (
        request.path.startswith("/api/")
        or request.headers.get("X-Requested-With") == "fetch"
        or "application/json" in request.headers.get("Accept", "")
    )


def refusal(request, status: int, code: str, message: str):
    """The API's error shape for scripts, a readable page for browsers."""
    if wants_json(request):
        return JsonResponse(
            {"error": {"code": code, "message": message}},
            status=status,
            json_dumps_params={"ensure_ascii": False},
        )
    return render(request, "request_refused.html", {"status": status, "message": message}, status=status)


def bad_request(request, exception=None):
    """handler400: what Django's own parsers refuse once they read a body (form fields over
    DATA_UPLOAD_MAX_MEMORY_SIZE inside a multipart upload, too many fields, a broken multipart
    body) gets the same readable answer as the request size check, instead of a bare "Bad Request"."""
    if isinstance(exception, RequestDataTooBig):
        message = _(
            "The request is too large (%(size)s; at most %(limit)s). Shorten the text or send a smaller file."
        ) % {
            "size": filesizeformat(int(request.META.get("CONTENT_LENGTH") or 0)),
            "limit": filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
        }
        return refusal(request, 413, "request_too_large", message)
    return refusal(
        request, 400, "bad_request", _("The request could not be read. Reload the page and try again.")
    )


def page_not_found(request, exception=None):
    """A URL that matches nothing (e.g. /api/deep_research/task/not-a-uuid) answers like any 404 of the API."""
    if request.path.startswith("/api/"):
        return JsonResponse({"error": {"code": "not_found", "message": "Not found."}}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"error": {"code": "server_error", "message": "Internal error; it has been logged."}}, status=500
        )
    return defaults.server_error(request)
