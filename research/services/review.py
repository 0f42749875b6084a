"""Human review of tasks whose conflicts stayed unresolved: the channel's teacher and Super TAs
see them in a review queue and can add a note that the result page shows."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from channels_app.models import Channel, Membership
from research.models import ResearchTask
from uedu_dr.errors import ServiceError

MAX_NOTE = 4000


def reviewer_channels_filter(user) -> Q:
    super_ta = Membership.objects.filter(channel=OuterRef("channel"), user=user, role=Membership.Role.SUPER_TA)
    return Q(channel__owner=user) | Q(Exists(super_ta))


def can_review(user, task: ResearchTask) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return ResearchTask.objects.filter(reviewer_channels_filter(user), pk=task.pk).exists()


def reviews_any_channel(user) -> bool:
    """Whether the user reviews anything at all: owns a channel, is a Super TA somewhere, or is a
    platform admin. Decides whether the review queue and feedback pages exist for them."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return Channel.objects.filter(owner=user).exists() or Membership.objects.filter(user=user, role=Membership.Role.SUPER_TA).exists()


def review_queue(user, *, include_reviewed: bool = False) -> QuerySet[ResearchTask]:
    tasks = ResearchTask.objects.filter(needs_review=True).select_related("channel", "user", "reviewed_by")
    if not user.is_superuser:
        tasks = tasks.filter(reviewer_channels_filter(user))
    if not include_reviewed:
        tasks = tasks.filter(reviewed_at__isnull=True)
    return tasks.order_by("-created_at")


def add_review_note(*, task: ResearchTask, user, note: str) -> ResearchTask:
    if not can_review(user, task):
        raise ServiceError("not_reviewer", _("Only the channel's teacher and Super TAs can review this research."), status=403)
    note = (note or "").strip()
    if not note:
        raise ServiceError("empty_note", _("Please write a note."))
    if len(note) > MAX_NOTE:
        raise ServiceError("note_too_long", _("The note is too long (at most %(n)d characters).") % {"n": MAX_NOTE})
    ResearchTask.objects.filter(pk=task.pk).update(review_note=note, reviewed_by=user, reviewed_at=timezone.now())
    task.refresh_from_db()
    return task
