"""Consent: which data a study may use.

Deep Research data are covered by the platform's IRB approval; when a teacher switches Deep
Research on for a channel, the channel follows that informed-consent framework (students who use
it are deemed to consent), and a student may withdraw — and re-join — from their own history
page. CONSENT_SUMMARY and TEACHER_SWITCH_NOTE are what the student (on the chat page, before their first research there,
and on the history page) and the teacher (beside the switch) are shown; the export covers exactly what it names.

So a channel's consent is a record of *periods*: one opens when Deep Research is switched on (with
the framework then in force, settings.UEDU_RESEARCH_CONSENT_FRAMEWORK) and closes when it is
switched off. `sync_channel_consent` is called on every save of a Channel (receivers.py), so the
admin, the channel-settings form and any service that saves a channel all record it. It ensures
the state rather than detecting a transition, so it needs no "previous value" and is idempotent.
Code that flips the switch with QuerySet.update() bypasses it: call sync_channel_consent after.

Exports include a row only if it was written while its channel's consent was in force, and never
anything a student wrote while withdrawn (in that channel or everywhere)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from channels_app.models import Channel
from research.models import ResearchTask

from .models import ChannelConsent, ConsentWithdrawal, ExportAudit

# What using Deep Research in a channel means for the student's data, in the reader's language.
CONSENT_SUMMARY = _(
    "This channel's Deep Research is part of a study approved by the research ethics committee "
    "(%(framework)s). By using Deep Research here you agree that your Deep Research questions, "
    "answers and research steps, and your messages in this channel's chat from your first Deep "
    "Research here on, may be used for research: pseudonymised, with names and contact details "
    "removed. Nothing you wrote before your first Deep Research here is used. You may withdraw at "
    "any time from your research history page; nothing you write while withdrawn is ever exported."
)
TEACHER_SWITCH_NOTE = _(
    "Switching Deep Research on places this channel under the consent framework %(framework)s: students "
    "who use Deep Research here consent to its research use (they are told so before their first "
    "research and may withdraw from their history page). Switching it off ends the consent period."
)


def current_framework() -> str:
    return settings.UEDU_RESEARCH_CONSENT_FRAMEWORK


def consent_summary() -> str:
    return str(CONSENT_SUMMARY) % {"framework": current_framework()}


def teacher_switch_note() -> str:
    return str(TEACHER_SWITCH_NOTE) % {"framework": current_framework()}


def sync_channel_consent(channel: Channel) -> ChannelConsent | None:
    """Open a consent period when Deep Research is on, close it when off. Returns the open one."""
    now = timezone.now()
    framework = settings.UEDU_RESEARCH_CONSENT_FRAMEWORK
    open_periods = ChannelConsent.objects.filter(channel=channel, ended_at__isnull=True)
    if not channel.deep_research_enabled:
        open_periods.update(ended_at=now)
        return None
    # A new IRB approval replaces the framework: the old period ends, a new one begins.
    open_periods.exclude(framework=framework).update(ended_at=now)
    current = open_periods.filter(framework=framework).first()
    if current is None:
        # ON CONFLICT DO NOTHING: two saves racing cannot both open a period (partial unique index),
        # and the loser must not break its caller's transaction.
        ChannelConsent.objects.bulk_create(
            [ChannelConsent(channel=channel, framework=framework, started_at=now)], ignore_conflicts=True
        )
        current = open_periods.first()
    return current


def in_force_at(channel_ref: str = "channel", moment_ref: str = "created_at") -> Exists:
    """A filter for rows written while their channel's consent was in force."""
    return Exists(
        ChannelConsent.objects.filter(
            channel=OuterRef(channel_ref), started_at__lte=OuterRef(moment_ref)
        ).filter(Q(ended_at__isnull=True) | Q(ended_at__gt=OuterRef(moment_ref)))
    )


def from_first_research(user_ref: str = "user", channel_ref: str = "channel", moment_ref: str = "created_at"):
    """A filter for rows written at or after their author's first Deep Research in their channel:
    the notice (CONSENT_SUMMARY) says the student's consent begins there. Replays are not the
    student's research and do not count."""
    first = (
        ResearchTask.objects.filter(user=OuterRef(user_ref), channel=OuterRef(channel_ref), is_replay=False)
        .order_by("created_at")
        .values("created_at")[:1]
    )
    return Q(**{f"{moment_ref}__gte": Subquery(first)})


