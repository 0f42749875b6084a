"""A research waiting for its plan review holds no worker thread: the run is two Celery tasks
around the review (research.services.plan_review), on real workers, and whichever of the
student's submit, the deadline's timer and the reaper comes first continues it, once."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone, translation

from quotas.models import CostReservation, UsageEntry
from research.models import ResearchTask, TranscriptEntry
from research.services import lifecycle, plan_review, runner, settlement
from research.tasks import continue_research_task, execute_research_task
from tests.support import stack
from tests.support.stack import wait_for

QUESTION = "比較學習分析與布魯姆分類法"
AWAITING = {"type": "status_change", "data__to": "awaiting_plan_review"}


@pytest.fixture(scope="module")
def solo_worker(django_db_setup, django_db_blocker, scripted_llm, fake_openalex):
    """A worker with ONE thread on a queue of its own, where an optional review lasts 2 s. The
    continuations go to the default queue, which the session's worker serves."""
    from tests.conftest import outside_world_env

    with django_db_blocker.unblock():
        process = stack.start_worker(
            concurrency=1,
            queues="solo",
            UEDU_DR_PLAN_REVIEW_OPTIONAL_SECONDS=2,
            **outside_world_env(scripted_llm, fake_openalex),
        )
    yield process
    process.stop()


def start(personas, mode: str, *, queue: str | None = None) -> ResearchTask:
    personas.channel.plan_review = mode
    personas.channel.save()
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question=QUESTION, queue=queue is None
    )
    if queue:
        execute_research_task.apply_async((task.pk,), queue=queue)
    return task


def waiting(task: ResearchTask) -> ResearchTask:
    wait_for(lambda: task.events.filter(**AWAITING).exists(), timeout=60, message="the plan review")
    task.refresh_from_db()
    return task


def ended(task: ResearchTask, timeout: float = 60) -> ResearchTask:
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).is_terminal,
        timeout=timeout,
        message="the research to end",
    )
    task.refresh_from_db()
    return task


