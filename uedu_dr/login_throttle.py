"""Log-in throttling: django-axes counts failed log-ins on every form that authenticates
(/accounts/login/, /admin/login/); this module sets what a lock keys on, gives it a back-off, and
throttles password-reset requests, which authenticate nothing and so are not axes's to count.

Three locks (LoginThrottleHandler), each on the client's address as uedu_dr.client_address
resolves it (IPv6 per /64):
- the username *from this address*: UEDU_LOGIN_FAILURE_LIMIT (5). One student mistyping behind a
  campus NAT locks that student there, not the campus;
- the username from anywhere: UEDU_LOGIN_USERNAME_FAILURE_LIMIT (20), against guessing one account
  from many addresses (credential stuffing);
- the address whatever the usernames: UEDU_LOGIN_ADDRESS_FAILURE_LIMIT (100), against one address
  spraying passwords over many accounts, high enough for a NAT's normal typos.

Back-off: each further round of failures within a day doubles the lock, up to a day. Operators
unlock with `manage.py axes_reset_username NAME` or `axes_reset_ip ADDRESS`, or by deleting the
rows in the admin ("Axes → Access attempts"); docs/security.md, "Log-in locks"."""

from __future__ import annotations

from datetime import timedelta

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.db.models import Sum
from django.shortcuts import render
from django.utils import timezone
from django_ratelimit.core import get_usage

MAX_COOL_OFF = timedelta(days=1)
BACK_OFF_WINDOW = timedelta(days=1)


def _limits() -> tuple[int, int, int]:
    """Failures that lock (username from this address, username, address), in
    AXES_LOCKOUT_PARAMETERS's order."""
    return (
        settings.AXES_FAILURE_LIMIT,
        settings.UEDU_LOGIN_USERNAME_FAILURE_LIMIT,
        settings.UEDU_LOGIN_ADDRESS_FAILURE_LIMIT,
    )


class LoginThrottleHandler(AxesDatabaseHandler):
    """axes compares one count with one limit; the three locks have three limits. `get_failures`
    answers the pair's count, raised to AXES_FAILURE_LIMIT when the username or the address is
    over its own (higher) limit, so axes's `>= AXES_FAILURE_LIMIT` means "one of the three"."""

    def get_failures(self, request, credentials=None) -> int:
        counts = [
            attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        ]
        pair, *wider = counts
        if any(count >= limit for count, limit in zip(wider, _limits()[1:])):
            return max(pair, settings.AXES_FAILURE_LIMIT)
        return pair


def cool_off(request) -> timedelta:
    """How long this request's lock lasts: the base cool-off, doubled for each earlier round of
    failures in the last day of whichever lock has had the most rounds (axes calls this with the
    request)."""
    base = timedelta(minutes=settings.UEDU_LOGIN_COOLOFF_MINUTES)
    if request is None:
        return base
    from axes.models import AccessFailureLog  # the app registry is ready whenever axes asks

    username = (request.POST.get("username") or "").strip() if request.method == "POST" else ""
    address = getattr(request, "axes_ip_address", None)
    recent = AccessFailureLog.objects.filter(attempt_time__gte=timezone.now() - BACK_OFF_WINDOW)
    pair_limit, username_limit, address_limit = _limits()
    rounds = 0
    if username and address:
        rounds = max(rounds, recent.filter(username=username, ip_address=address).count() // pair_limit - 1)
    if username:
        rounds = max(rounds, recent.filter(username=username).count() // username_limit - 1)
    if address:
        rounds = max(rounds, recent.filter(ip_address=address).count() // address_limit - 1)
    return min(MAX_COOL_OFF, base * 2 ** min(max(0, rounds), 16))


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


def _email_key(group, request) -> str:
    """The e-mail address asked for, as the reset form matches it (case-insensitively): `Erin@` and
    `erin@` are one address and share one count."""
    return (request.POST.get("email") or "").strip().lower()


def throttle_password_reset(view):
    """Password-reset POSTs: at most UEDU_PASSWORD_RESET_RATE per address and per e-mail
    address asked for; beyond it a readable 429 page with Retry-After, and no e-mail sent."""

    def wrapped(request, *args, **kwargs):
        if request.method == "POST":
            for key in ("ip", _email_key):
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
