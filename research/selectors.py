"""Reads about research tasks, with the visibility rule in one place.

Who may see a task: its author, and whoever holds research.read_results in its channel (the role
table, channels_app.roles: the channel's owner, its Super TAs with an NDA on file, platform
admins). Nobody else, on every endpoint, page and socket; everyone else gets 404."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.db.models import Case, Count, DecimalField, F, Q, QuerySet, Subquery, Sum, Value, When
from django.http import Http404
from django.utils import timezone

from channels_app.access import can, channels_where, permitted_q
from channels_app.models import Channel, ChatLog
from channels_app.roles import ANALYTICS_READ, RESEARCH_READ_RESULTS
from quotas.models import CostReservation
from quotas.services import cost_status, quota_status
from research.models import AnswerFeedback, ResearchTask
from research.services.settlement import worst_case_cost
from uedu_dr.errors import ServiceError


def _request_log_rows(task_id: int) -> QuerySet[ChatLog]:
    """The chat-log row that asked a research's question, first (none for a task stored without one)."""
    return ChatLog.objects.filter(deep_research_task_id=task_id, kind=ChatLog.Kind.REQUEST).order_by("pk")


def request_log_id(task_id: int) -> int | None:
    return _request_log_rows(task_id).values_list("pk", flat=True).first()


def question_row(task_id: int) -> ChatLog | None:
    """The row that asked a research's question, with its Bloom classification (the result
    page's badge): the level is a code, rendered by the page in the reader's language."""
    return _request_log_rows(task_id).only("pk", "bloom_level", "bloom_confidence").first()


def request_log_id_subquery(task_id: int) -> Subquery:
    """request_log_id as a subquery, for a statement that needs the id without a lookup of its own
    (NULL for a task stored without a question row)."""
    return Subquery(_request_log_rows(task_id).values("pk")[:1])


def visible_tasks(user) -> QuerySet[ResearchTask]:
    if not user.is_authenticated:
        return ResearchTask.objects.none()
    return ResearchTask.objects.filter(Q(user=user) | permitted_q(user, RESEARCH_READ_RESULTS))


def can_view_task(user, task: ResearchTask) -> bool:
    return visible_tasks(user).filter(pk=task.pk).exists()


def get_visible_task(user, task_uuid) -> ResearchTask:
    """The task, or a 404 that says nothing about whether it exists."""
    try:
        return visible_tasks(user).select_related("channel", "user").get(task_uuid=task_uuid)
    except (ResearchTask.DoesNotExist, ValueError, TypeError):
        raise ServiceError("not_found", "No such research task.", status=404) from None


def quota_view(user) -> dict:
    """The user's research quota as the API and the chat page's quota line show it: the rolling
    window's figures, and whether the platform's daily cost cap would refuse a start now."""
    status = quota_status(user).as_dict()
    cost = cost_status()
    status["platform_cap_reached"] = cost.committed + worst_case_cost() > cost.cap
    return status


def user_tasks(
    user, *, status: str | None = None, search: str = "", limit: int | None = 20
) -> QuerySet[ResearchTask]:
    """The user's own researches (never a replay), newest first; `search` keeps those whose question contains it."""
    tasks = (
        ResearchTask.objects.filter(user=user, is_replay=False)
        .select_related("channel")
        .order_by("-created_at")
    )
    if status:
        tasks = tasks.filter(status=status)
    if search.strip():
        tasks = tasks.filter(user_question__icontains=search.strip())
    return tasks[:limit]


@dataclass(frozen=True)
class FeedbackGiven:
    """What a reader has already said about one answer, so the page shows it after a reload."""

    useful: bool | None = None  # their rating, if they gave one
    reported: bool = False  # a problem reported with the whole answer
    citations: frozenset[int] = frozenset()  # citations reported as "this source does not say this"


def feedback_given(user, task: ResearchTask) -> FeedbackGiven:
    if not user.is_authenticated:
        return FeedbackGiven()
    read = getattr(task, _FEEDBACK_READ, None)
    if read is not None and read[0] == user.pk:
        rows = read[1]
    else:
        rows = (
            AnswerFeedback.objects.filter(task=task, user=user)
            .order_by("created_at")
            .values_list("useful", "reason", "citation_number")
        )
    useful, reported, citations = None, False, set()
    for rated, reason, number in rows:
        useful = rated if rated is not None else useful
        if reason == AnswerFeedback.Reason.SOURCE_DOES_NOT_SAY and number is not None:
            citations.add(number)
        elif reason and rated is None:  # a "not useful" with its reason is the rating, not a report
            reported = True
    return FeedbackGiven(useful=useful, reported=reported, citations=frozenset(citations))


