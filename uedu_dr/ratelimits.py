"""Per-user rate limits (django-ratelimit's counters on the shared Redis cache), answered 429."""

from __future__ import annotations

import logging

from django.utils.translation import gettext as _
from django_ratelimit.core import get_usage

from uedu_dr.errors import ServiceError

log = logging.getLogger(__name__)


def enforce_rate(request, group: str, rate: str, *, fail_closed: bool = False) -> None:
    """Count this request against `rate` for its user; refuse with 429 and Retry-After when over.

    If the cache is unreachable: an endpoint that calls a model (`fail_closed=True`) refuses with
    503, because a rate limit that lets everything through is what a scripted account needs to
    spend the platform's money; any other request goes through (the quota and the cost cap live
    in PostgreSQL and still hold)."""
    try:
        usage = get_usage(request, group=group, key="user", rate=rate, method="POST", increment=True)
    except Exception as exc:
        if fail_closed:
            log.error("rate limit check failed (cache unavailable), refusing %s: %s", group, exc)
            raise ServiceError(
                "rate_limit_unavailable",
                _("This service is briefly unavailable; please try again in a moment."),
                status=503,
                retry_after=30,
            ) from None
        log.warning("rate limit check skipped (cache unavailable): %s", exc)
        return
    if usage and usage["should_limit"]:
        raise ServiceError(
            "rate_limited",
            _("Too many requests in a short time; please wait a moment and try again."),
            status=429,
            retry_after=max(1, int(usage["time_left"])),
        )
