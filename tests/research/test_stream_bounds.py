"""The bounds of the event streams, against a real daphne on the test database: the visibility
rule checked again while a stream runs and on each resume (a removed Super TA is cut off), the
socket closed once the end was sent, a resume replayed on the same feed, and a per-user bound on
open streams (WebSocket and SSE together)."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from agent.engine.events import PlanComplete, StatusChange
from channels_app.models import Membership
from research.models import ResearchTask
from research.services import events, lifecycle
from tests.research.test_streams import session_cookie, token
from tests.support.research_fixtures import stored_research
from tests.support.stack import start_daphne

pytestmark = pytest.mark.slow
QUESTION = "請比較學習分析與布魯姆分類法在課程設計中的角色"

PLAN = PlanComplete(complexity="simple", sub_questions=[], suggested_tools=[], hypotheses=[], limits={})


@pytest.fixture(scope="module")
def bounded_daphne(django_db_setup, django_db_blocker, scripted_llm):
    with django_db_blocker.unblock():
        process = start_daphne(
            OPENAI_BASE_URL=scripted_llm.url,
            UEDU_DR_STREAM_RECHECK_SECONDS="1",
            UEDU_DR_MAX_STREAMS_PER_USER="2",
            UEDU_DR_HEARTBEAT_SECONDS="2",
            CACHE_KEY_PREFIX=f"bounds-{time.time_ns()}",
        )
    yield process
    process.stop()


@pytest.fixture
def site(bounded_daphne, transactional_db):
    return bounded_daphne.extra["url"]


def ws(site, client, user, task_uuid, last_seq=0):
    headers = {"Cookie": session_cookie(client, user), "Origin": site}
    return connect(
        f"{site.replace('http://', 'ws://')}/ws/deep_research/{task_uuid}/?last_seq={last_seq}",
        additional_headers=headers,
        open_timeout=10,
    )


def running_task(personas) -> ResearchTask:
    """A task a worker would be running: it has its first events and will send more later."""
    task, _ = lifecycle.task_start(
        queue=False, user=personas.student, channel=personas.channel, question=QUESTION
    )
    ResearchTask.objects.filter(pk=task.pk).update(status="running")
    events.record_event(task.pk, task.task_uuid, StatusChange(from_="queued", to="running"))
    return task


def receive(socket, count: int, timeout: float = 10) -> list[dict]:
    return [json.loads(socket.recv(timeout=timeout)) for _ in range(count)]


def close_code(socket, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            socket.recv(timeout=deadline - time.monotonic())  # heartbeats until the close
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else -1
    raise AssertionError("the socket stayed open")


def test_the_socket_closes_once_the_terminal_event_was_sent(site, personas, client):
    task = stored_research(personas.student, personas.channel)
    stored = task.events.count()
    with ws(site, client, personas.student, task.task_uuid) as socket:
        received = receive(socket, 1 + stored)
        assert received[0]["type"] == "connected" and received[-1]["type"] == "completed"
        assert close_code(socket, timeout=5) == 1000


def test_a_removed_super_ta_is_cut_off_while_watching(site, personas, client):
    task = running_task(personas)
    with ws(site, client, personas.super_ta, task.task_uuid) as socket:
        assert [e["type"] for e in receive(socket, 3)] == ["connected", "task_created", "status_change"]
        Membership.objects.filter(user=personas.super_ta, channel=personas.channel).delete()
        started = time.monotonic()
        assert close_code(socket) == 4403
        assert time.monotonic() - started < 5
    events.record_event(task.pk, task.task_uuid, PLAN)  # nothing reaches them now


def test_a_removed_super_ta_cannot_resume(site, personas, client):
    task = running_task(personas)
    with ws(site, client, personas.super_ta, task.task_uuid) as socket:
        receive(socket, 3)
        Membership.objects.filter(user=personas.super_ta, channel=personas.channel).delete()
        socket.send(json.dumps({"last_seq": 0}))
        assert close_code(socket) == 4403


def test_a_resume_replays_from_the_requested_seq_on_the_same_feed(site, personas, client):
    task = running_task(personas)
    with ws(site, client, personas.student, task.task_uuid) as socket:
        assert [e["type"] for e in receive(socket, 3)] == ["connected", "task_created", "status_change"]
        socket.send(json.dumps({"last_seq": 1}))
        replay = json.loads(socket.recv(timeout=10))
        assert (replay["type"], replay["seq"]) == ("status_change", 2)  # no second `connected`
        events.record_event(task.pk, task.task_uuid, PLAN)
        live = json.loads(socket.recv(timeout=10))
        while live["type"] == "heartbeat":
            live = json.loads(socket.recv(timeout=10))
        assert (live["type"], live["seq"]) == ("plan_complete", 3)


def test_each_user_has_a_bounded_number_of_open_streams(site, personas, client):
    task = running_task(personas)
    with (
        ws(site, client, personas.student, task.task_uuid) as first,
        ws(site, client, personas.student, task.task_uuid) as second,
    ):
        receive(first, 1), receive(second, 1)
        with ws(site, client, personas.student, task.task_uuid) as third:
            assert close_code(third, timeout=5) == 4429
        sse = httpx.get(
            f"{site}/api/deep_research/task/{task.task_uuid}/stream",
            headers=token(personas.student),
            timeout=10,
        )
        assert sse.status_code == 429 and sse.json()["error"]["code"] == "too_many_streams"
        with ws(site, client, personas.teacher, task.task_uuid) as other_user:  # the bound is per user
            assert receive(other_user, 1)[0]["type"] == "connected"
    time.sleep(0.5)
    with ws(site, client, personas.student, task.task_uuid) as again:  # the slots were given back
        assert receive(again, 1)[0]["type"] == "connected"


def test_an_sse_stream_ends_when_its_reader_may_no_longer_see_the_task(site, personas):
    task = running_task(personas)
    started = time.monotonic()
    with httpx.stream(
        "GET",
        f"{site}/api/deep_research/task/{task.task_uuid}/stream",
        headers=token(personas.super_ta),
        timeout=20,
    ) as response:
        types = []
        for line in response.iter_lines():
            if line.startswith("data: "):
                types.append(json.loads(line[6:])["type"])
                if len(types) == 3:
                    Membership.objects.filter(user=personas.super_ta, channel=personas.channel).delete()
    assert types[:3] == ["connected", "task_created", "status_change"]
    assert time.monotonic() - started < 10  # the stream ended by itself


def test_the_streams_recheck_reads_the_user_again_and_sees_a_logout_or_a_deactivation(db, personas):
    """L10: the re-check used the user object the stream started with, so a log-out or a
    deactivation went unnoticed until the task ended."""
    from importlib import import_module

    from django.conf import settings as django_settings

    from research.selectors import still_sees
    from tests.support.research_fixtures import stored_research

    task = stored_research(personas.student, personas.channel)
    store = import_module(django_settings.SESSION_ENGINE).SessionStore()
    store.create()
    assert still_sees(personas.student, task.pk, store.session_key)
    assert still_sees(personas.student, task.pk)  # a token stream has no session
    store.delete()  # what log-out does
    assert not still_sees(personas.student, task.pk, store.session_key)
    stale = type(personas.student).objects.get(pk=personas.student.pk)  # the stream's own copy
    type(personas.student).objects.filter(pk=personas.student.pk).update(is_active=False)
    assert stale.is_active and not still_sees(stale, task.pk)
