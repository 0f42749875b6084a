"""Bloom classification of questions: the job, its bounded retries, its one trigger (a job per
request row on commit) and the sweep that only recovers what the job missed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from agent.engine import schemas
from channels_app.models import ChatLog
from research import tasks
from research.services import bloom, lifecycle, runner
from tests.support.corpus_tools import corpus_registry
from tests.support.stack import wait_for
from uedu_dr import jobs


def _request_row(personas, content="比較學習分析與布魯姆分類法在課程設計中的角色", kind=ChatLog.Kind.REQUEST):
    return ChatLog.objects.create(channel=personas.channel, user=personas.student, kind=kind, content=content)


def test_it_stores_the_level_the_model_gives(db, personas, llm):
    row = _request_row(personas)

    outcome = bloom.classify(row.pk)

    row.refresh_from_db()
    assert outcome.status == "classified"
    assert (row.bloom_level, row.bloom_confidence, row.bloom_rationale, row.bloom_attempts) == (
        "analyze",
        0.8,
        "scripted",
        1,
    )
    [call] = llm.calls("bloom")
    assert call["messages"][0]["content"].startswith("Classify the student's question into Bloom")
    assert row.content in call["messages"][1]["content"]
    assert call["response_format"]["json_schema"]["schema"] == schemas.BLOOM


def test_it_uses_the_level_from_the_reply(db, personas, llm):
    llm.on(
        "bloom",
        lambda body: {"content": '{"level": "create", "confidence": 1.7, "rationale": "designs a plan"}'},
    )
    row = _request_row(personas, "幫我設計一個學習分析的期末專題")

    bloom.classify(row.pk)

    row.refresh_from_db()
    assert row.bloom_level == "create"
    assert row.bloom_confidence == 1.0  # clamped to 0–1


def test_a_malformed_reply_leaves_the_level_empty_and_is_retried_a_bounded_number_of_times(
    db, personas, llm, settings
):
    settings.UEDU_BLOOM_MAX_ATTEMPTS = 3
    llm.fail("bloom", "malformed", times=10)
    row = _request_row(personas)

    outcomes = [bloom.classify(row.pk) for _ in range(5)]

    row.refresh_from_db()
    assert [o.status for o in outcomes] == ["retry", "retry", "gave_up", "skipped", "skipped"]
    assert row.bloom_level == "" and row.bloom_confidence is None
    assert row.bloom_attempts == 3
    assert len(llm.calls("bloom")) == 3  # no call once the attempts are used up
    assert outcomes[0].retry_in < outcomes[1].retry_in  # backing off


def test_a_retry_after_a_failure_classifies(db, personas, llm):
    llm.fail("bloom", "http500", times=3)  # the client's own retries (2) are used up on the first attempt
    row = _request_row(personas)

    first, second = bloom.classify(row.pk), bloom.classify(row.pk)

    row.refresh_from_db()
    assert (first.status, second.status) == ("retry", "classified")
    assert row.bloom_level == "analyze" and row.bloom_attempts == 2


def test_a_classified_row_and_a_response_row_are_left_alone(db, personas, llm):
    row = _request_row(personas)
    bloom.classify(row.pk)
    response = _request_row(personas, "an answer", kind=ChatLog.Kind.RESPONSE)

    assert bloom.classify(row.pk).status == "skipped"
    assert bloom.classify(response.pk).status == "skipped"
    assert bloom.classify(987654321).status == "skipped"  # a row that is gone
    assert len(llm.calls("bloom")) == 1


def test_every_new_request_row_queues_one_job_on_commit(db, personas, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        row = _request_row(personas)
        row.content = "edited"
        row.save()  # not a new row: no second job
        _request_row(personas, "an answer", kind=ChatLog.Kind.RESPONSE)
    assert len(callbacks) == 1


def test_a_research_start_queues_its_question_like_any_other_on_commit(
    db, personas, monkeypatch, django_capture_on_commit_callbacks
):
    """One trigger for every question: a research's question row gets the same job on commit as
    a chat question; nothing is sent before the commit."""
    sent = []
    # Services queue jobs by name (uedu_dr.jobs); the registered task sends the message.
    monkeypatch.setattr(
        tasks.execute_research_task,
        "apply_async",
        lambda args, kwargs=None, **o: sent.append(("research", args)),
    )
    monkeypatch.setattr(
        tasks.classify_bloom, "apply_async", lambda args, kwargs=None, **o: sent.append(("bloom", args))
    )
    with django_capture_on_commit_callbacks(execute=True):
        task, request_log = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
        )
        chat_row = _request_row(personas)
        assert sent == []
    assert sorted(sent) == [("bloom", (request_log.pk,)), ("bloom", (chat_row.pk,)), ("research", (task.pk,))]


def test_a_research_run_leaves_its_question_to_the_job(transactional_db, personas, llm, monkeypatch):
    # The jobs are caught before the broker: a worker another test left on this run's Valkey must
    # not be the one that answers them (the run itself must not classify).
    sent = []
    monkeypatch.setattr(jobs, "send", lambda name, *args, countdown=None: sent.append((name, args)))
    task, request_log = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法", queue=False
    )
    runner.execute_task(task.pk, registry=corpus_registry())

    task.refresh_from_db()
    request_log.refresh_from_db()
    assert task.status == "completed"
    assert llm.calls("bloom") == [] and request_log.bloom_attempts == 0
    assert (jobs.CLASSIFY_BLOOM, (request_log.pk,)) in sent


def test_a_failed_job_queues_its_retry_after_the_delay(db, personas, llm, monkeypatch):
    llm.fail("bloom", "malformed")
    queued = []
    monkeypatch.setattr(
        tasks.classify_bloom,
        "apply_async",
        lambda args, kwargs=None, countdown=None: queued.append((args, countdown)),
    )
    row = _request_row(personas)

    tasks.classify_bloom(row.pk)

    row.refresh_from_db()
    assert row.bloom_level == "" and row.bloom_attempts == 1
    assert queued == [((row.pk,), bloom.BloomOutcome("retry", 1).retry_in)]


@pytest.mark.slow
def test_a_research_question_is_classified_by_the_worker(worker, personas, llm):
    _task, request_log = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
    )

    wait_for(
        lambda: ChatLog.objects.get(pk=request_log.pk).bloom_level, timeout=30, message="the Bloom level"
    )
    request_log.refresh_from_db()
    assert request_log.bloom_level == "analyze" and request_log.bloom_attempts == 1


@pytest.mark.slow
def test_the_worker_retries_after_a_malformed_reply(worker, personas, llm):
    llm.fail("bloom", "malformed")
    row = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", content="什麼是布魯姆分類法？"
    )

    wait_for(
        lambda: ChatLog.objects.get(pk=row.pk).bloom_level,
        timeout=30,
        message="the Bloom level after a retry",
    )
    row.refresh_from_db()
    assert row.bloom_level == "analyze" and row.bloom_attempts == 2


@pytest.mark.slow
def test_the_sweep_recovers_a_question_whose_job_was_never_queued_and_leaves_young_ones(
    worker, personas, llm, monkeypatch
):
    """The broker is down when two questions are written, so neither gets its job. The sweep (sent
    to the worker as beat sends it) classifies the one older than UEDU_BLOOM_SWEEP_AFTER_MINUTES
    and leaves the young one alone: the sweep recovers, it does not race the job."""

    def broker_down(*args, **kwargs):
        raise ConnectionError("broker unavailable")

    monkeypatch.setattr(jobs, "send", broker_down)
    old, young = _request_row(personas, "為什麼學習分析有用？"), _request_row(personas)
    monkeypatch.undo()
    ChatLog.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - timedelta(minutes=settings.UEDU_BLOOM_SWEEP_AFTER_MINUTES + 5)
    )
    assert ChatLog.objects.filter(pk__in=[old.pk, young.pk], bloom_attempts=0).count() == 2

    tasks.retry_failed_bloom.delay()

    wait_for(lambda: ChatLog.objects.get(pk=old.pk).bloom_level, timeout=30, message="the swept level")
    old.refresh_from_db()
    young.refresh_from_db()
    assert (old.bloom_level, old.bloom_attempts) == ("analyze", 1)
    assert (young.bloom_level, young.bloom_attempts) == ("", 0)
    assert len(llm.calls("bloom")) == 1
