"""A socket's handshake and reads run on the loop's pool of threads (uedu_dr.pooled), so one
socket never waits behind another's sync call on the single thread Channels would share between
every socket of a daphne process. In process, on the test database and Valkey: the shared thread
is held by a slow call while a second socket connects and receives its stored events."""

from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from agent.engine.events import StatusChange
from research.services import events, lifecycle
from tests.research.test_streams import session_cookie

QUESTION = "請比較學習分析與布魯姆分類法在課程設計中的角色"
HOLD_SECONDS = 6.0
WAIT_SECONDS = 2.5


@pytest.fixture
def application():
    from uedu_dr.asgi import application

    return application


def test_a_handshake_does_not_wait_behind_the_shared_thread(transactional_db, personas, client, application):
    task, _ = lifecycle.task_start(
        queue=False, user=personas.student, channel=personas.channel, question=QUESTION
    )
    events.record_event(task.pk, task.task_uuid, StatusChange(from_="queued", to="running"))
    cookie = session_cookie(client, personas.student)

    async def scenario():
        held = asyncio.ensure_future(sync_to_async(time.sleep)(HOLD_SECONDS))  # the shared thread, busy
        await asyncio.sleep(0.1)
        socket = WebsocketCommunicator(
            application,
            f"/ws/deep_research/{task.task_uuid}/?last_seq=0",
            headers=[(b"cookie", cookie.encode()), (b"origin", b"http://localhost")],
        )
        started = time.monotonic()
        accepted, _ = await socket.connect(timeout=WAIT_SECONDS)
        received = [await socket.receive_json_from(timeout=WAIT_SECONDS) for _ in range(3)]
        elapsed = time.monotonic() - started
        still_held = not held.done()
        await socket.disconnect()
        await held
        return accepted, received, elapsed, still_held

    accepted, received, elapsed, still_held = asyncio.run(scenario())
    assert accepted
    assert [e["type"] for e in received] == ["connected", "task_created", "status_change"]
    assert still_held and elapsed < HOLD_SECONDS  # served while the shared thread was still busy


def test_a_stranger_is_still_refused_at_the_handshake(transactional_db, personas, client, application):
    task, _ = lifecycle.task_start(
        queue=False, user=personas.student, channel=personas.channel, question=QUESTION
    )
    cookie = session_cookie(client, personas.outsider)

    async def scenario():
        socket = WebsocketCommunicator(
            application,
            f"/ws/deep_research/{task.task_uuid}/",
            headers=[(b"cookie", cookie.encode()), (b"origin", b"http://localhost")],
        )
        accepted, _ = await socket.connect(timeout=5)
        return accepted

    assert asyncio.run(scenario()) is False
