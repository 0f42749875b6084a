"""The state machine of a research task (research.services.transitions): each move is a
compare-and-set that lets one caller through, and the phase a task is in is the same read from
the row (`ResearchTask.phase`) as asked of the database (`ResearchTask.in_phase`)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone, translation

from research.models import ResearchTask
from research.services import lifecycle, transitions

Phase = ResearchTask.Phase


def failed(error: str) -> dict:
    return {
        "status": "failed",
        "error": error,
        "finished_at": timezone.now(),
        "stop_reason": "platform_failure",
    }


def new_task(personas) -> ResearchTask:
    # The admin's: these tests hold several tasks under way at once, which only the admin may
    # without a bound (research.services.start_limits), and the moves do not depend on the owner.
    task, _ = lifecycle.task_start(
        user=personas.admin, channel=personas.channel, question="What is Bloom's taxonomy?", queue=False
    )
    return task


def phases_agree() -> None:
    for phase in Phase.values:
        in_db = set(ResearchTask.objects.filter(ResearchTask.in_phase(phase)).values_list("pk", flat=True))
        on_rows = {t.pk for t in ResearchTask.objects.all() if t.phase == phase}
        assert in_db == on_rows, phase


def test_a_task_moves_through_its_phases_and_each_move_checks_where_it_is(db, personas):
    task = new_task(personas)
    assert task.phase == Phase.QUEUED
    assert not transitions.end(task.pk, failed("x"), from_phase=Phase.RUNNING)  # not running: refused

    assert transitions.claim(task.pk, model_name="m")
    assert not transitions.claim(task.pk, model_name="m")  # a second delivery is not let through
    task.refresh_from_db()
    assert (task.phase, task.model_name, task.started_at is not None) == (Phase.RUNNING, "m", True)
    assert not transitions.claim_continuation(task.pk)  # not waiting for a review

    deadline = timezone.now() + timedelta(minutes=5)
    assert transitions.await_plan_review(task.pk, deadline=deadline, plan={"sub_questions": []}, meter={})
    assert not transitions.await_plan_review(task.pk, deadline=deadline, plan={}, meter={})  # once
    task.refresh_from_db()
    assert (task.status, task.phase) == ("running", Phase.AWAITING_PLAN_REVIEW)
    with translation.override("en"):
        assert task.phase_label == "Awaiting plan review"  # not "Running", though stored as running
    phases_agree()

    assert not transitions.claim_continuation(task.pk)  # neither confirmed nor past its deadline
    assert transitions.confirm_plan(task.pk, {"sub_questions": ["a"]})
    assert not transitions.confirm_plan(task.pk, {"sub_questions": ["b"]})
    assert transitions.claim_continuation(task.pk)
    assert not transitions.claim_continuation(task.pk)
    task.refresh_from_db()
    assert task.phase == Phase.RUNNING and task.plan_edits_json == {"sub_questions": ["a"]}

    assert transitions.end(
        task.pk, {"status": "completed", "finished_at": timezone.now()}, from_phase=Phase.RUNNING
    )
    assert not transitions.end(task.pk, {"status": "failed"}, from_phase=Phase.RUNNING)
    assert not transitions.end(task.pk, failed("late"), from_phase=Phase.RUNNING)
    task.refresh_from_db()
    assert (task.status, task.phase) == ("completed", Phase.TERMINAL)
    with translation.override("en"):
        assert task.phase_label == "Completed"  # how it ended
    phases_agree()


def test_end_refuses_a_status_that_does_not_end_the_task(db, personas):
    task = new_task(personas)
    transitions.claim(task.pk, model_name="m")
    with pytest.raises(AssertionError):
        transitions.end(task.pk, {"status": "queued"}, from_phase=Phase.RUNNING)


def test_an_unanswered_review_past_its_deadline_continues_once_and_is_recorded_as_timed_out(db, personas):
    task = new_task(personas)
    transitions.claim(task.pk, model_name="m")
    transitions.await_plan_review(
        task.pk, deadline=timezone.now() - timedelta(seconds=1), plan={"sub_questions": []}, meter={}
    )
    assert transitions.continuations_due(timezone.now()) == [task.pk]
    assert transitions.claim_continuation(task.pk)
    task.refresh_from_db()
    assert task.plan_edits_json == {"timed_out": True} and task.plan_confirmed_at is not None
    assert not transitions.confirm_plan(task.pk, {"sub_questions": ["too late"]})
    assert transitions.continuations_due(timezone.now()) == []


def test_a_cancel_while_waiting_ends_the_task_so_no_continuation_starts(db, personas):
    task = new_task(personas)
    transitions.claim(task.pk, model_name="m")
    transitions.await_plan_review(
        task.pk, deadline=timezone.now() - timedelta(seconds=1), plan={"sub_questions": []}, meter={}
    )
    cancelled = {"status": "cancelled", "stop_reason": "cancelled", "finished_at": timezone.now()}
    assert transitions.end(task.pk, cancelled, from_phase=Phase.AWAITING_PLAN_REVIEW)
    assert not transitions.claim_continuation(task.pk)
    task.refresh_from_db()
    assert task.phase == Phase.TERMINAL


def test_the_reaper_fails_each_phase_only_from_that_phase(db, personas):
    running, waiting, queued = new_task(personas), new_task(personas), new_task(personas)
    for task in (running, waiting):
        transitions.claim(task.pk, model_name="m")
    transitions.await_plan_review(
        waiting.pk, deadline=timezone.now() + timedelta(minutes=5), plan={"sub_questions": []}, meter={}
    )
    later = timezone.now() + timedelta(hours=1)
    # A task waiting for its review has no worker to beat: it is never stale.
    assert transitions.stale_running(later) == [running.pk]
    assert transitions.stuck_queued(later) == [queued.pk]
    assert not transitions.end(waiting.pk, failed("x"), from_phase=Phase.RUNNING)
    assert not transitions.end(running.pk, failed("x"), from_phase=Phase.AWAITING_PLAN_REVIEW)
    assert transitions.end(waiting.pk, failed("never continued"), from_phase=Phase.AWAITING_PLAN_REVIEW)
    waiting.refresh_from_db()
    assert (waiting.status, waiting.stop_reason, waiting.error) == (
        "failed",
        "platform_failure",
        "never continued",
    )
    phases_agree()


def race(moves: dict) -> dict:
    """Run the moves at once, each in a thread of its own; what each returned."""
    barrier = threading.Barrier(len(moves))
    won = {}

    def run(name, move):
        barrier.wait()
        try:
            won[name] = move()
        finally:
            connection.close()

    racers = [threading.Thread(target=run, args=item) for item in moves.items()]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(10)
    return won


def test_a_cancel_and_a_claim_racing_on_a_queued_task_let_exactly_one_through(transactional_db, personas):
    for _ in range(5):
        task_id = new_task(personas).pk
        won = race(
            {
                "claim": lambda task_id=task_id: transitions.claim(task_id, model_name="m"),
                "cancel": lambda task_id=task_id: transitions.end(
                    task_id, {"status": "cancelled", "stop_reason": "cancelled"}, from_phase=Phase.QUEUED
                ),
            }
        )
        assert sorted(won.values()) == [False, True], won
        status = ResearchTask.objects.get(pk=task_id).status
        assert status == ("running" if won["claim"] else "cancelled")
