"""Request bodies have a size limit, checked from Content-Length before anything reads the body.

Django limits form fields (DATA_UPLOAD_MAX_MEMORY_SIZE) only when it parses a form itself, and
DRF reads JSON bodies straight from the stream, so without this a 50 MB JSON question would be
read and parsed in full. A multipart body may be as large as a course file plus the form around
it (UEDU_MATERIALS_MAX_UPLOAD_MB + UEDU_MAX_REQUEST_BYTES): the materials service then records a
file over its limit as failed with the reason; anything larger is refused here. A deployment
should also set the same limit on its proxy (nginx `client_max_body_size`), which stops a huge
body before the application server has received it."""

from __future__ import annotations

from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _

from .error_pages import refusal


def body_limit(request) -> int:
    if request.META.get("CONTENT_TYPE", "").lower().startswith("multipart/form-data"):
        return settings.UEDU_MATERIALS_MAX_UPLOAD_BYTES + settings.UEDU_MAX_REQUEST_BYTES
    return settings.UEDU_MAX_REQUEST_BYTES


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
            return refusal(request, 400, "bad_content_length", _("The request's Content-Length is not a number of bytes."))
        limit = body_limit(request)
        if size > limit:
            message = _("The request is too large (%(size)s; at most %(limit)s). Shorten the text or send a smaller file.") % {
                "size": filesizeformat(size), "limit": filesizeformat(limit)}
            return refusal(request, 413, "request_too_large", message)
        return self.get_response(request)

