"""Consent: which data a study may use.

The product's rule: Deep Research data are covered by the platform's IRB approval; when a
teacher switches Deep Research on for a channel, the channel follows that informed-consent
framework (students who use it are deemed to consent), and a student may withdraw.

So a channel's consent is a record of *periods*: one opens when Deep Research is switched on (with
the framework then in force, settings.UEDU_RESEARCH_CONSENT_FRAMEWORK) and closes when it is
switched off. `sync_channel_consent` is called on every save of a Channel (receivers.py), so the
admin, the channel-settings form and any service that saves a channel all record it. It ensures
the state rather than detecting a transition, so it needs no "previous value" and is idempotent.
Code that flips the switch with QuerySet.update() bypasses it: call sync_channel_consent after.

Exports include a row only if it was written while its channel's consent was in force, and never
anything of a student who withdrew (in that channel or everywhere)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from channels_app.models import Channel

from .models import ChannelConsent, ConsentWithdrawal


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
        ChannelConsent.objects.filter(channel=OuterRef(channel_ref), started_at__lte=OuterRef(moment_ref)).filter(
            Q(ended_at__isnull=True) | Q(ended_at__gt=OuterRef(moment_ref))
        )
    )


def withdrawn_user_ids(channel_ids) -> set[int]:
    """Students who withdrew in any of these channels, or from every channel."""
    return set(
        ConsentWithdrawal.objects.filter(Q(channel__isnull=True) | Q(channel_id__in=list(channel_ids))).values_list("user_id", flat=True)
    )


@transaction.atomic
def withdraw_consent(*, student, channel: Channel | None, recorded_by=None, note: str = "") -> ConsentWithdrawal:
    """Record that a student withdrew (channel None: from every channel). Idempotent: the first
    withdrawal's date stands."""
    # No membership check: a student who has left the channel may still withdraw its data.
    withdrawal, _created = ConsentWithdrawal.objects.get_or_create(
        user=student, channel=channel, defaults={"withdrawn_at": timezone.now(), "recorded_by": recorded_by, "note": note}
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
        for c in ChannelConsent.objects.filter(channel__in=channels).select_related("channel").order_by("channel__slug", "started_at")
    ]
