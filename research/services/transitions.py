"""Every change of a research task's phase, and the only module that writes `status`.

    move                 from                   to                      who asks
    claim                queued                 running                 a worker (execute_task)
    await_plan_review    running                awaiting_plan_review    the first part, once planned
    confirm_plan         awaiting_plan_review   (stays)                 the student's submit
    claim_continuation   awaiting_plan_review   running                 submit, deadline timer, reaper
    request_cancel       running                (flag only)             the owner's cancel; the engine stops
    end                  queued                 cancelled               the owner's cancel
                         queued                 failed                  enqueue (broker down), the reaper
                         awaiting_plan_review   cancelled               the owner's cancel
                         awaiting_plan_review   failed                  the reaper (continuation never ran)
                         running                completed|failed|cancelled  the runner
                         running                failed                  the reaper (worker stopped beating)

Every `end` is made by research.services.ending.end_task, which writes what follows it.

The phases (`ResearchTask.phase`, `ResearchTask.in_phase`) are the statuses with "running" split
in two: a task waiting for its plan review is stored as running with a deadline and no
continuation (research.services.plan_review says why no worker waits meanwhile).

Every function here is one conditional UPDATE (a compare-and-set): it names the phase the task
must still be in, and returns whether it moved the task. Several callers race for most of them
(a duplicate delivery, the student's cancel, the deadline's timer, the reaper, the runner), and
exactly one of them is let through; the caller that was, and only it, does what follows (events,
settlement, the answer in the chat log). Callers run these inside their own transaction when
what follows must commit with the move.

Nothing here emits events or settles cost: the services that call these do (ending, runner,
lifecycle, plan_review), so this module stays the short list of moves and their guards."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from research.models import ResearchTask

Status = ResearchTask.Status
Phase = ResearchTask.Phase


def claim(task_id: int, *, model_name: str) -> bool:
    """queued → running: a worker takes the task. A message delivered twice runs once."""
    now = timezone.now()
    return bool(
        ResearchTask.objects.filter(ResearchTask.in_phase(Phase.QUEUED), pk=task_id).update(
            status=Status.RUNNING, started_at=now, last_heartbeat_at=now, model_name=model_name
        )
    )


def await_plan_review(task_id: int, *, deadline: datetime, plan: dict, meter: dict) -> bool:
    """running → awaiting_plan_review: the first part planned and stops; `meter` (the usage
    columns) records what planning used. Refused when a cancel was asked for meanwhile, or the
    task already had its review."""
    return bool(
        ResearchTask.objects.filter(
            ResearchTask.in_phase(Phase.RUNNING),
            pk=task_id,
            cancel_requested=False,
            plan_review_deadline__isnull=True,
        ).update(plan_json=plan, plan_review_deadline=deadline, **meter)
    )


def confirm_plan(task_id: int, edits: dict) -> bool:
    """The student submits the plan (edited or not) while it waits; the task stays waiting until
    its continuation is claimed. Once only, and never after a continuation was claimed."""
    return bool(
        ResearchTask.objects.filter(
            ResearchTask.in_phase(Phase.AWAITING_PLAN_REVIEW), pk=task_id, plan_confirmed_at__isnull=True
        ).update(plan_edits_json=edits, plan_confirmed_at=timezone.now())
    )


def claim_continuation(task_id: int) -> bool:
    """awaiting_plan_review → running: exactly one of the student's submit, the deadline's timer
    and the reaper starts the second part, once the plan is confirmed or its deadline passed. A
    timeout is recorded as such (call inside a transaction: the two writes belong together)."""
    now = timezone.now()
    claimed = ResearchTask.objects.filter(
        ResearchTask.in_phase(Phase.AWAITING_PLAN_REVIEW),
        Q(plan_confirmed_at__isnull=False) | Q(plan_review_deadline__lte=now),
        pk=task_id,
    ).update(plan_continued_at=now, last_heartbeat_at=now)
    if claimed:
        # Nobody answered: proceed with the plan as it is, and record that it timed out. (A
        # submit can no longer succeed: it needs plan_continued_at unset.)
        ResearchTask.objects.filter(pk=task_id, plan_confirmed_at__isnull=True).update(
            plan_edits_json={"timed_out": True}, plan_confirmed_at=now
        )
    return bool(claimed)


def request_cancel(task_id: int) -> bool:
    """A running task is flagged; its engine stops at its next check and the runner finishes it."""
    return bool(ResearchTask.objects.filter(pk=task_id, status=Status.RUNNING).update(cancel_requested=True))


def end(task_id: int, stored: dict, *, from_phase: str) -> bool:
    """→ completed, failed or cancelled (`stored`: the status and the columns stored with it), if
    the task is still in `from_phase`. Of the callers racing to end a task (a cancel, the reaper,
    the runner, a duplicate run) one is let through; a task never ends twice."""
    assert stored["status"] in ResearchTask.TERMINAL, stored["status"]
    assert from_phase != Phase.TERMINAL, from_phase
    return bool(ResearchTask.objects.filter(ResearchTask.in_phase(from_phase), pk=task_id).update(**stored))


# What the reaper looks at: reads, the moves above decide.


def stale_running(before: datetime) -> list[int]:
    """Running tasks (not waiting for a review: those have no worker to beat) whose last
    heartbeat is older than `before`."""
    return list(
        ResearchTask.objects.filter(
            ResearchTask.in_phase(Phase.RUNNING), last_heartbeat_at__lt=before
        ).values_list("pk", flat=True)
    )


def stuck_queued(before: datetime) -> list[int]:
    """Queued tasks created before `before`: nobody picked them up."""
    return list(
        ResearchTask.objects.filter(ResearchTask.in_phase(Phase.QUEUED), created_at__lt=before).values_list(
            "pk", flat=True
        )
    )


def continuations_due(before: datetime) -> list[int]:
    """Waiting tasks whose continuation was due (confirmed, or deadline passed) before `before`."""
    return list(
        ResearchTask.objects.filter(ResearchTask.in_phase(Phase.AWAITING_PLAN_REVIEW))
        .filter(Q(plan_confirmed_at__lt=before) | Q(plan_review_deadline__lt=before))
        .values_list("pk", flat=True)
    )
