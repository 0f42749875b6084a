"""Starting, cancelling and reaping research tasks (the business rules; views and tasks are thin)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agent.engine.events import TaskCreated
from channels_app.access import can
from channels_app.models import Channel, ChatLog
from channels_app.roles import RESEARCH_CANCEL_ANY
from research.models import ResearchTask
from uedu_dr import jobs
from uedu_dr.errors import ServiceError

from . import admission, ending, events, plan_review, settlement, start_limits, transitions
from .context import clean_context
from .membership import check_member
from .questions import question_language, validate_question

log = logging.getLogger(__name__)


def check_can_research(user, channel: Channel) -> None:
    """Members of a channel with Deep Research switched on may start one (admins anywhere)."""
    check_member(user, channel)
    if not channel.deep_research_enabled:
        raise ServiceError(
            "deep_research_disabled", _("Deep Research is not enabled in this channel."), status=403
        )


def task_start(
    *,
    user,
    channel: Channel,
    question: str,
    trigger_mode: str = "forced",
    queue: bool = True,
    context: dict | None = None,
    follow_up_of: ResearchTask | None = None,
) -> tuple[ResearchTask, ChatLog]:
    """Create the task and its request row, then queue it once the rows are committed.

    `queue=False` leaves it queued for a caller that runs it in-process (the evaluation).
    `follow_up_of`: the research it follows up on, as services.follow_up.attachable allowed it."""
    question = validate_question(question)
    if trigger_mode not in ResearchTask.TriggerMode.values:
        raise ServiceError("bad_trigger_mode", _("trigger_mode must be 'forced' or 'auto'."))
    check_can_research(user, channel)
    context = clean_context(context)
    # Refused before anything is written when the platform cannot take it now (a refusal
    # charges nothing); the slot is held until the rows are committed.
    with admission.admitted(), transaction.atomic():
        task = ResearchTask.objects.create(
            user=user,
            channel=channel,
            user_question=question,
            trigger_mode=trigger_mode,
            language=question_language(question),
            context_json=context,
            plan_review_mode=channel.plan_review,
            follow_up_of=follow_up_of,
            web_tools=channel.web_tools_enabled,
        )
        request_log = ChatLog.objects.create(
            channel=channel,
            user=user,
            kind=ChatLog.Kind.REQUEST,
            type=ChatLog.Type.DEEP_RESEARCH,
            content=question,
            deep_research_task=task,
        )
        events.record_event(
            task.pk,
            task.task_uuid,
            TaskCreated(
                question=question,
                trigger_mode=trigger_mode,
                channel_id=channel.pk,
                request_log_id=request_log.pk,
            ),
        )
        # Quota charge and cost reservation, last: they take the user's and the platform's locks,
        # held to the commit, which serialise starts (the platform's lock every start of every
        # process). Raises before anything is kept. The per-user limits first: they take the user's
        # lock only.
        start_limits.check_start(user, task)  # researches under way, cancels refunded (429)
        settlement.reserve(task)
        if queue:
            transaction.on_commit(lambda: enqueue(task.pk))
    return task, request_log


def enqueue(task_id: int) -> None:
    try:
        jobs.send(jobs.EXECUTE_RESEARCH, task_id)
    except Exception as exc:  # broker down: fail now (and refund) instead of leaving it queued
        log.error("could not queue research task %s: %s", task_id, exc)
        fail_task(
            task_id,
            "The research could not be queued (the task broker is unavailable). Please try again.",
            from_phase=ResearchTask.Phase.QUEUED,
        )


def task_cancel(*, user, task: ResearchTask) -> ResearchTask:
    """The owner (or a platform admin) cancels. A task no worker runs (queued, or waiting for its
    plan review) ends at once; a running one is flagged and the engine stops at its next check,
    keeping the steps already done, and its runner ends it."""
    if task.user_id != user.pk and not can(user, RESEARCH_CANCEL_ANY):
        raise ServiceError(
            "not_owner", _("Only the person who started this research can cancel it."), status=403
        )
    if task.phase == ResearchTask.Phase.TERMINAL:
        raise ServiceError("already_finished", _("This research has already finished."), status=409)
    # Each end below is a compare-and-set from its phase: at most one of them moves the task, and
    # a continuation claimed meanwhile makes it a running task, flagged like any other.
    ended = any(
        ending.end_task(task, ending.cancelled(), from_phase=phase)
        for phase in (ResearchTask.Phase.QUEUED, ResearchTask.Phase.AWAITING_PLAN_REVIEW)
    )
    if not ended:
        transitions.request_cancel(task.pk)
    task.refresh_from_db()
    return task


def fail_task(task_id: int, error: str, *, from_phase: str) -> bool:
    """End a task as failed if it is still in `from_phase` (a ResearchTask.Phase): the reaper
    and enqueue failures."""
    task = ResearchTask.objects.select_related("user").filter(pk=task_id).first()
    if task is None:  # deleted meanwhile (with its channel)
        return False
    return ending.end_task(task, ending.platform_failure(task, error), from_phase=from_phase)


def reap_stale_tasks() -> dict:
    """Fail running tasks whose worker stopped beating, and queued tasks nobody picked up.

    A task waiting for its plan review has no worker and so no heartbeat: it is not stale. Once
    its continuation is due (confirmed, or past its deadline) and has not started for
    UEDU_DR_STALE_AFTER_SECONDS, its message was lost (broker restarted): it is sent again; if it
    still has not started after UEDU_DR_QUEUED_TIMEOUT_SECONDS, the task fails like a queued
    one nobody picked up. A continuation that started beats like any run."""
    now = timezone.now()
    stale = transitions.stale_running(now - timedelta(seconds=settings.UEDU_DR_STALE_AFTER_SECONDS))
    stuck = transitions.stuck_queued(now - timedelta(seconds=settings.UEDU_DR_QUEUED_TIMEOUT_SECONDS))
    reaped = {"running": 0, "queued": 0, "continued": 0}
    for task_id in stale:
        message = _(
            "The research stopped: its worker stopped responding (no heartbeat for %(s)d seconds)."
        ) % {"s": settings.UEDU_DR_STALE_AFTER_SECONDS}
        reaped["running"] += fail_task(task_id, message, from_phase=ResearchTask.Phase.RUNNING)
    for task_id in stuck:
        message = _("The research never started: no worker picked it up in time.")
        reaped["queued"] += fail_task(task_id, message, from_phase=ResearchTask.Phase.QUEUED)
    for task_id in transitions.continuations_due(
        now - timedelta(seconds=settings.UEDU_DR_QUEUED_TIMEOUT_SECONDS)
    ):
        message = _("The research never continued after its plan review: no worker picked it up in time.")
        reaped["running"] += fail_task(task_id, message, from_phase=ResearchTask.Phase.AWAITING_PLAN_REVIEW)
    for task_id in transitions.continuations_due(
        now - timedelta(seconds=settings.UEDU_DR_STALE_AFTER_SECONDS)
    ):
        plan_review.enqueue_continuation(task_id)
        reaped["continued"] += 1
    if reaped["running"] or reaped["queued"]:
        log.warning("reaper failed %s", reaped)
    return reaped
