"""Request bodies have a size limit, checked from Content-Length before anything reads the body.

Django limits form fields (DATA_UPLOAD_MAX_MEMORY_SIZE) only when it parses a form itself, and
DRF reads JSON bodies straight from the stream, so without this a 50 MB JSON question would be
read and parsed in full. A multipart body may be as large as a course file plus the form around
it (UEDU_MATERIALS_MAX_UPLOAD_MB + UEDU_MAX_REQUEST_BYTES): the materials service then records a
file over its limit as failed with the reason; anything larger is refused here. A deployment
should also set the same limit on its proxy (nginx `client_max_body_size`), which stops a huge
body before the application server has received it.

A body without Content-Length (Transfer-Encoding: chunked), or one longer than it said, is
counted as it arrives, twice: daphne receives a whole body (into a temporary file) before it
calls the application, so `limit_daphne_bodies()` counts each chunk as daphne's HTTP layer gets
it and cuts the connection with 413 past the limit; `BodySizeLimit`, the ASGI wrapper in front of
Django, does the same for servers that stream the body to the application (uvicorn, hypercorn)."""

from __future__ import annotations

import json

from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _

from .error_pages import refusal


def body_limit(request) -> int:
    return limit_for_content_type(request.META.get("CONTENT_TYPE", ""))


def limit_for_content_type(content_type: str) -> int:
    if content_type.lower().startswith("multipart/form-data"):
        return settings.UEDU_MATERIALS_MAX_UPLOAD_BYTES + settings.UEDU_MAX_REQUEST_BYTES
    return settings.UEDU_MAX_REQUEST_BYTES


class BodySizeLimit:
    """ASGI middleware: counts the body of each HTTP request as its chunks arrive. Past the
    limit, the application is told the client went away (Django stops reading and answers
    nothing) and the client gets 413 with the API's error shape."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        limit = limit_for_content_type(headers.get(b"content-type", b"").decode("latin-1"))
        received = 0
        refused = False
        started = False

        async def counted_receive():
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    return {"type": "http.disconnect"}
            return message

        async def tracked_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted_receive, tracked_send)
        if refused and not started:
            body = _too_large_body(limit)
            await send(
                {
                    "type": "http.response.start",
                    "status": 413,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})


class RequestSizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        raw = request.META.get("CONTENT_LENGTH") or "0"
        try:
            size = int(raw)
        except ValueError:
            size = -1
        if size < 0:
            return refusal(
                request,
                400,
                "bad_content_length",
                _("The request's Content-Length is not a number of bytes."),
            )
        limit = body_limit(request)
        if size > limit:
            message = _(
                "The request is too large (%(size)s; at most %(limit)s). Shorten the text or send a smaller file."
            ) % {"size": filesizeformat(size), "limit": filesizeformat(limit)}
            return refusal(request, 413, "request_too_large", message)
        return self.get_response(request)


def _too_large_body(limit: int) -> bytes:
    message = _(
        "The request is too large (%(size)s; at most %(limit)s). Shorten the text or send a smaller file."
    ) % {"size": _("more than %(limit)s") % {"limit": filesizeformat(limit)}, "limit": filesizeformat(limit)}
    return json.dumps(
        {"error": {"code": "request_too_large", "message": message}}, ensure_ascii=False
    ).encode()


# This answer leaves before Django sees the request, so it carries the headers every response of
# the site has (uedu_dr.security and Django's SecurityMiddleware), with the strictest policy: it
# is a JSON error, not a document.
_REFUSAL_SECURITY_HEADERS = (
    b"Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"
    b"X-Content-Type-Options: nosniff\r\nReferrer-Policy: same-origin\r\nX-Frame-Options: DENY\r\n"
)


def limit_daphne_bodies() -> None:
    """Count request bodies in daphne's HTTP layer, chunk by chunk (see the module's docstring).
    Called once by the ASGI entry point; without daphne (another server) it does nothing."""
    try:
        from daphne.http_protocol import WebRequest
    except ImportError:
        return
    if getattr(WebRequest, "_uedu_counts_bodies", False):
        return
    receive_chunk = WebRequest.handleContentChunk

    def handleContentChunk(self, data):
        if getattr(self, "_uedu_refused", False):
            return
        self._uedu_received = getattr(self, "_uedu_received", 0) + len(data)
        limit = limit_for_content_type((self.getHeader(b"content-type") or b"").decode("latin-1"))
        if self._uedu_received <= limit:
            return receive_chunk(self, data)
        # Past the limit: answer now and drop the connection; the rest is never received.
        self._uedu_refused = True
        body = _too_large_body(limit)
        self.channel.transport.write(
            b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + _REFUSAL_SECURITY_HEADERS
            + b"Content-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        self.channel.transport.loseConnection()

    WebRequest.handleContentChunk = handleContentChunk
    WebRequest._uedu_counts_bodies = True