def _active_withdrawals(channel_ids):
    return ConsentWithdrawal.objects.filter(Q(channel__isnull=True) | Q(channel_id__in=list(channel_ids)))


def withdrawn_user_ids(channel_ids) -> set[int]:
    """Students who are withdrawn now in any of these channels, or from every channel."""
    return set(
        _active_withdrawals(channel_ids).filter(rejoined_at__isnull=True).values_list("user_id", flat=True)
    )


def withdrawn_at_writing(
    user_ref: str = "user", channel_ref: str = "channel", moment_ref: str = "created_at"
) -> Q:
    """Rows a student wrote while withdrawn (in that channel or everywhere): from before the
    withdrawal too, and up to a re-join if there was one."""
    return Q(
        Exists(
            ConsentWithdrawal.objects.filter(user=OuterRef(user_ref))
            .filter(Q(channel__isnull=True) | Q(channel=OuterRef(channel_ref)))
            .filter(Q(rejoined_at__isnull=True) | Q(rejoined_at__gt=OuterRef(moment_ref)))
        )
    )


def is_withdrawn(user, channel: Channel) -> bool:
    return (
        ConsentWithdrawal.objects.filter(user=user, rejoined_at__isnull=True)
        .filter(Q(channel__isnull=True) | Q(channel=channel))
        .exists()
    )


@transaction.atomic
def withdraw_consent(
    *, student, channel: Channel | None, recorded_by=None, note: str = ""
) -> ConsentWithdrawal:
    """Record that a student withdrew (channel None: from every channel), and audit it. A student
    who had re-joined withdraws again from now: everything before the earlier re-join stays out."""
    # No membership check: a student who has left the channel may still withdraw its data.
    now = timezone.now()
    withdrawal, created = ConsentWithdrawal.objects.select_for_update().get_or_create(
        user=student,
        channel=channel,
        defaults={"withdrawn_at": now, "recorded_by": recorded_by, "note": note},
    )
    if not created and withdrawal.rejoined_at is None:
        return withdrawal  # already withdrawn: the first date stands
    if not created:
        # Rows between the re-join and now were covered and stay so only if the student does not
        # withdraw again; withdrawing again takes them out too (conservative: the student's wish).
        withdrawal.rejoined_at = None
        withdrawal.withdrawn_at = now
        withdrawal.recorded_by = recorded_by
        withdrawal.save(update_fields=["rejoined_at", "withdrawn_at", "recorded_by"])
    ExportAudit.objects.create(
        action=ExportAudit.Action.CONSENT_WITHDRAWN,
        requested_by=recorded_by or student,
        outcome=ExportAudit.Outcome.COMPLETED,
        channel=channel,
        note=f"student #{student.pk}" + (f": {note}" if note else ""),
    )
    return withdrawal


@transaction.atomic
def rejoin(*, student, channel: Channel | None) -> ConsentWithdrawal | None:
    """The student gives consent again: rows they write from now on count; earlier ones stay out."""
    withdrawal = (
        ConsentWithdrawal.objects.select_for_update()
        .filter(user=student, channel=channel, rejoined_at__isnull=True)
        .first()
    )
    if withdrawal is None:
        return None
    withdrawal.rejoined_at = timezone.now()
    withdrawal.save(update_fields=["rejoined_at"])
    ExportAudit.objects.create(
        action=ExportAudit.Action.CONSENT_REJOINED,
        requested_by=student,
        outcome=ExportAudit.Outcome.COMPLETED,
        channel=channel,
        note=f"student #{student.pk}",
    )
    return withdrawal


def consent_periods(channels: QuerySet[Channel]) -> list[dict]:
    """For the export manifest: under which framework each channel's data were collected."""
    return [
        {
            "channel": c.channel.slug,
            "framework": c.framework,
            "from": c.started_at.isoformat(),
            "until": c.ended_at.isoformat() if c.ended_at else None,
        }
        for c in ChannelConsent.objects.filter(channel__in=channels)
        .select_related("channel")
        .order_by("channel__slug", "started_at")
    ]
