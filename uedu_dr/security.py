"""Security headers Django does not set by itself: the Content-Security-Policy.

Every page is server-rendered with its scripts and styles in static files (no inline <script>,
no inline event handlers, no style attributes), so a strict policy holds everywhere. The policy
is one setting, so a deployment can tighten it without code; the WebSocket origin of the site
itself is added per request."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import DisallowedHost


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.directives = {
            directive: list(values) for directive, values in settings.CONTENT_SECURITY_POLICY.items()
        }

    def __call__(self, request):
        response = self.get_response(request)
        # A view that sets its own (stricter) policy keeps it.
        response.headers.setdefault("Content-Security-Policy", self.policy_for(request))
        return response

    def policy_for(self, request) -> str:
        directives = dict(self.directives)
        # The progress card's WebSocket goes to this site only: its own ws(s) origin, named,
        # since not every browser counts ws: under 'self', and "ws: wss:" would allow any host.
        try:
            socket_origin = f"{'wss' if request.is_secure() else 'ws'}://{request.get_host()}"
        except DisallowedHost:
            socket_origin = ""
        if socket_origin and "connect-src" in directives:
            directives["connect-src"] = [*directives["connect-src"], socket_origin]
        return "; ".join(
            f"{directive} {' '.join(values)}".strip() for directive, values in directives.items()
        )
