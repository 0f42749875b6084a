"""The personal quota (rolling 24 h), the platform's daily cost cap, each user's share of it, and
the cost alert.

Every limit is enforced inside the caller's transaction under a PostgreSQL advisory lock, so
any number of simultaneous starts can never pass them: the check and the write that consumes
the limit happen while no other start can check. Locks are always taken in this order: the
user's start lock (a research start), the user's call lock (every reservation of theirs), the
platform's cap lock."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import ROUND_UP, Decimal

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, F, Sum, When
from django.utils import timezone
from django.utils.translation import gettext as _

from channels_app.access import can
from channels_app.roles import COSTS_UNSHARED, is_service_account, platform_admins_q
from uedu_dr.errors import ServiceError

from .models import CostAlert, CostReservation, UsageEntry
from .roles import QuotaRole, resolve_role

log = logging.getLogger(__name__)

WINDOW = timedelta(hours=24)
# Advisory lock namespaces (first key of pg_advisory_xact_lock(int, int)).
_QUOTA_LOCK = 7201
_CAP_LOCK = 7202
_CALL_LOCK = 7203


def _lock(namespace: int, key: int) -> None:
    if not connection.in_atomic_block:
        raise RuntimeError("quota and cap checks must run inside transaction.atomic()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [namespace, key])


# --------------------------------------------------------------------------- personal quota


@dataclass(frozen=True)
class QuotaStatus:
    role: str
    limit: int | None
    used: Decimal
    window_start: datetime | None  # the first start still inside the rolling window
    next_free_at: datetime | None  # when the oldest charge leaves the window

    @property
    def remaining(self) -> Decimal | None:
        if self.limit is None:
            return None
        return max(Decimal(0), Decimal(self.limit) - self.used)

    def as_dict(self) -> dict:
        return {
            "role": self.role,
            "limit": self.limit,
            "unlimited": self.limit is None,
            "used": float(self.used),
            "remaining": None if self.remaining is None else float(self.remaining),
            "window_start": self.window_start.isoformat() if self.window_start else None,
            "next_free_at": self.next_free_at.isoformat() if self.next_free_at else None,
            "window_hours": 24,
        }


def quota_status(user, role: QuotaRole | None = None) -> QuotaStatus:
    """Charges in the last 24 hours, net of their refunds. Each unit frees up 24 hours after the
    start that used it, so the window is counted from the first start still inside it."""
    role = role or resolve_role(user)
    since = timezone.now() - WINDOW
    charges = UsageEntry.objects.filter(user=user, kind=UsageEntry.Kind.CHARGE, created_at__gt=since)
    references = charges.values("reference")
    used = UsageEntry.objects.filter(user=user, reference__in=references).aggregate(total=Sum("amount"))[
        "total"
    ] or Decimal(0)
    oldest = charges.order_by("created_at").values_list("created_at", flat=True).first()
    return QuotaStatus(
        role=role.role,
        limit=role.daily_limit,
        used=max(Decimal(0), used),
        window_start=oldest,
        next_free_at=oldest + WINDOW if oldest else None,
    )


def lock_user_starts(user) -> None:
    """Hold the user's start lock to the end of the transaction: the quota charge takes it too, so
    a caller that checks something else of the user's before charging (what they have under way)
    is not passed by a simultaneous start."""
    _lock(_QUOTA_LOCK, user.pk)


def charge(user, reference: str) -> QuotaStatus:
    """Use one unit of the user's quota, or refuse (429). Call inside transaction.atomic()."""
    role = resolve_role(user)
    lock_user_starts(user)
    status = quota_status(user, role)
    if status.limit is not None and status.used + 1 > status.limit:
        wait = (
            int((status.next_free_at - timezone.now()).total_seconds()) + 1 if status.next_free_at else 3600
        )
        raise ServiceError(
            "quota_exceeded",
            _(
                "You have used your %(limit)d Deep Research runs for the last 24 hours. The next one frees up in %(minutes)d minutes."
            )
            % {"limit": status.limit, "minutes": max(1, wait // 60)},
            status=429,
            retry_after=max(1, wait),
        )
    UsageEntry.objects.create(
        user=user, kind=UsageEntry.Kind.CHARGE, amount=Decimal("1.00"), reference=reference, reason="start"
    )
    return status


def refund(user_id: int, reference: str, amount: Decimal, reason: str) -> bool:
    """Give back part of a charge (at most once per reference). Returns whether a row was written."""
    if amount <= 0:
        return False
    if not UsageEntry.objects.filter(reference=reference, kind=UsageEntry.Kind.CHARGE).exists():
        return False
    try:
        with transaction.atomic():
            UsageEntry.objects.create(
                user_id=user_id,
                kind=UsageEntry.Kind.REFUND,
                amount=-amount,
                reference=reference,
                reason=reason,
            )
    except IntegrityError:
        return False  # already refunded
    return True


# --------------------------------------------------------------------------- platform cost cap


def platform_day(moment: datetime | None = None) -> date:
    """The cap's day is the platform's local calendar day (settings.TIME_ZONE)."""
    return timezone.localdate(moment or timezone.now())


@dataclass(frozen=True)
class CostStatus:
    day: date
    spent: Decimal
    reserved: Decimal
    cap: Decimal
    alert_threshold: Decimal
    by_kind: dict[str, Decimal] = field(default_factory=dict)  # spent + reserved per kind of call

    @property
    def committed(self) -> Decimal:
        return self.spent + self.reserved

    def as_dict(self) -> dict:
        return {
            "day": self.day.isoformat(),
            "spent_usd": float(self.spent),
            "reserved_usd": float(self.reserved),
            "cap_usd": float(self.cap),
            "alert_usd": float(self.alert_threshold),
            "by_kind_usd": {kind: float(amount) for kind, amount in self.by_kind.items()},
        }


# What a reservation counts against the cap: its real cost once settled, its worst case until then.
_COMMITTED = Case(When(settled=True, then=F("spent_usd")), default=F("reserved_usd"))


def cost_status(day: date | None = None) -> CostStatus:
    day = day or platform_day()
    rows = CostReservation.objects.filter(day=day)
    spent = rows.filter(settled=True).aggregate(t=Sum("spent_usd"))["t"] or Decimal(0)
    reserved = rows.filter(settled=False).aggregate(t=Sum("reserved_usd"))["t"] or Decimal(0)
    by_kind = {
        row["kind"]: row["total"]
        for row in rows.values("kind").annotate(total=Sum(_COMMITTED)).order_by("kind")
    }
    return CostStatus(
        day,
        spent,
        reserved,
        settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD,
        settings.UEDU_DEEP_RESEARCH_ALERT_USD,
        by_kind,
    )


def committed_cost(day: date) -> Decimal:
    """The day's spent plus reserved cost (CostStatus.committed) in one aggregate: the cap check
    runs it under the platform-wide lock on every research start and every metered model call, and
    needs neither the split nor cost_status's breakdown by kind (two more queries)."""
    return CostReservation.objects.filter(day=day).aggregate(t=Sum(_COMMITTED))["t"] or Decimal(0)


def _seconds_to_tomorrow(day: date) -> int:
    tomorrow = timezone.make_aware(datetime.combine(day + timedelta(days=1), datetime.min.time()))
    return int((tomorrow - timezone.now()).total_seconds())


def reserve_cost(
    user, reference: str, worst_case: Decimal, kind: str = CostReservation.Kind.RESEARCH
) -> CostReservation:
    """Reserve the worst case against today's cap (503) and against the user's share of it (429),
    like every call of theirs (reserve_call): a research's reservation is the largest a user
    holds, so it counts first of all. Call inside transaction.atomic()."""
    if user is not None:
        _lock(_CALL_LOCK, user.pk)
    day = _check_cap(worst_case, kind)  # the cap first: when the platform is out, everyone is told so
    _check_user_share(user, worst_case, day, kind)
    return CostReservation.objects.create(
        reference=reference, kind=kind, user=user, day=day, reserved_usd=worst_case
    )


def _check_cap(worst_case: Decimal, kind: str) -> date:
    """Take the platform-wide lock (held to the end of the transaction) and refuse (503) when the
    worst case would pass today's cap. Returns the cap's day."""
    _lock(_CAP_LOCK, 0)
    day = platform_day()
    if committed_cost(day) + worst_case > settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD:
        message = (
            _(
                "Deep Research has reached the platform's daily cost limit. New research can start again tomorrow."
            )
            if kind == CostReservation.Kind.RESEARCH
            else _("The assistant has reached the platform's daily cost limit. It can answer again tomorrow.")
        )
        raise ServiceError(
            "platform_cap_reached",
            message,
            status=503,
            retry_after=max(60, _seconds_to_tomorrow(day)),
        )
    return day


def user_share_usd() -> Decimal:
    """The most one account may commit in a day, every kind of call and research together: its
    share of the cap."""
    return (settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD * settings.UEDU_USER_DAILY_CAP_SHARE).quantize(
        Decimal("0.000001")
    )


def user_committed_cost(user, day: date) -> Decimal:
    """What the user's calls (of every kind, research included) spent or hold reserved that day."""
    return CostReservation.objects.filter(day=day, user=user).aggregate(t=Sum(_COMMITTED))["t"] or Decimal(0)


def _check_user_share(user, worst_case: Decimal, day: date, kind: str) -> None:
    """No account takes more than its share of the platform's day (UEDU_USER_DAILY_CAP_SHARE), its
    researches' reservations included: a scripted account meets its own 429 long before everyone
    meets the cap's 503. Who holds costs.unshared is exempt (the platform admins, who set the cap), and so are accounts that
    cannot log in (the evaluation's: only the platform's own processes act for them, within the
    cap and the evaluation's own budget). The caller holds the user's call lock."""
    if user is None or can(user, COSTS_UNSHARED) or is_service_account(user):
        return
    share = user_share_usd()
    if user_committed_cost(user, day) + worst_case > share:
        message = (
            _(
                "You have used your share of today's Deep Research budget. New research can start again tomorrow."
            )
            if kind == CostReservation.Kind.RESEARCH
            else _(
                "You have used your share of the assistant's budget for today. It can answer you again tomorrow."
            )
        )
        raise ServiceError(
            "user_budget_exceeded", message, status=429, retry_after=max(60, _seconds_to_tomorrow(day))
        )


def calls_today(user, kind: str) -> tuple[int, datetime | None]:
    """How many calls of `kind` the user made in the rolling 24 hours, and the oldest of them."""
    rows = CostReservation.objects.filter(user=user, kind=kind, created_at__gt=timezone.now() - WINDOW)
    return rows.count(), rows.order_by("created_at").values_list("created_at", flat=True).first()


def reserve_call(user, kind: str, worst_case: Decimal, *, daily_limit: int | None = None) -> str:
    """Reserve one model call (or one exchange of a few) against the daily cap, against the
    user's share of that cap (every kind counted), and against the user's own daily count for
    this kind when one is given: 429 with Retry-After when a budget of the user's is used, 503
    when the platform cap is. Returns the reference to settle.

    Locks: the user's call lock, then the platform's cap lock (always in this order), so two
    calls of one user cannot both pass the share, and no two calls pass the cap."""
    reference = f"{kind}:{uuid.uuid4().hex}"
    with transaction.atomic():
        if user is not None:
            _lock(_CALL_LOCK, user.pk)
        if daily_limit is not None and user is not None:
            used, oldest = calls_today(user, kind)
            if used >= daily_limit:
                wait = int((oldest + WINDOW - timezone.now()).total_seconds()) + 1 if oldest else 3600
                raise ServiceError(
                    "chat_quota_exceeded",
                    _(
                        "You have sent your %(limit)d messages to the assistant for the last 24 hours. The next one frees up in %(minutes)d minutes."
                    )
                    % {"limit": daily_limit, "minutes": max(1, wait // 60)},
                    status=429,
                    retry_after=max(1, wait),
                )
        reserve_cost(user, reference, worst_case, kind)
    return reference


def settle_cost(reference: str, spent: Decimal) -> bool:
    """Replace the reservation by the real cost (once)."""
    return bool(
        CostReservation.objects.filter(reference=reference, settled=False).update(
            spent_usd=spent, settled=True, settled_at=timezone.now()
        )
    )


# --------------------------------------------------------------------------- cost alert


def send_cost_alert(day: date | None = None) -> CostAlert | None:
    """E-mail the admins once per day when the day's cost passes UEDU_DEEP_RESEARCH_ALERT_USD.

    The day's cost counts what finished tasks spent plus what running tasks have reserved, so a
    runaway hour is reported while it happens, not after."""
    status = cost_status(day)
    if status.committed <= status.alert_threshold:
        return None
    from django.contrib.auth import get_user_model

    recipients = sorted(
        {email for _, email in settings.ADMINS}
        | set(
            get_user_model()
            .objects.filter(platform_admins_q())
            .exclude(email="")
            .values_list("email", flat=True)
        )
    )
    subject = f"[Uedu Deep Research] cost alert {status.day}: ${status.committed:.2f} > ${status.alert_threshold:.2f}"
    body = (
        f"Deep Research cost on {status.day}: ${status.spent:.4f} spent, ${status.reserved:.4f} reserved by running tasks.\n"
        f"Alert threshold: ${status.alert_threshold:.2f}. Daily hard cap: ${status.cap:.2f}.\n"
        + "By kind of call: "
        + ", ".join(f"{kind} ${amount:.4f}" for kind, amount in status.by_kind.items())
        + "\n"
    )
    try:
        # The row and the mail succeed together: a failed send rolls the row back, so the next
        # run tries again; a second run on a sent day hits the unique day and sends nothing.
        with transaction.atomic():
            alert = CostAlert.objects.create(
                day=status.day,
                cost_usd=status.committed,
                threshold_usd=status.alert_threshold,
                recipients=", ".join(recipients),
            )
            if recipients:
                send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, recipients)
            else:
                log.error("cost alert for %s but no admin has an e-mail address: %s", status.day, subject)
    except IntegrityError:
        return None  # already sent today
    return alert


# --------------------------------------------------------------------------- embeddings


class EmbeddingCostMeter:
    """Pays for the "openai" embedding backend (materials.embeddings) like a model call: each
    batch's token bound is reserved against the cap (kind "embedding", nobody's share: indexing
    and retrieval serve a whole channel) and settled at the tokens the server reports."""

    @staticmethod
    def _usd(tokens: int) -> Decimal:
        return (Decimal(tokens) * settings.UEDU_EMBEDDING_PRICE_USD_PER_MTOK / 1_000_000).quantize(
            Decimal("0.000001"), rounding=ROUND_UP
        )

    def reserve(self, tokens: int) -> str:
        from materials.embeddings import EmbeddingError

        try:
            return reserve_call(None, CostReservation.Kind.EMBEDDING, self._usd(tokens))
        except ServiceError as exc:
            # Not the user-facing (translated) message: this one ends in logs and material errors.
            raise EmbeddingError(f"the embedding service is paused: {exc.code}") from None

    def settle(self, reference: str, tokens: int) -> None:
        settle_cost(reference, self._usd(tokens))
