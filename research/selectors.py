"""Reads about research tasks, with the visibility rule in one place.

Who may see a task: its owner, the channel's owner (teacher), a Super TA of that channel, and
platform admins. Nobody else, on every endpoint, page and socket; everyone else gets 404."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

from channels_app.models import Membership
from research.models import ResearchTask
from uedu_dr.errors import ServiceError


def visible_tasks(user) -> QuerySet[ResearchTask]:
    if not user.is_authenticated:
        return ResearchTask.objects.none()
    if user.is_superuser:
        return ResearchTask.objects.all()
    super_ta = Membership.objects.filter(channel=OuterRef("channel"), user=user, role=Membership.Role.SUPER_TA)
    return ResearchTask.objects.filter(Q(user=user) | Q(channel__owner=user) | Exists(super_ta))


def can_view_task(user, task: ResearchTask) -> bool:
    return visible_tasks(user).filter(pk=task.pk).exists()


def get_visible_task(user, task_uuid) -> ResearchTask:
    """The task, or a 404 that says nothing about whether it exists."""
    try:
        return visible_tasks(user).select_related("channel", "user").get(task_uuid=task_uuid)
    except (ResearchTask.DoesNotExist, ValueError, TypeError):
        raise ServiceError("not_found", "No such research task.", status=404) from None


def user_tasks(user, *, status: str | None = None, limit: int = 20) -> QuerySet[ResearchTask]:
    tasks = ResearchTask.objects.filter(user=user).select_related("channel").order_by("-created_at")
    if status:
        tasks = tasks.filter(status=status)
    return tasks[:limit]
