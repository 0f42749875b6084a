"""Consent where people decide: beside the Deep Research switch (the teacher), on the chat page
before a student's first research in the channel, and on the student's history page (withdraw or
re-join). Template tags, because the pages belong to apps below governance (channels_app, chat,
research): they name the tag, governance supplies what it says."""

from __future__ import annotations

from django import template

from channels_app.models import Channel, Membership
from research.models import ResearchTask

from .. import consent
from ..models import ConsentWithdrawal

register = template.Library()


@register.inclusion_tag("governance/switch_note.html")
def consent_switch_note():
    """The settings page, beside the Deep Research switch."""
    return {"framework": consent.current_framework(), "note": consent.teacher_switch_note()}


@register.inclusion_tag("governance/chat_notice.html")
def consent_notice(user, channel: Channel):
    """The chat page: a student who has not yet researched in this channel is told what using
    Deep Research means before the first time (and a withdrawn student that they are withdrawn)."""
    show = (
        channel.deep_research_enabled
        and user.is_authenticated
        and Membership.objects.filter(user=user, channel=channel, role=Membership.Role.STUDENT).exists()
    )
    if not show:
        return {"show": False}
    withdrawn = consent.is_withdrawn(user, channel)
    first_time = not ResearchTask.objects.filter(user=user, channel=channel, is_replay=False).exists()
    return {
        "show": first_time or withdrawn,
        "withdrawn": withdrawn,
        "summary": consent.consent_summary(),
        "channel": channel,
    }


@register.inclusion_tag("governance/history_consent.html", takes_context=True)
def consent_choices(context, user):
    """The history page: each channel where the student may use Deep Research, with withdraw or
    re-join, and withdrawal from every channel."""
    channels = Channel.objects.filter(
        memberships__user=user, memberships__role=Membership.Role.STUDENT
    ).order_by("name")
    withdrawals = {w.channel_id: w for w in ConsentWithdrawal.objects.filter(user=user)}
    everywhere = withdrawals.get(None)
    rows = [
        {"channel": c, "withdrawn": (c.pk in withdrawals and withdrawals[c.pk].rejoined_at is None)}
        for c in channels
    ]
    return {
        "rows": rows,
        "everywhere_withdrawn": everywhere is not None and everywhere.rejoined_at is None,
        "summary": consent.consent_summary(),
        "csrf_token": context.get("csrf_token"),
    }
