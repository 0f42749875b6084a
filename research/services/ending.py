"""How a research task ends: `end_task(task, outcome)`, the one action behind every end.

Completion, failure and cancellation, at every stage (queued, waiting for the plan review,
running) and by every caller (the runner, the owner's cancel, the reaper, a broker that refused
the job), go through it. In one transaction it moves the task (a compare-and-set from the phase
the caller names: research.services.transitions.end), stores the outcome's columns, closes the
steps the end interrupted, stores the ledger and the metrics, writes the reply in the chat log,
records the source verdicts, settles the quota and the cost, and stores the final event, last.
Once that commits, the e-mail (research.services.notifications) and the material coverage
(research.services.material_coverage) follow.

So every end leaves the same rows: status, finished_at and stop_reason on the task, one reply in
the chat log (not for a replay), exactly one final event, the quota and cost settlement, the
metrics row, and the notification when the owner asked for it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import models, transaction
from django.utils import timezone

from agent.engine import ResearchResult
from agent.engine.events import TERMINAL
from agent.engine.llm import Usage
from agent.engine.vocabulary import OUTCOMES, STOP_REASONS
from research.models import ResearchStep, ResearchTask

from . import credibility, events, material_coverage, notifications, quality, settlement, transitions
from .replies import answer_text, write_response_log

Status = ResearchTask.Status
Phase = ResearchTask.Phase

# The task's status for each outcome that ends it ("planned" does not: the task waits for its review).
STATUS_OF = {
    OUTCOMES.completed: Status.COMPLETED,
    OUTCOMES.failed: Status.FAILED,
    OUTCOMES.cancelled: Status.CANCELLED,
}


@dataclass(frozen=True)
class Outcome:
    """How a task ended and what to store with it.

    `outcome`: one of OUTCOMES that end a task; `stop_reason`: one of STOP_REASONS. `result`: what
    the engine returned, when a run of it ended the task (its ledger, verdicts and report are
    stored). `columns`: what was measured (usage, cost, duration) and produced (the report's
    columns); a column left out keeps what the task row holds. `steps_closed`: the caller knows no
    step of the task is still marked running."""

    outcome: str
    stop_reason: str
    error: str = ""
    result: ResearchResult | None = None
    columns: dict = field(default_factory=dict)
    steps_closed: bool = False

    def __post_init__(self):
        if self.outcome not in STATUS_OF:
            raise ValueError(f"{self.outcome!r} does not end a task")
        STOP_REASONS.check(self.stop_reason)

    @property
    def status(self) -> str:
        return STATUS_OF[self.outcome]


def cancelled() -> Outcome:
    """The owner's cancel of a task no worker runs (queued, or waiting for its plan review): what
    it used so far (the planning) is already stored on the row."""
    return Outcome(OUTCOMES.cancelled, STOP_REASONS.cancelled)


def platform_failure(task: ResearchTask, error: str) -> Outcome:
    """The platform lost the task (its worker died, or nobody ran it). A task that had started
    is billed what its transcript records (its calls were made and paid for), for the time it
    ran (not counting a wait for its plan review)."""
    columns = {}
    if task.started_at:
        columns = {"duration_seconds": _working_seconds(task), "cost_usd": settlement.transcript_cost(task)}
    return Outcome(OUTCOMES.failed, STOP_REASONS.platform_failure, error=error, columns=columns)


def _working_seconds(task: ResearchTask) -> float:
    """Time the research ran until now, leaving out a wait for its plan review (no worker ran it then)."""
    now = timezone.now()
    if task.plan_continued_at:
        return round((task.duration_seconds or 0.0) + (now - task.plan_continued_at).total_seconds(), 3)
    if task.plan_review_deadline:
        return task.duration_seconds or 0.0  # failed while waiting: its first part
    return round((now - task.started_at).total_seconds(), 3)


def of_run(result: ResearchResult, usage: Usage, *, duration: float, steps_closed: bool = False) -> Outcome:
    """What a run of the engine ended with, as the runner measured it. A run that failed before
    the engine had its plan keeps the plan stored before (the one the student reviewed)."""
    verification = _jsonable(result.verification)
    columns = dict(
        citations_json=result.citations_json(),
        verification_json=verification,
        report_json=_jsonable(result.report),
        tokens_used=usage.total_tokens,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        cost_usd=Decimal(str(round(usage.cost_usd, 6))),
        duration_seconds=round(duration, 3),
        limit_hit=result.limit_hit,
        invalid_citations_removed=result.invalid_citations_removed,
    )
    if result.plan:
        columns["plan_json"] = _jsonable(result.plan)
    return Outcome(
        result.outcome,
        result.stop_reason,
        error=result.error,
        result=result,
        columns=columns,
        steps_closed=steps_closed,
    )


def _jsonable(value):
    """Tool data may hold dates or decimals; store what JSON can hold."""
    return json.loads(events.stored_json(value))


def end_task(task: ResearchTask, outcome: Outcome, *, from_phase: str = Phase.RUNNING) -> bool:
    """End `task` with `outcome` if it is still in `from_phase` (a ResearchTask.Phase other than
    terminal). Returns whether this call ended it: of several callers racing to end a task (a
    cancel, the reaper, the runner, a duplicate delivery) exactly one does, and only it writes
    the rows that follow. `task` is updated to the row as stored."""
    stored = dict(
        outcome.columns,
        status=outcome.status,
        stop_reason=outcome.stop_reason,
        error=outcome.error[:2000],
        finished_at=timezone.now(),
    )
    if outcome.outcome == OUTCOMES.cancelled:
        stored["cancel_requested"] = True  # nothing continues or resumes it
    if outcome.result is not None and outcome.outcome == OUTCOMES.completed:
        stored["final_answer"] = answer_text(task, outcome.result.report, stored.get("verification_json"))
    with transaction.atomic():
        if not transitions.end(task.pk, stored, from_phase=from_phase):
            return False
        # What was just written is known; the rest of the row is read back except its large
        # columns (the plan, the context, the question: written before the end, never changed by it).
        for name, value in stored.items():
            setattr(task, name, value)
        task.refresh_from_db(fields=_fields_to_reread(stored))
        if not outcome.steps_closed:
            interrupted = ResearchStep.Status
            close_open_steps(
                task, interrupted.CANCELLED if task.status == Status.CANCELLED else interrupted.FAILED
            )
        # The ledger and the metrics row; an end without a run of the engine has an empty ledger.
        quality.store(task, outcome.result or ResearchResult(outcome.outcome, outcome.stop_reason))
        # A replay is an evaluation record: no source statistics, no row in anyone's chat.
        response = None if task.is_replay else write_response_log(task)
        if outcome.result is not None and not task.is_replay:
            credibility.record_verdicts(task, outcome.result)
        settlement.settle(task)
        data = {
            "response_log_id": response.pk if response else None,
            "stop_reason": task.stop_reason,
            "tokens": task.tokens_used,
            "cost_usd": float(task.cost_usd),
            "duration_seconds": task.duration_seconds,
        }
        if task.status == Status.COMPLETED:
            citations = len(outcome.result.citations) if outcome.result else 0
            data.update(citations=citations, limit_hit=task.limit_hit)
        elif task.status == Status.FAILED:
            data.update(error=task.error[:500])
        # Last in the transaction: the final event is visible (at commit) right after it is stored.
        events.record_event(task.pk, task.task_uuid, TERMINAL[task.status](**data))
        transaction.on_commit(lambda: notifications.research_finished(task))  # the e-mail, if asked for
        material_coverage.record_after_commit(task)  # what the channel's materials answered
    return True


def _fields_to_reread(stored: dict) -> list[str]:
    large = (models.JSONField, models.TextField)
    return [
        f.attname
        for f in ResearchTask._meta.concrete_fields
        if f.attname not in stored and not f.primary_key and not isinstance(f, large)
    ]


def close_open_steps(task: ResearchTask, status: ResearchStep.Status) -> None:
    """Steps a cancel or failure interrupted are kept, marked as not finished."""
    ResearchStep.objects.filter(task=task, status=ResearchStep.Status.RUNNING).update(
        status=status, error=f"interrupted ({status.value})"
    )
