"""Human review of tasks whose conflicts stayed unresolved: the channel's teacher and Super TAs
with an NDA on file see them in a review queue and can add a note that the result page shows, or
decide the conflicts (services.conflict_decisions); either takes the research out of the queue."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from channels_app import access
from channels_app.roles import is_platform_admin
from research.models import ResearchTask
from uedu_dr.errors import ServiceError

MAX_NOTE = 4000


def reviewer_channels_filter(user) -> Q:
    # The reviewers are the content readers: owner, or Super TA with an NDA on file.
    return access.content_reader_q(user)


def can_review(user, task: ResearchTask) -> bool:
    if not user.is_authenticated:
        return False
    if is_platform_admin(user):
        return True
    return ResearchTask.objects.filter(reviewer_channels_filter(user), pk=task.pk).exists()


def reviews_any_channel(user) -> bool:
    """Whether the user reviews anything at all: owns a channel, is a Super TA with an NDA somewhere, or is a
    platform admin. Decides whether the review queue and feedback pages exist for them."""
    return access.reads_content_anywhere(user)


def awaiting_review_q() -> Q:
    """Researches whose sources disagree and that nobody has reviewed yet: no reviewer note, and
    not every unresolved conflict decided (a decision is a review: services.conflict_decisions)."""
    return Q(needs_review=True, reviewed_at__isnull=True, conflicts_decided_at__isnull=True)


def review_queue(user, *, include_reviewed: bool = False) -> QuerySet[ResearchTask]:
    tasks = ResearchTask.objects.filter(needs_review=True).select_related("channel", "user", "reviewed_by")
    if not is_platform_admin(user):
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
