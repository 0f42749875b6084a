"""Admission control: a start the workers cannot take within the set queue wait is a 503 with
Retry-After and a clear JSON error, decided before anything is written (no task, no quota, no
reservation); a queue that drains fast enough admits. bench/load.py measures it under a burst."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from quotas.models import CostReservation
from research.models import ResearchTask
from research.services import admission
from tests.support.factories import make_user

JSON = {"HTTP_ACCEPT": "application/json"}
QUESTION = "比較學習分析與布魯姆分類法"


@pytest.fixture
def start(client, django_capture_on_commit_callbacks):
    def call(user, channel):
        client.force_login(user)
        with django_capture_on_commit_callbacks(execute=False):
            return client.post(
                "/api/deep_research/start",
                {"question": QUESTION, "channel_id": channel.pk},
                content_type="application/json",
                **JSON,
            )

    return call


def backlog(channel, *, queued: int, queued_for: float, claimed_lately: int) -> None:
    """`queued` tasks waiting for a worker since `queued_for` seconds ago, and `claimed_lately`
    tasks a worker took within the last few seconds."""
    owner = make_user("backlog_owner")
    now = timezone.now()
    for i in range(queued):
        task = ResearchTask.objects.create(user=owner, channel=channel, user_question=f"q{i}")
        ResearchTask.objects.filter(pk=task.pk).update(created_at=now - timedelta(seconds=queued_for))
    for i in range(claimed_lately):
        ResearchTask.objects.create(
            user=owner,
            channel=channel,
            user_question=f"r{i}",
            status=ResearchTask.Status.RUNNING,
            started_at=now - timedelta(seconds=5),
        )


def test_a_start_that_would_wait_too_long_is_a_503_with_retry_after_and_writes_nothing(
    db, personas, start, settings
):
    settings.UEDU_DR_MAX_QUEUE_WAIT_SECONDS = 60
    # 60 queued, 15 claims in the last 30 s: 0.5 a second, a wait of 120 s
    backlog(personas.channel, queued=60, queued_for=20, claimed_lately=15)
    tasks, reservations = ResearchTask.objects.count(), CostReservation.objects.count()
    response = start(personas.student, personas.channel)
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "server_busy"
    assert "try again" in error["message"] or "再試" in error["message"]
    assert 55 <= int(response["Retry-After"]) <= 65  # the 60 s beyond the limit
    assert ResearchTask.objects.count() == tasks
    assert CostReservation.objects.count() == reservations
    assert not ResearchTask.objects.filter(user=personas.student).exists()  # no quota used either


def test_a_queue_that_drains_within_the_wait_admits(db, personas, start, settings):
    settings.UEDU_DR_MAX_QUEUE_WAIT_SECONDS = 60
    # 60 queued, 60 claims in the last 30 s: 2 a second, a wait of 30 s
    backlog(personas.channel, queued=60, queued_for=20, claimed_lately=60)
    assert start(personas.student, personas.channel).status_code == 201


def test_with_no_worker_claiming_the_oldest_queued_tasks_age_decides(db, personas, start, settings):
    settings.UEDU_DR_MAX_QUEUE_WAIT_SECONDS = 60
    backlog(personas.channel, queued=3, queued_for=30, claimed_lately=0)
    assert start(personas.student, personas.channel).status_code == 201
    ResearchTask.objects.filter(status=ResearchTask.Status.QUEUED).update(
        created_at=timezone.now() - timedelta(seconds=90)
    )
    response = start(personas.other_student, personas.channel)
    assert response.status_code == 503 and response.json()["error"]["code"] == "server_busy"


def test_the_expected_wait_is_littles_law_over_the_recent_claims():
    assert admission.QueueLoad(queued=0, claims=0, oldest_queued_seconds=0).expected_wait() == 0
    assert admission.QueueLoad(queued=30, claims=30, oldest_queued_seconds=5).expected_wait() == 30
    assert admission.QueueLoad(queued=4, claims=0, oldest_queued_seconds=75).expected_wait() == 75


def test_a_start_beyond_this_processs_starts_in_progress_waits_its_turn_then_is_a_503(
    db, personas, start, settings, monkeypatch
):
    settings.UEDU_DR_STARTS_IN_PROGRESS = 1
    monkeypatch.setattr(admission, "START_SLOT_SECONDS", 0.3)
    inside, leave = threading.Event(), threading.Event()

    def a_start_in_progress():
        with admission.admitted():
            inside.set()
            leave.wait(10)

    holder = threading.Thread(target=a_start_in_progress)
    holder.start()
    try:
        assert inside.wait(5)
        response = start(personas.student, personas.channel)
        assert response.status_code == 503 and response.json()["error"]["code"] == "server_busy"
        assert int(response["Retry-After"]) >= 1
        assert not ResearchTask.objects.filter(user=personas.student).exists()
    finally:
        leave.set()
        holder.join(10)
    assert start(personas.student, personas.channel).status_code == 201  # the slot is free again
