"""The result page's "ask a follow-up" link (templates/research/_follow_up.html)."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.http import urlencode

from channels_app.selectors import is_member
from research.models import ResearchTask

register = template.Library()


@register.simple_tag(takes_context=True)
def follow_up_url(context, task: ResearchTask) -> str:
    """The channel page with this research attached to its composer, for a reader who may chat in
    the channel (a member) once the research has completed; "" otherwise. The chat page checks the
    attachment again (research.services.follow_up.attachable)."""
    user = context["request"].user
    if task.status != ResearchTask.Status.COMPLETED or task.is_replay or not is_member(user, task.channel):
        return ""
    return reverse("channel_chat", args=[task.channel.slug]) + "?" + urlencode({"follow_up": task.task_uuid})
