"""Log-in throttling: django-axes counts failed log-ins per username and per address on every
form that authenticates (/accounts/login/, /admin/login/); this module gives it a back-off, and
throttles password-reset requests, which authenticate nothing and so are not axes's to count.

Back-off: after UEDU_LOGIN_FAILURE_LIMIT failures a username or an address is locked for
UEDU_LOGIN_COOLOFF_MINUTES; each further round of failures within a day doubles the lock, up to
a day. Operators unlock with `manage.py axes_reset_username NAME` or `axes_reset_ip ADDRESS`
(README, "Log-in throttling")."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.shortcuts import render
from django.utils import timezone
from django_ratelimit.core import get_usage

MAX_COOL_OFF = timedelta(days=1)
BACK_OFF_WINDOW = timedelta(days=1)


def cool_off(request) -> timedelta:
    """How long this request's username or address stays locked: the base cool-off, doubled for
    each earlier round of failures in the last day (axes calls this with the request)."""
    base = timedelta(minutes=settings.UEDU_LOGIN_COOLOFF_MINUTES)
    if request is None:
        return base
    from axes.models import AccessFailureLog  # the app registry is ready whenever axes asks

    username = (request.POST.get("username") or "").strip() if request.method == "POST" else ""
    address = getattr(request, "axes_ip_address", None)
    who = Q(ip_address=address) if address else Q()
    if username:
        who = who | Q(username=username) if address else Q(username=username)
    if not who:
        return base
    failures = AccessFailureLog.objects.filter(
        who, attempt_time__gte=timezone.now() - BACK_OFF_WINDOW
    ).count()
    rounds = max(0, failures // settings.AXES_FAILURE_LIMIT - 1)
    return min(MAX_COOL_OFF, base * 2 ** min(rounds, 16))


def lockout_response(request, original_response=None, credentials=None):
    """What a locked username or address sees on either log-in form: a readable page, 429, and
    when to come back."""
    wait = cool_off(request)
    response = render(
        request,
        "registration/locked_out.html",
        {"minutes": max(1, int(wait.total_seconds() // 60))},
        status=429,
    )
    response["Retry-After"] = str(int(wait.total_seconds()))
    return response


def throttle_password_reset(view):
    """Password-reset POSTs: at most UEDU_PASSWORD_RESET_RATE per address and per e-mail
    address asked for; beyond it a readable 429 page with Retry-After, and no e-mail sent."""

    def wrapped(request, *args, **kwargs):
        if request.method == "POST":
            for key in ("ip", "post:email"):
                try:
                    usage = get_usage(
                        request,
                        group="password_reset",
                        key=key,
                        rate=settings.UEDU_PASSWORD_RESET_RATE,
                        method="POST",
                        increment=True,
                    )
                except Exception:  # the cache is away: refuse rather than send e-mails unbounded
                    return render(request, "registration/throttled.html", status=503)
                if usage and usage["should_limit"]:
                    response = render(request, "registration/throttled.html", status=429)
                    response["Retry-After"] = str(max(1, int(usage["time_left"])))
                    return response
        return view(request, *args, **kwargs)

    return wrapped
