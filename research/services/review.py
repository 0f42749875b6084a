"""Human review of tasks whose conflicts stayed unresolved: whoever holds research.review in the
channel (its owner, its Super TAs with an NDA on file, platform admins) sees them in a review queue
and can add a note that the result page shows, or decide the conflicts
(services.conflict_decisions); either takes the research out of the queue."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from channels_app.access import can, permitted_q
from channels_app.roles import RESEARCH_REVIEW
from research.models import ResearchTask
from uedu_dr.errors import ServiceError

MAX_NOTE = 4000


def reviewer_channels_filter(user) -> Q:
    """Tasks in the channels whose research the user reviews."""
    return permitted_q(user, RESEARCH_REVIEW)


def can_review(user, task: ResearchTask) -> bool:
    return can(user, RESEARCH_REVIEW, task.channel_id)


def reviews_any_channel(user) -> bool:
    """Whether the user reviews anything at all: decides whether the review queue and feedback
    pages exist for them."""
    return can(user, RESEARCH_REVIEW)


def awaiting_review_q() -> Q:
    """Researches whose sources disagree and that nobody has reviewed yet: no reviewer note, and
    not every unresolved conflict decided (a decision is a review: services.conflict_decisions)."""
    return Q(needs_review=True, reviewed_at__isnull=True, conflicts_decided_at__isnull=True)


def review_queue(user, *, include_reviewed: bool = False) -> QuerySet[ResearchTask]:
    tasks = ResearchTask.objects.filter(needs_review=True).select_related("channel", "user", "reviewed_by")
    tasks = tasks.filter(reviewer_channels_filter(user))
    if not include_reviewed:
        tasks = tasks.filter(awaiting_review_q())
    return tasks.order_by("-created_at")


def add_review_note(*, task: ResearchTask, user, note: str) -> ResearchTask:
    if not can_review(user, task):
        raise ServiceError(
            "not_reviewer",
            _("Only the channel's teacher and Super TAs can review this research."),
            status=403,
        )
    note = (note or "").strip()
    if not note:
        raise ServiceError("empty_note", _("Please write a note."))
    if len(note) > MAX_NOTE:
        raise ServiceError(
            "note_too_long", _("The note is too long (at most %(n)d characters).") % {"n": MAX_NOTE}
        )
    ResearchTask.objects.filter(pk=task.pk).update(
        review_note=note, reviewed_by=user, reviewed_at=timezone.now()
    )
    task.refresh_from_db()
    return task
