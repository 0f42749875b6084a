"""What one user may have under way at once, and how often they may take a start back.

A start reserves the research's worst case against the platform's daily cap until the research
ends. With the workers busy, researches wait queued and their reservations are held; without a
bound, one account could queue enough of them to hold the cap and refuse everyone else's start,
then cancel them for a full refund and do it again. So, checked in the start's transaction, under
the user's start lock (quotas.lock_user_starts, which the quota charge takes too: simultaneous
starts cannot pass together):

- **active researches**: at most UEDU_DR_MAX_ACTIVE (by quota class: students 2) queued or running,
  plan review included; one more is refused (429 `too_many_active`) until one ends;
- **cancel throttle**: a research cancelled before its plan was ready is refunded in full
  (research.services.settlement), and such cancels are counted: past UEDU_DR_CANCEL_RATE ("5/h")
  the next start is refused (429 `cancel_throttled`) until the oldest leaves the window. The refund
  itself is never withheld, and cancelling is never refused.

Platform admins are exempt (they have no quota and set the cap), and so are accounts that cannot
log in (the evaluation's, which runs its researches one after another in its own process)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from channels_app.access import can
from channels_app.roles import COSTS_UNSHARED, is_service_account
from quotas import services as quotas
from quotas.roles import max_active_researches, resolve_role
from research.models import ResearchEvent, ResearchTask
from uedu_dr.errors import ServiceError

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, timedelta]:
    """ "5/h" → (5, one hour); "3/10m" → (3, ten minutes) (the settings checked the form)."""
    count, period = rate.split("/")
    return int(count), timedelta(seconds=int(period[:-1] or 1) * _UNIT_SECONDS[period[-1]])


def check_start(user, task: ResearchTask) -> None:
    """Refuse (429) a start past the user's active researches or cancel throttle. `task` is the
    row being started (created in this transaction): it is not counted. Call inside
    transaction.atomic(), before the quota charge."""
    if can(user, COSTS_UNSHARED) or is_service_account(user):
        return
    quotas.lock_user_starts(user)
    _check_active(user, task, max_active_researches(resolve_role(user)))
    _check_cancels(user)


def _check_active(user, task: ResearchTask, limit: int | None) -> None:
    if limit is None:
        return
    active = (
        ResearchTask.objects.filter(user=user, is_replay=False)
        .exclude(status__in=ResearchTask.TERMINAL)  # queued, running, awaiting its plan review
        .exclude(pk=task.pk)
        .count()
    )
    if active >= limit:
        raise ServiceError(
            "too_many_active",
            ngettext(
                "You already have %(n)d research under way. Wait for it to finish, or cancel it, to start another.",
                "You already have %(n)d researches under way. Wait for one to finish, or cancel one, to start another.",
                active,
            )
            % {"n": active},
            status=429,
            retry_after=60,
        )


def refunded_cancels(user, since) -> list:
    """When each of the user's researches cancelled before its plan (refunded in full) ended, since
    `since`, oldest first."""
    planned = ResearchEvent.objects.filter(task=OuterRef("pk"), type="plan_complete")
    return list(
        ResearchTask.objects.filter(
            user=user, is_replay=False, status=ResearchTask.Status.CANCELLED, finished_at__gt=since
        )
        .exclude(Exists(planned))
        .order_by("finished_at")
        .values_list("finished_at", flat=True)
    )


def _check_cancels(user) -> None:
    limit, window = parse_rate(settings.UEDU_DR_CANCEL_RATE)
    now = timezone.now()
    cancels = refunded_cancels(user, now - window)
    if len(cancels) < limit:
        return
    # Free again once enough of them have left the window to be under the limit.
    free_at = cancels[len(cancels) - limit] + window
    wait = max(1, int((free_at - now).total_seconds()) + 1)
    raise ServiceError(
        "cancel_throttled",
        _(
            "You cancelled %(n)d researches before they began in the last %(window)s. You can start a new one in %(minutes)d minutes."
        )
        % {"n": len(cancels), "window": _window_words(window), "minutes": max(1, (wait + 59) // 60)},
        status=429,
        retry_after=wait,
    )


def _window_words(window: timedelta) -> str:
    minutes = int(window.total_seconds()) // 60
    if minutes % 60 == 0:
        hours = minutes // 60
        return ngettext("hour", "%(n)d hours", hours) % {"n": hours}
    return ngettext("minute", "%(n)d minutes", minutes) % {"n": minutes}
