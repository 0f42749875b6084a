"""The project's own `manage.py check --deploy` warnings for settings only an operator can decide.

Registered by the project's admin config (uedu_dr.apps), the one app config of uedu_dr."""

from __future__ import annotations

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def trusted_proxies_decided(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """Behind a reverse proxy with UEDU_TRUSTED_PROXIES unset, every client is the proxy's address:
    one log-in lock and one password-reset rate for everyone behind it. Nothing in a request says
    for sure that a proxy is there, so the operator is asked to decide: a count, networks, or 0."""
    if settings.UEDU_TRUSTED_PROXIES.configured:
        return []
    return [
        checks.Warning(
            "UEDU_TRUSTED_PROXIES is not set, so no proxy is trusted and every client is the peer's address.",
            hint=(
                "Behind a reverse proxy, set UEDU_TRUSTED_PROXIES to the number of proxies or to their "
                "networks (docs/security.md, 'Client address'); if clients connect to daphne directly, "
                "set it to 0."
            ),
            id="uedu_dr.W001",
        )
    ]
