"""Running researches through the real Celery worker, the database and the scripted LLM."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone, translation
from django.utils.translation import gettext

from agent.engine.events import ActionComplete, ActionDispatch, ActionThinking
from channels_app.models import ChatLog
from quotas.models import UsageEntry
from research.models import ResearchEvent, ResearchStep, ResearchTask
from research.services import lifecycle, runner
from research.tasks import execute_research_task
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for

pytestmark = pytest.mark.slow


def finished(task: ResearchTask, timeout: float = 30) -> ResearchTask:
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).is_terminal,
        timeout=timeout,
        message=f"task {task.task_uuid} to end",
    )
    task.refresh_from_db()
    return task


def event_types(task) -> list[str]:
    return list(task.events.order_by("seq").values_list("type", flat=True))


def test_a_research_runs_end_to_end_through_a_real_worker(worker, personas):
    task, request_log = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
    )
    task = finished(task)

    assert task.status == "completed", task.error
    types = event_types(task)
    assert types[:3] == ["task_created", "status_change", "plan_complete"]
    assert types[-2:] == ["verification_done", "completed"]
    seqs = list(task.events.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert task.plan_json["sub_questions"] and task.report_json["schema_version"] == "2.0"
    assert task.tokens_used > 0 and task.cost_usd > 0 and task.duration_seconds > 0
    assert task.started_at and task.finished_at and task.language == "zh-hant"
    response = ChatLog.objects.get(kind="response", deep_research_task=task)
    assert response.in_reply_to == request_log and response.type == "deep_research"
    assert response.content == task.final_answer
    assert task.events.get(type="completed").data["response_log_id"] == response.pk


def test_a_duplicate_delivery_runs_one_research_and_charges_once(worker, personas, llm):
    llm.reset(Scenario(latency={"planner": 0.5}))
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
    )
    execute_research_task.delay(task.pk)  # the broker delivers the same message again
    execute_research_task.delay(task.pk)
    task = finished(task)

    assert task.status == "completed"
    assert event_types(task).count("status_change") == 1
    assert len(llm.calls("planner")) == 1
    assert UsageEntry.objects.filter(reference=str(task.task_uuid)).count() == 1


def test_cancelling_mid_research_keeps_the_steps_and_refunds_half(worker, personas, llm):
    llm.reset(Scenario(latency={"action": 0.3, "reflection": 1.0}, action_rounds=3, sufficient_after=3))
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
    )
    wait_for(lambda: task.events.filter(type="action_thinking").exists(), message="the evidence phase")

    lifecycle.task_cancel(user=personas.student, task=task)
    task = finished(task)

    assert task.status == "cancelled"
    assert event_types(task)[-1] == "cancelled"
    assert "verification_done" not in event_types(task)
    assert not ResearchStep.objects.filter(task=task, status="running").exists()
    refund = UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund")
    assert refund.amount == Decimal("-0.50")
    with translation.override("zh-hant"):  # the question was Chinese: so is the conversation
        assert (
            ChatLog.objects.get(kind="response", deep_research_task=task).content
            == gettext("Research cancelled.")
            == "研究已取消。"
        )


def test_the_cancel_check_reuses_the_flag_its_own_event_just_read_and_looks_again_after_a_wait(
    db, personas, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            queue=False,
            user=personas.student,
            channel=personas.channel,
            question="比較學習分析與布魯姆分類法",
        )
    sink = runner.TaskSink(task)
    check = sink.cancel_requested

    sink.emit(ActionThinking(round=1, purpose="evidence"))  # the event's own statement read the flag
    with CaptureQueriesContext(connection) as queries:
        assert check() is False
    assert len(queries) == 0

    # A cancel stored after that read: once the read is older than a moment, the check looks again.
    ResearchTask.objects.filter(pk=task.pk).update(cancel_requested=True)
    sink.cancel_seen = (False, sink.cancel_seen[1] - runner.CANCEL_SEEN_FRESH_SECONDS)
    with CaptureQueriesContext(connection) as queries:
        assert check() is True
    assert len(queries) == 1

    # An event that reads the cancel answers every later check without a lookup.
    sink.emit(ActionThinking(round=2, purpose="evidence"))
    assert sink.cancel_seen[0] is True
    sink.cancel_seen = (True, sink.cancel_seen[1] - 3600)
    with CaptureQueriesContext(connection) as queries:
        assert check() is True
    assert len(queries) == 0


def test_an_event_writes_the_exchanges_and_steps_reported_before_it_in_its_own_statement(
    db, personas, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from research.models import TranscriptEntry
    from research.services import events

    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            queue=False,
            user=personas.student,
            channel=personas.channel,
            question="比較學習分析與布魯姆分類法",
        )
    sink = runner.TaskSink(task)
    exchange = {
        "kind": "llm",
        "role": "planner",
        "model": "m",
        "request": {"messages": [{"role": "user", "content": "問"}]},
        "response": {"when": timezone.now()},
        "seconds": 0.25,
    }  # a date: stored as its text
    sink.record_llm(exchange)
    sink.record_llm(dict(exchange, role="action", seconds=1))
    with CaptureQueriesContext(connection) as queries:
        sink.step_started(
            index=1, round=1, phase="evidence", tool_name="search_channel_materials", args={"query": "布魯姆"}
        )
        sink.step_started(
            index=2, round=1, phase="evidence", tool_name="get_course_overview", args={"course": "EDS101"}
        )
    assert len(queries) == 0 and not ResearchStep.objects.filter(task=task).exists()
    with CaptureQueriesContext(connection) as queries:
        sink.emit(ActionDispatch(round=1, purpose="evidence", calls=[], tool_calls_used=0))
    assert len(queries) == 1  # the event, both exchanges and both steps
    rows = list(
        TranscriptEntry.objects.filter(task=task)
        .order_by("seq")
        .values_list("seq", "role", "seconds", "request")
    )
    assert rows == [(1, "planner", 0.25, exchange["request"]), (2, "action", 1.0, exchange["request"])]
    assert isinstance(TranscriptEntry.objects.get(task=task, seq=1).response["when"], str)
    assert list(
        ResearchStep.objects.filter(task=task)
        .order_by("index")
        .values_list("index", "tool_name", "status", "args")
    ) == [
        (1, "search_channel_materials", "running", {"query": "布魯姆"}),
        (2, "get_course_overview", "running", {"course": "EDS101"}),
    ]
    assert event_types(task)[-1] == "action_dispatch"

    # A finished step goes with the event that announces it; two writes of one step never share a
    # statement (the second could not see the first), so the first is stored before the second is queued.
    found = {"sources": [{"title": "a"}, {"title": "b"}], "data": {}}
    with CaptureQueriesContext(connection) as queries:
        sink.step_finished(index=1, status="ok", preview="2 passages", full=found, error="", duration_ms=12)
        sink.step_sources(index=1, source_ids=[7, 8])
        sink.emit(
            ActionComplete(
                index=1,
                round=1,
                tool="search",
                status="ok",
                duration_ms=1,
                preview="",
                sources=0,
                filtered_by_domain=0,
                error="",
            )
        )
    assert len(queries) == 2
    step = ResearchStep.objects.get(task=task, index=1)
    assert (step.status, step.duration_ms, [s["id"] for s in step.result_full["sources"]]) == (
        "ok",
        12,
        [7, 8],
    )

    # The next exchanges number on, also when stored without an event (at the end of a research).
    sink.record_llm(dict(exchange, role="writer"))
    sink.step_finished(index=2, status="error", preview="", full=None, error="no course", duration_ms=3)
    sink.flush()
    assert list(TranscriptEntry.objects.filter(task=task).order_by("seq").values_list("seq", "role")) == [
        (1, "planner"),
        (2, "action"),
        (3, "writer"),
    ]
    assert ResearchStep.objects.get(task=task, index=2).error == "no course"
    assert sink.all_steps_closed()  # end_task has no step to close

    # A task deleted meanwhile: the event's statement writes nothing, and says the task is gone.
    sink.record_llm(dict(exchange, role="critic"))
    sink.step_started(index=3, round=2, phase="evidence", tool_name="web_search", args={})
    assert not sink.all_steps_closed()
    sink.step_finished(index=3, status="ok", preview="", full=None, error="", duration_ms=1)
    ResearchTask.objects.filter(pk=task.pk).delete()
    with pytest.raises(events.TaskGone):
        sink.emit(ActionThinking(round=2, purpose="evidence"))
    assert not sink.all_steps_closed()  # a statement with writes failed: end_task must look
    assert not TranscriptEntry.objects.filter(task_id=task.pk).exists()
    assert not ResearchStep.objects.filter(task_id=task.pk).exists()


def test_a_task_nobody_claims_can_be_cancelled_at_once_with_a_full_refund(
    db, personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # never reaches the broker
        task, _ = lifecycle.task_start(
            queue=False,
            user=personas.student,
            channel=personas.channel,
            question="比較學習分析與布魯姆分類法",
        )
    lifecycle.task_cancel(user=personas.student, task=task)
    task.refresh_from_db()
    assert task.status == "cancelled"
    assert UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund").amount == Decimal("-1.00")
    assert event_types(task) == ["task_created", "cancelled"]


def test_only_the_owner_may_cancel(db, personas, django_capture_on_commit_callbacks):
    from uedu_dr.errors import ServiceError

    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            queue=False,
            user=personas.student,
            channel=personas.channel,
            question="比較學習分析與布魯姆分類法",
        )
    with pytest.raises(ServiceError) as err:
        lifecycle.task_cancel(user=personas.teacher, task=task)
    assert err.value.status == 403
    task.refresh_from_db()
    assert task.status == "queued"


def test_the_reaper_fails_a_task_whose_worker_stopped_beating(
    db, personas, settings, django_capture_on_commit_callbacks
):
    settings.UEDU_DR_STALE_AFTER_SECONDS = 60
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            queue=False,
            user=personas.student,
            channel=personas.channel,
            question="比較學習分析與布魯姆分類法",
        )
    ResearchTask.objects.filter(pk=task.pk).update(
        status="running",
        started_at=timezone.now() - timedelta(minutes=5),
        last_heartbeat_at=timezone.now() - timedelta(seconds=61),
    )
    ResearchStep.objects.create(
        task=task, index=1, phase="action", tool_name="search_channel_materials", status="ok"
    )
    ResearchStep.objects.create(
        task=task, index=2, phase="action", tool_name="search_external_papers", status="running"
    )

    with translation.override("en"):  # the stored reason is in the platform's language
        assert lifecycle.reap_stale_tasks() == {"running": 1, "queued": 0, "continued": 0}

    task.refresh_from_db()
    assert task.status == "failed" and "no heartbeat" in task.error
    assert list(task.steps.values_list("status", flat=True)) == ["ok", "failed"]
    assert event_types(task)[-1] == "failed"
    assert UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund").amount == Decimal("-1.00")
    assert lifecycle.reap_stale_tasks() == {"running": 0, "queued": 0, "continued": 0}


def test_the_reaper_leaves_live_tasks_alone_and_fails_unclaimed_ones(
    db, personas, settings, django_capture_on_commit_callbacks
):
    settings.UEDU_DR_QUEUED_TIMEOUT_SECONDS = 600
    with django_capture_on_commit_callbacks(execute=False):
        live, _ = lifecycle.task_start(
            queue=False,
            user=personas.student,
            channel=personas.channel,
            question="比較學習分析與布魯姆分類法",
        )
        stuck, _ = lifecycle.task_start(
            queue=False, user=personas.student, channel=personas.channel, question="另一個比較學習分析的問題"
        )
    ResearchTask.objects.filter(pk=live.pk).update(status="running", last_heartbeat_at=timezone.now())
    ResearchTask.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(minutes=11))

    with translation.override("en"):
        assert lifecycle.reap_stale_tasks() == {"running": 0, "queued": 1, "continued": 0}
    stuck.refresh_from_db()
    live.refresh_from_db()
    assert stuck.status == "failed" and "no worker" in stuck.error
    assert live.status == "running"


def test_without_an_llm_the_research_fails_with_a_clear_error(
    transactional_db, personas, settings, django_capture_on_commit_callbacks
):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法", queue=False
    )
    runner.execute_task(task.pk)
    task.refresh_from_db()
    assert task.status == "failed"
    assert "No LLM is configured" in task.error
    assert UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund").amount == Decimal("-1.00")


def test_a_second_execution_of_a_finished_task_changes_nothing(
    transactional_db, personas, llm, django_capture_on_commit_callbacks
):
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法", queue=False
    )
    runner.execute_task(task.pk)
    count = ResearchEvent.objects.filter(task=task).count()
    runner.execute_task(task.pk)
    assert ResearchEvent.objects.filter(task=task).count() == count
    assert ResearchTask.objects.get(pk=task.pk).status == "completed"