def assert_one_continuous_run(task: ResearchTask) -> None:
    """One resume, one end, no duplicate or missing event seq; one planning; the transcript
    numbered on across both parts; the bill is what the transcript recorded."""
    seqs = list(task.events.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    types = list(task.events.order_by("seq").values_list("type", flat=True))
    assert types.count("plan_complete") == 1 and types.count("completed") == 1 and types[-1] == "completed"
    assert task.events.filter(type="status_change", data__from="awaiting_plan_review").count() == 1
    transcript = list(TranscriptEntry.objects.filter(task=task).order_by("seq").values_list("seq", "role"))
    assert [seq for seq, _ in transcript] == list(range(1, len(transcript) + 1))
    assert [role for _, role in transcript].count("planner") == 1
    assert task.cost_usd > 0 and task.cost_usd == settlement.transcript_cost(task)
    assert CostReservation.objects.get(reference=str(task.task_uuid)).spent_usd == task.cost_usd


def test_a_waiting_research_frees_its_worker_and_continues_with_the_edited_plan(
    client, worker, solo_worker, personas, llm
):
    first = waiting(start(personas, "required", queue="solo"))
    assert first.status == "running" and first.plan_review_deadline and first.plan_continued_at is None
    planned_tokens = first.tokens_used
    assert planned_tokens > 0 and first.cost_usd > 0  # what planning used is kept for the second part

    # The one thread of the solo worker is free: a second research runs to its end on it while
    # the first still waits.
    second = start(personas, "off", queue="solo")
    assert ended(second).status == "completed"
    first.refresh_from_db()
    assert first.status == "running" and first.plan_continued_at is None

    client.force_login(personas.student)
    # Stored as running; the API and the page name the phase it is in.
    detail = client.get(f"/api/deep_research/task/{first.task_uuid}").json()
    assert (detail["status"], detail["phase"]) == ("running", "awaiting_plan_review")
    mine = {t["task_uuid"]: t["phase"] for t in client.get("/api/deep_research/my_tasks").json()}
    assert mine[str(first.task_uuid)] == "awaiting_plan_review" and mine[str(second.task_uuid)] == "terminal"
    card = client.get(f"/deep_research/task/{first.task_uuid}/outcome")
    labels = []
    for language in ("en", "zh-hant"):
        with translation.override(language):
            labels.append(translation.gettext("Waiting for your review of the plan…"))
    assert card.status_code == 200 and any(label in card.content.decode() for label in labels)
    history = client.get("/deep_research/my").content.decode()
    phase_labels = []
    for language in ("en", "zh-hant"):
        with translation.override(language):
            phase_labels.append(str(ResearchTask.Phase.AWAITING_PLAN_REVIEW.label))
    assert any(label in history for label in phase_labels)
    edited = ["布魯姆分類法的六個層次", "學習分析如何使用布魯姆分類"]
    response = client.post(
        f"/api/deep_research/task/{first.task_uuid}/plan",
        {"sub_questions": edited},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    first = ended(first)
    assert first.status == "completed", first.error
    assert [sq["question"] for sq in first.plan_json["sub_questions"]] == edited
    resumed = first.events.get(type="status_change", data__from="awaiting_plan_review").data
    assert resumed == {
        "from": "awaiting_plan_review",
        "to": "running",
        "plan_edited": True,
        "timed_out": False,
        "sub_questions": edited,
        "tokens_used": planned_tokens,
    }
    assert first.tokens_used > planned_tokens
    assert_one_continuous_run(first)
    assert UsageEntry.objects.filter(reference=str(first.task_uuid), kind="refund").count() == 0


def test_the_deadline_timer_continues_an_unanswered_review_with_the_plan_unchanged(
    worker, solo_worker, personas, llm
):
    task = waiting(start(personas, "optional", queue="solo"))
    proposed = task.plan_json["sub_questions"]
    event = task.events.get(**AWAITING).data
    assert (
        event["mode"] == "optional"
        and event["deadline"]
        and event["sub_questions"] == [sq["question"] for sq in proposed]
    )
    task = ended(task)  # nobody answers; the timer set at the deadline continues it
    assert task.status == "completed", task.error
    assert task.plan_edits_json == {"timed_out": True}
    assert task.plan_json["sub_questions"] == proposed
    resumed = task.events.get(type="status_change", data__from="awaiting_plan_review").data
    assert (resumed["timed_out"], resumed["plan_edited"]) == (True, False)
    assert_one_continuous_run(task)


def test_a_cancel_while_waiting_ends_and_settles_the_task_without_a_worker(client, worker, personas, llm):
    task = waiting(start(personas, "required"))
    client.force_login(personas.student)
    response = client.post(
        "/api/deep_research/cancel", {"task_uuid": str(task.task_uuid)}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    task.refresh_from_db()
    assert task.status == "cancelled" and task.finished_at and task.plan_json["sub_questions"]
    last = task.events.order_by("-seq").first()
    assert last.type == "cancelled" and last.data["cost_usd"] == float(task.cost_usd) > 0
    # planning was paid for: half the quota unit back, the reservation settled at the planning cost
    assert UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund").amount == Decimal("-0.50")
    reservation = CostReservation.objects.get(reference=str(task.task_uuid))
    assert reservation.settled and reservation.spent_usd == task.cost_usd == settlement.transcript_cost(task)
    assert task.chat_logs.filter(kind="response").count() == 1
    # nothing continues it afterwards: the submit is refused and a late timer does nothing
    assert (
        client.post(
            f"/api/deep_research/task/{task.task_uuid}/plan", {}, content_type="application/json"
        ).status_code
        == 409
    )
    ResearchTask.objects.filter(pk=task.pk).update(plan_review_deadline=timezone.now() - timedelta(seconds=1))
    runner.continue_task(task.pk)
    assert list(task.events.order_by("-seq").values_list("type", flat=True))[0] == "cancelled"
    assert ResearchTask.objects.get(pk=task.pk).status == "cancelled"


def test_submit_timer_and_reaper_racing_continue_the_research_once(worker, personas, llm, settings):
    task = waiting(start(personas, "required"))
    # The deadline has just passed as the student presses "continue": the submit, two timers
    # and the reaper all try to start the second part at once.
    settings.UEDU_DR_STALE_AFTER_SECONDS = 3
    ResearchTask.objects.filter(pk=task.pk).update(
        plan_review_deadline=timezone.now() - timedelta(seconds=10)
    )
    outcomes = []

    def submit():
        try:
            plan_review.submit(
                task=ResearchTask.objects.get(pk=task.pk), user=personas.student, sub_questions=None
            )
            outcomes.append("submitted")
        except Exception as exc:  # a submit that loses the race is told the task no longer waits
            outcomes.append(getattr(exc, "code", repr(exc)))

    racers = [threading.Thread(target=submit), threading.Thread(target=lifecycle.reap_stale_tasks)]
    for racer in racers:
        racer.start()
    continue_research_task.delay(task.pk)
    continue_research_task.delay(task.pk)
    for racer in racers:
        racer.join(30)
    task = ended(task)
    assert task.status == "completed", task.error
    assert outcomes in (["submitted"], ["not_awaiting_review"])
    assert_one_continuous_run(task)


def test_only_one_of_many_simultaneous_claims_continues(transactional_db, personas):
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question=QUESTION, queue=False
    )
    now = timezone.now()
    ResearchTask.objects.filter(pk=task.pk).update(
        status="running",
        started_at=now,
        last_heartbeat_at=now,
        plan_review_deadline=now - timedelta(seconds=1),
    )
    barrier = threading.Barrier(8)
    claims = []

    def claim():
        barrier.wait()
        claims.append(plan_review.claim_continuation(task.pk))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(claims) == [False] * 7 + [True]
    task.refresh_from_db()
    assert task.plan_edits_json == {"timed_out": True} and task.plan_confirmed_at and task.plan_continued_at


def test_the_reaper_leaves_a_waiting_task_alone_but_fails_a_dead_continuation(
    transactional_db, personas, settings
):
    settings.UEDU_DR_STALE_AFTER_SECONDS = 3
    long_ago = timezone.now() - timedelta(seconds=60)
    tasks = []
    for _ in range(2):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION, queue=False
        )
        tasks.append(task)
    waiting_task, dead_continuation = tasks
    # No heartbeat for a minute, and not yet due: waiting for the student, which is not stale.
    ResearchTask.objects.filter(pk=waiting_task.pk).update(
        status="running",
        started_at=long_ago,
        last_heartbeat_at=long_ago,
        duration_seconds=4.0,
        plan_review_deadline=timezone.now() + timedelta(minutes=4),
    )
    # Continued a minute ago, and its worker has not beaten since: dead.
    ResearchTask.objects.filter(pk=dead_continuation.pk).update(
        status="running",
        started_at=long_ago,
        last_heartbeat_at=long_ago,
        duration_seconds=4.0,
        plan_review_deadline=long_ago,
        plan_confirmed_at=long_ago,
        plan_continued_at=long_ago,
    )
    assert lifecycle.reap_stale_tasks() == {"running": 1, "queued": 0, "continued": 0}
    waiting_task.refresh_from_db()
    dead_continuation.refresh_from_db()
    assert waiting_task.status == "running"
    assert dead_continuation.status == "failed" and dead_continuation.stop_reason == "platform_failure"
    # working time: the first part plus the continuation, not the wait
    assert 60 <= dead_continuation.duration_seconds < 70


def test_a_continuation_lost_for_too_long_fails_like_a_research_nobody_picked_up(
    transactional_db, personas, settings
):
    settings.UEDU_DR_QUEUED_TIMEOUT_SECONDS = 30
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question=QUESTION, queue=False
    )
    long_ago = timezone.now() - timedelta(seconds=60)
    ResearchTask.objects.filter(pk=task.pk).update(
        status="running",
        started_at=long_ago,
        last_heartbeat_at=long_ago,
        duration_seconds=4.0,
        plan_review_deadline=long_ago,
    )
    with translation.override("en"):
        assert lifecycle.reap_stale_tasks()["running"] == 1
    task.refresh_from_db()
    assert task.status == "failed" and "after its plan review" in task.error and task.duration_seconds == 4.0
    assert UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund").amount == Decimal("-1.00")
