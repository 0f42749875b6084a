"""Every way a research ends goes through research.services.ending.end_task and leaves the same
rows: the task's status, finished_at and stop_reason, one reply in the chat log, exactly one
final event (the last), the quota and cost settlement, the metrics row, no step left running,
and the e-mail when the owner asked for one (for a completed or failed research, never a
cancelled one). On the real database, with the real runner in this process and the scripted
LLM at the network edge."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core import mail
from django.db import connection
from django.utils import timezone

from agent.engine.vocabulary import STOP_REASONS
from channels_app.models import ChatLog
from quotas.models import CostReservation, UsageEntry
from research.models import ResearchMetrics, ResearchStep, ResearchTask
from research.services import ending, events, lifecycle, notifications, runner
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for

QUESTION = "比較學習分析與布魯姆分類法"


def start(personas, *, plan_review: str = "off") -> ResearchTask:
    personas.channel.plan_review = plan_review
    personas.channel.save()
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question=QUESTION, queue=False
    )
    return task


def completed_by_the_runner(personas, settings, llm):
    task = start(personas)
    runner.execute_task(task.pk)
    return task


def failed_by_the_runner(personas, settings, llm):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    task = start(personas)
    runner.execute_task(task.pk)
    return task


def cancelled_while_running(personas, settings, llm):
    llm.reset(Scenario(latency={"action": 0.3, "reflection": 1.0}, action_rounds=3, sufficient_after=3))
    task = start(personas)

    def run():
        try:
            runner.execute_task(task.pk)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    wait_for(lambda: task.events.filter(type="action_thinking").exists(), message="the evidence phase")
    lifecycle.task_cancel(user=personas.student, task=task)
    thread.join(60)
    assert not thread.is_alive()
    return task


def cancelled_while_queued(personas, settings, llm):
    task = start(personas)
    lifecycle.task_cancel(user=personas.student, task=task)
    return task


def waiting_for_its_review(personas) -> ResearchTask:
    """A task whose first part (planning) ran and stopped for the student's review."""
    task = start(personas, plan_review="required")
    runner.execute_task(task.pk)
    task.refresh_from_db()
    assert task.phase == ResearchTask.Phase.AWAITING_PLAN_REVIEW and task.cost_usd > 0
    return task


def cancelled_while_waiting_for_its_review(personas, settings, llm):
    task = waiting_for_its_review(personas)
    lifecycle.task_cancel(user=personas.student, task=task)
    return task


def reaped_while_running(personas, settings, llm):
    settings.UEDU_DR_STALE_AFTER_SECONDS = 60
    task = start(personas)
    ResearchTask.objects.filter(pk=task.pk).update(
        status="running",
        started_at=timezone.now() - timedelta(minutes=5),
        last_heartbeat_at=timezone.now() - timedelta(seconds=61),
    )
    ResearchStep.objects.create(
        task=task, index=1, phase="evidence", tool_name="search_channel_materials", status="running"
    )
    assert lifecycle.reap_stale_tasks()["running"] == 1
    return task


def reaped_while_queued(personas, settings, llm):
    settings.UEDU_DR_QUEUED_TIMEOUT_SECONDS = 600
    task = start(personas)
    ResearchTask.objects.filter(pk=task.pk).update(created_at=timezone.now() - timedelta(minutes=11))
    assert lifecycle.reap_stale_tasks()["queued"] == 1
    return task


def reaped_after_its_review(personas, settings, llm):
    settings.UEDU_DR_QUEUED_TIMEOUT_SECONDS = 60
    task = waiting_for_its_review(personas)
    ResearchTask.objects.filter(pk=task.pk).update(plan_review_deadline=timezone.now() - timedelta(minutes=2))
    assert lifecycle.reap_stale_tasks()["running"] == 1
    return task


