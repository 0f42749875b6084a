"""Security headers Django does not set by itself: the Content-Security-Policy.

Every page is server-rendered with its scripts and styles in static files (no inline <script>,
no inline event handlers, no style attributes), so a strict policy holds everywhere. The policy
is one setting, so a deployment can tighten it (e.g. `wss:` only) without code."""

from __future__ import annotations

from django.conf import settings


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = "; ".join(f"{directive} {' '.join(values)}".strip() for directive, values in settings.CONTENT_SECURITY_POLICY.items())

    def __call__(self, request):
        response = self.get_response(request)
        # A view that sets its own (stricter) policy keeps it.
        response.headers.setdefault("Content-Security-Policy", self.policy)
        return response
