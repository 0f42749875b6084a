"""Plan review: after `plan_complete` the student may edit the sub-questions (channel setting:
off / optional / required), until a deadline; the research then goes on with the plan as it
stands. Edits are stored.

No worker waits for the student. The run is two Celery tasks: the first plans and returns
(`await_review`), the second (`research.tasks.continue_research_task`) researches the reviewed
plan. Three callers may start the second — the student's submit, the timer set for the deadline,
and the reaper when both were lost — and `claim_continuation` lets exactly one of them through.
Every write that moves the task is a compare-and-set in research.services.transitions."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agent.engine.events import StatusChange
from research.models import ResearchTask
from uedu_dr import jobs
from uedu_dr.errors import ServiceError

from . import transitions

log = logging.getLogger(__name__)

MAX_SUB_QUESTIONS = 6
MAX_CHARS = 500


def wait_seconds(mode: str) -> int:
    return {
        "optional": settings.UEDU_DR_PLAN_REVIEW_OPTIONAL_SECONDS,
        "required": settings.UEDU_DR_PLAN_REVIEW_SECONDS,
    }.get(mode, 0)


def wanted(task: ResearchTask) -> bool:
    """Whether this task's run stops after planning for the student's review."""
    return task.plan_review_mode in ("optional", "required") and task.plan_review_deadline is None


def await_review(task: ResearchTask, plan: dict, usage, sink, *, duration: float) -> bool:
    """End of the first part: store the proposed plan and what planning used, tell the viewers
    the plan waits for review, and set the timer that continues it at the deadline.

    Returns False (nothing stored) when the task was cancelled or ended meanwhile."""
    seconds = wait_seconds(task.plan_review_mode)
    deadline = timezone.now() + timedelta(seconds=seconds)
    with transaction.atomic():
        updated = transitions.await_plan_review(
            task.pk,
            deadline=deadline,
            plan=plan,
            # What planning used, carried into the second part's meter (and shown meanwhile).
            meter=dict(
                tokens_used=usage.total_tokens,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                cost_usd=round(usage.cost_usd, 6),
                duration_seconds=round(duration, 3),
            ),
        )
        if not updated:
            return False
        sink.emit(
            StatusChange(
                from_="running",
                to="awaiting_plan_review",
                mode=task.plan_review_mode,
                deadline=deadline.isoformat(),
                sub_questions=[sq["question"] for sq in plan["sub_questions"]],
            )
        )
        task_id = task.pk
        transaction.on_commit(lambda: enqueue_continuation(task_id, countdown=seconds))
    return True


def enqueue_continuation(task_id: int, *, countdown: float = 0) -> None:
    try:
        jobs.send(jobs.CONTINUE_RESEARCH, task_id, countdown=countdown)
    except Exception as exc:  # broker away: the reaper sends it again once the broker is back
        log.error("could not queue the continuation of research task %s: %s", task_id, exc)


def claim_continuation(task_id: int) -> bool:
    """Let exactly one caller start the second part: the task must still be waiting, and either
    confirmed by the student or past its deadline. A timeout is recorded as such."""
    with transaction.atomic():
        return transitions.claim_continuation(task_id)


def reviewed_plan(task: ResearchTask) -> tuple[dict, StatusChange]:
    """Start of the second part: the plan as the student left it, and the event telling the
    viewers the research goes on with it."""
    plan = task.plan_json
    edited = _apply(plan, task.plan_edits_json or {})
    resumed = StatusChange(
        from_="awaiting_plan_review",
        to="running",
        plan_edited=edited["sub_questions"] != plan["sub_questions"],
        timed_out=bool((task.plan_edits_json or {}).get("timed_out")),
        sub_questions=[sq["question"] for sq in edited["sub_questions"]],
    )
    return edited, resumed


def _apply(plan: dict, edits: dict) -> dict:
    questions = edits.get("sub_questions")
    if not questions:
        return plan
    tools = {sq["question"]: sq["suggested_tools"] for sq in plan["sub_questions"]}
    return dict(plan, sub_questions=[{"question": q, "suggested_tools": tools.get(q, [])} for q in questions])


def submit(*, task: ResearchTask, user, sub_questions: list[str] | None) -> ResearchTask:
    """The owner continues the run, with edited sub-questions or (None) the plan as proposed."""
    if task.user_id != user.pk:
        raise ServiceError(
            "not_owner", _("Only the person who started this research can review its plan."), status=403
        )
    edits = {}
    if sub_questions is not None:
        cleaned = [q.strip() for q in sub_questions if isinstance(q, str) and q.strip()]
        if not 1 <= len(cleaned) <= MAX_SUB_QUESTIONS:
            raise ServiceError(
                "invalid_plan",
                _("A plan needs between 1 and %(n)d sub-questions.") % {"n": MAX_SUB_QUESTIONS},
            )
        if any(len(q) > MAX_CHARS for q in cleaned):
            raise ServiceError(
                "invalid_plan", _("Each sub-question may have at most %(n)d characters.") % {"n": MAX_CHARS}
            )
        original = [sq["question"] for sq in (task.plan_json or {}).get("sub_questions", [])]
        edits = {
            "sub_questions": cleaned,
            "original": original,
            "by": user.username,
            "at": timezone.now().isoformat(),
        }
    with transaction.atomic():
        updated = transitions.confirm_plan(task.pk, edits)
        if updated:
            transaction.on_commit(lambda: enqueue_continuation(task.pk))
    if not updated:
        raise ServiceError(
            "not_awaiting_review", _("This research is not waiting for a plan review."), status=409
        )
    task.refresh_from_db()
    return task