# path, its status, its stop reason (None: the engine's own), the quota refunded, an e-mail
PATHS = [
    (completed_by_the_runner, "completed", None, None, True),
    (failed_by_the_runner, "failed", STOP_REASONS.llm_unavailable, "1.00", True),
    (cancelled_while_running, "cancelled", STOP_REASONS.cancelled, "0.50", False),
    (cancelled_while_queued, "cancelled", STOP_REASONS.cancelled, "1.00", False),
    (cancelled_while_waiting_for_its_review, "cancelled", STOP_REASONS.cancelled, "0.50", False),
    (reaped_while_running, "failed", STOP_REASONS.platform_failure, "1.00", True),
    (reaped_while_queued, "failed", STOP_REASONS.platform_failure, "1.00", True),
    (reaped_after_its_review, "failed", STOP_REASONS.platform_failure, "1.00", True),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, status, stop_reason, refund, emailed", PATHS, ids=[p[0].__name__ for p in PATHS]
)
def test_every_end_leaves_the_same_rows(
    transactional_db, personas, settings, llm, path, status, stop_reason, refund, emailed
):
    notifications.set_email_when_done(personas.student, True)
    task = path(personas, settings, llm)
    task.refresh_from_db()

    assert task.status == status and task.finished_at is not None, task.error
    assert task.stop_reason == (stop_reason or task.stop_reason) and task.stop_reason in STOP_REASONS
    assert not ResearchStep.objects.filter(task=task, status="running").exists()
    # the reply in the chat log, answering the request
    request = ChatLog.objects.get(kind=ChatLog.Kind.REQUEST, deep_research_task=task)
    [reply] = ChatLog.objects.filter(kind=ChatLog.Kind.RESPONSE, deep_research_task=task)
    assert reply.in_reply_to == request
    # exactly one final event, the last one, pointing at the reply
    assert list(task.events.filter(type__in=events.TERMINAL_TYPES).values_list("type", flat=True)) == [status]
    final = task.events.order_by("-seq").first()
    assert final.type == status
    assert final.data["response_log_id"] == reply.pk and final.data["stop_reason"] == task.stop_reason
    assert final.data["cost_usd"] == float(task.cost_usd) and final.data["tokens"] == task.tokens_used
    # the settlement: the charge, the refund of the rule, the reservation settled at the real cost
    reference = str(task.task_uuid)
    assert UsageEntry.objects.filter(reference=reference, kind=UsageEntry.Kind.CHARGE).count() == 1
    refunds = list(
        UsageEntry.objects.filter(reference=reference, kind="refund").values_list("amount", flat=True)
    )
    assert refunds == ([-Decimal(refund)] if refund else [])
    reservation = CostReservation.objects.get(reference=reference)
    assert reservation.settled and reservation.spent_usd == task.cost_usd
    # the metrics row, whatever the end
    assert ResearchMetrics.objects.get(task=task).status == status
    # the e-mail the student asked for, once, for news only
    sent = [m for m in mail.outbox if reference in m.body]
    assert len(sent) == (1 if emailed else 0)


def test_a_task_ends_once_whoever_comes_second(transactional_db, personas, settings, llm):
    task = start(personas)
    assert ending.end_task(task, ending.cancelled(), from_phase=ResearchTask.Phase.QUEUED)
    # the reaper, a late cancel, a runner: each is refused and writes nothing
    assert not ending.end_task(
        task, ending.platform_failure(task, "late"), from_phase=ResearchTask.Phase.QUEUED
    )
    assert not ending.end_task(task, ending.cancelled(), from_phase=ResearchTask.Phase.RUNNING)
    runner.execute_task(task.pk)
    task.refresh_from_db()
    assert task.status == "cancelled" and task.error == ""
    assert task.events.filter(type__in=events.TERMINAL_TYPES).count() == 1
    assert ChatLog.objects.filter(kind=ChatLog.Kind.RESPONSE, deep_research_task=task).count() == 1
    assert UsageEntry.objects.filter(reference=str(task.task_uuid), kind="refund").count() == 1


def test_an_outcome_names_its_words_from_the_vocabulary():
    with pytest.raises(ValueError):
        ending.Outcome("planned", STOP_REASONS.plan_review)  # planned does not end a task
    with pytest.raises(ValueError):
        ending.Outcome("failed", "worker_died")  # no such stop reason
    with pytest.raises(AttributeError):
        STOP_REASONS.worker_died  # noqa: B018
