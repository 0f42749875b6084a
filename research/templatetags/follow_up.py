"""The result page's "ask a follow-up" link (templates/research/_follow_up.html)."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.http import urlencode

from channels_app.access import can
from channels_app.roles import CHANNEL_USE
from research.models import ResearchTask

register = template.Library()


@register.simple_tag(takes_context=True)
def follow_up_url(context, task: ResearchTask) -> str:
    """The channel page with this research attached to its composer, for a reader who may use the
    channel (channel.use: its chat) once the research has completed; "" otherwise. The chat page checks the
    attachment again (research.services.follow_up.attachable)."""
    user = context["request"].user
    if (
        task.status != ResearchTask.Status.COMPLETED
        or task.is_replay
        or not can(user, CHANNEL_USE, task.channel)
    ):
        return ""
    return reverse("channel_chat", args=[task.channel.slug]) + "?" + urlencode({"follow_up": task.task_uuid})