# Where read_feedback_given leaves a reader's feedback on a task: (reader's id, rows).
_FEEDBACK_READ = "_feedback_given_read"


def read_feedback_given(user, tasks) -> None:
    """Read the reader's feedback on many answers at once (the channel page shows up to a page of
    them), so that feedback_given on each costs no query of its own."""
    tasks = [task for task in tasks if task is not None]
    if not tasks or not user.is_authenticated:
        return
    rows: dict[int, list] = {task.pk: [] for task in tasks}
    for task_id, *row in (
        AnswerFeedback.objects.filter(task__in=tasks, user=user)
        .order_by("created_at")
        .values_list("task_id", "useful", "reason", "citation_number")
    ):
        rows[task_id].append(tuple(row))
    for task in tasks:
        setattr(task, _FEEDBACK_READ, (user.pk, rows[task.pk]))


def platform_dashboard(day=None) -> dict:
    """The platform admins' view of today's Deep Research: cost against the cap (the same figures
    the cap and the alert use), tasks by status, and who spent the most."""
    status = cost_status(day)
    start = timezone.make_aware(datetime.combine(status.day, time.min))
    tasks = ResearchTask.objects.filter(created_at__gte=start, created_at__lt=start + timedelta(days=1))
    counts = dict(tasks.order_by().values_list("status").annotate(n=Count("pk")))
    by_status = [
        {"status": s, "label": label, "count": counts.get(s, 0)} for s, label in ResearchTask.Status.choices
    ]
    money = DecimalField(max_digits=12, decimal_places=6)
    top_users = (
        CostReservation.objects.filter(day=status.day)
        .values("user__username")
        .annotate(
            spent=Sum(Case(When(settled=True, then=F("spent_usd")), default=Value(0), output_field=money)),
            reserved=Sum(
                Case(When(settled=False, then=F("reserved_usd")), default=Value(0), output_field=money)
            ),
            runs=Count("pk"),
        )
        .annotate(committed=F("spent") + F("reserved"))
        .order_by("-committed", "user__username")[:10]
    )
    labels = dict(CostReservation.Kind.choices)
    by_kind = [
        {"kind": kind, "label": labels.get(kind, kind), "usd": status.by_kind.get(kind, 0)} for kind in labels
    ]
    return {
        "cost": status,
        "cost_by_kind": by_kind,
        "committed": status.committed,
        "cap_used_percent": round(float(status.committed / status.cap * 100), 1) if status.cap else None,
        "over_alert": status.committed > status.alert_threshold,
        "tasks_by_status": by_status,
        "tasks_today": sum(counts.values()),
        "running_now": ResearchTask.objects.filter(status=ResearchTask.Status.RUNNING).count(),
        "top_users": list(top_users),
    }


def dashboard_channel(user, slug: str):
    """A channel whose dashboard the user may open (analytics.read); 404 otherwise, so an outsider
    cannot tell whether the channel exists."""
    channel = Channel.objects.filter(slug=slug).first()
    if channel is None or not can(user, ANALYTICS_READ, channel):
        raise Http404
    return channel


def dashboard_channels(user) -> QuerySet[Channel]:
    """The channels whose dashboards the user may open (for links; dashboard_channel decides)."""
    return channels_where(user, ANALYTICS_READ).order_by("name")


def passages_by_number(task: ResearchTask) -> dict[int, str]:
    """The passage each citation number of a finished task points at (its stored source text)."""
    text_by_source: dict[int, str] = {}
    for step in task.steps.exclude(result_full=None):
        for source in (step.result_full or {}).get("sources", []):
            if "id" in source:
                text_by_source[source["id"]] = source.get("text") or source.get("snippet") or ""
    return {
        c["number"]: text_by_source.get(c["source_id"]) or c.get("snippet", "")
        for c in task.citations_json or []
    }


def still_sees(user, task_id: int, session_key: str | None = None) -> bool:
    """An open stream's re-check (WebSocket and SSE). The user object the stream started with
    is stale by then, so the user is read again: deactivated, gone, or (with a session) logged out
    since — the session no longer exists — and the stream ends like one whose reader lost the
    right to see the task."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import get_user_model

    fresh = get_user_model().objects.filter(pk=user.pk, is_active=True).first()
    if fresh is None:
        return False
    if session_key and not import_module(settings.SESSION_ENGINE).SessionStore().exists(session_key):
        return False
    return visible_tasks(fresh).filter(pk=task_id).exists()
