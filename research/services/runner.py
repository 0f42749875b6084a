"""Running one research inside a Celery worker: claim, run the engine, store, finish.

Every write that ends a task is conditional on the task still running, so a duplicate delivery,
a cancel, the reaper and the runner can race without two of them finishing the same task."""

from __future__ import annotations

import json
import logging
import re
import time
from decimal import Decimal

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from channels_app.models import ChatLog
from research.engine import Limits, ResearchInput, ResearchResult, UsageMeter, run_research
from research.engine.llm import LLMError
from research.models import ResearchStep, ResearchTask
from research.tools import REGISTRY, ToolContext, ToolRegistry

from . import events, settlement
from .heartbeat import monitor
from .llm_factory import make_client

log = logging.getLogger(__name__)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def question_language(question: str) -> str:
    """Answer in the language the student asked in."""
    letters = [c for c in question if c.isalpha()]
    if letters and sum(1 for c in letters if _CJK.match(c)) / len(letters) >= 0.2:
        return "zh-hant"
    return "en"


def engine_limits() -> Limits:
    return Limits(
        max_steps=settings.UEDU_DR_MAX_STEPS,
        max_tokens=settings.UEDU_DR_MAX_TOKENS,
        max_seconds=settings.UEDU_DR_MAX_SECONDS,
    )


class TaskSink:
    """Stores steps and events of one task as the engine reports them."""

    def __init__(self, task: ResearchTask, meter: UsageMeter | None = None):
        self.task_id = task.pk
        self.task_uuid = task.task_uuid
        self.meter = meter

    def emit(self, type: str, data: dict) -> None:
        data = dict(data)
        if self.meter is not None:
            # The progress card shows tokens used so far; only the runner's meter knows them.
            data.setdefault("tokens_used", self.meter.total_tokens)
        events.record_event(self.task_id, self.task_uuid, type, _jsonable(data))

    def step_started(self, *, index, round, phase, tool_name, args) -> None:
        ResearchStep.objects.create(
            task_id=self.task_id, index=index, round=round, phase=phase, tool_name=tool_name, args=_jsonable(args), status="running"
        )

    def step_finished(self, *, index, status, preview, full, error, duration_ms, tokens=0) -> None:
        ResearchStep.objects.filter(task_id=self.task_id, index=index).update(
            status=status,
            result_preview=preview,
            result_full=_jsonable(full),
            error=error,
            duration_ms=duration_ms,
            tokens=tokens,
        )


def _jsonable(value):
    """Tool data may hold dates or decimals; store what JSON can hold."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _is_cancelled(task_id: int):
    def check() -> bool:
        return ResearchTask.objects.filter(pk=task_id, cancel_requested=True).exists()

    return check


def _close_connection() -> None:
    # Tool calls run in short-lived threads; each closes its own connection when done.
    connection.close()


def execute_task(task_id: int, *, registry: ToolRegistry = REGISTRY) -> None:
    """Celery entry point. Safe to call twice: only the first call claims the task.

    `registry` is the product's tool registry; another one (a fixed corpus) serves tests that
    need known sources from a research run in their own process."""
    now = timezone.now()
    claimed = ResearchTask.objects.filter(pk=task_id, status=ResearchTask.Status.QUEUED).update(
        status=ResearchTask.Status.RUNNING, started_at=now, last_heartbeat_at=now
    )
    if not claimed:
        log.info("research task %s not claimed (already taken, finished or gone)", task_id)
        return
    task = ResearchTask.objects.select_related("channel", "user").get(pk=task_id)
    monitor.register(task.pk, task.task_uuid)
    meter = UsageMeter()
    started = time.monotonic()
    try:
        events.record_event(task.pk, task.task_uuid, "status_change", {"from": "queued", "to": "running"})
        result = _run_engine(task, meter, registry)
    except events.TaskGone:
        return
    except LLMError as exc:
        result = ResearchResult(status="failed", stop_reason="llm_unavailable", error=str(exc))
    except Exception as exc:  # a bug must end the task cleanly, not leave it running
        log.exception("research task %s crashed", task_id)
        result = ResearchResult(status="failed", stop_reason="internal_error", error=f"internal error: {type(exc).__name__}")
    finally:
        monitor.unregister(task.pk)
        close_old_connections()
    finish(task, result, meter, duration=time.monotonic() - started)


def _run_engine(task: ResearchTask, meter: UsageMeter, registry: ToolRegistry) -> ResearchResult:
    channel = task.channel
    toolbox = registry.bind(
        ToolContext(
            user_id=task.user_id,
            channel_id=channel.pk,
            web_tools_enabled=channel.web_tools_enabled,
            language=task.language,
        ),
        after_call=_close_connection,
    )
    return run_research(
        ResearchInput(
            question=task.user_question,
            channel_name=channel.name,
            channel_description=channel.description[:1000],
            language=task.language,
            unsupported_policy=settings.UEDU_DR_UNSUPPORTED_POLICY,
        ),
        llm=make_client(meter),
        tools=toolbox,
        sink=TaskSink(task, meter),
        is_cancelled=_is_cancelled(task.pk),
        limits=engine_limits(),
    )


STATUS_MESSAGES = {
    "cancelled": "Research cancelled.",
    "failed": "Research failed: {error}",
}


def finish(task: ResearchTask, result: ResearchResult, meter: UsageMeter, *, duration: float) -> bool:
    """Store the outcome if the task is still running. Returns whether this call finished it."""
    usage = meter.total
    with transaction.atomic():
        updated = ResearchTask.objects.filter(pk=task.pk, status=ResearchTask.Status.RUNNING).update(
            status=result.status,
            plan_json=_jsonable(result.plan),
            final_answer=result.answer,
            citations_json=result.citations_json(),
            verification_json=_jsonable(result.verification),
            tokens_used=usage.total_tokens,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            cost_usd=Decimal(str(round(usage.cost_usd, 6))),
            duration_seconds=round(duration, 3),
            limit_hit=result.limit_hit,
            stop_reason=result.stop_reason,
            invalid_citations_removed=result.invalid_citations_removed,
            error=result.error[:2000],
            finished_at=timezone.now(),
        )
        if not updated:
            return False
        task.refresh_from_db()
        close_open_steps(task, "cancelled" if result.status == "cancelled" else "failed")
        response = write_response_log(task)
        data = {"response_log_id": response.pk, "stop_reason": result.stop_reason, "tokens": usage.total_tokens,
                "cost_usd": float(task.cost_usd), "duration_seconds": task.duration_seconds}
        if result.status == "completed":
            data.update(citations=len(result.citations), limit_hit=result.limit_hit)
        elif result.status == "failed":
            data.update(error=result.error[:500])
        events.record_event(task.pk, task.task_uuid, result.status, data)
        settlement.settle(task)
    return True


def close_open_steps(task: ResearchTask, status: str) -> None:
    """Steps a cancel or failure interrupted are kept, marked as not finished."""
    ResearchStep.objects.filter(task=task, status="running").update(status=status, error=f"interrupted ({status})")


def write_response_log(task: ResearchTask) -> ChatLog:
    """The answer (or what happened) joins the conversation, so a reload shows what was seen live."""
    request = task.chat_logs.filter(kind=ChatLog.Kind.REQUEST).order_by("pk").first()
    if task.status == ResearchTask.Status.COMPLETED:
        content = task.final_answer
    else:
        content = STATUS_MESSAGES[task.status].format(error=task.error or "unknown error")
    return ChatLog.objects.create(
        channel_id=task.channel_id,
        user_id=task.user_id,
        kind=ChatLog.Kind.RESPONSE,
        type=ChatLog.Type.DEEP_RESEARCH,
        content=content,
        in_reply_to=request,
        deep_research_task=task,
    )
