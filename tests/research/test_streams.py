"""SSE and WebSocket streams against the real stack: daphne, a Celery worker, Redis, PostgreSQL."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from rest_framework.authtoken.models import Token
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from research.models import ResearchTask
from tests.support.scripted_llm import Scenario
from tests.support.stack import start_daphne, wait_for

pytestmark = pytest.mark.slow
QUESTION = "請比較學習分析與布魯姆分類法在課程設計中的角色"


def token(user) -> dict:
    return {"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"}


def parse_sse(lines) -> list[dict]:
    """Reads frames until a terminal event; returns [{"id": …, "event": {...}}]."""
    frames, current = [], {}
    for line in lines:
        if line.startswith("id: "):
            current["id"] = int(line[4:])
        elif line.startswith("data: "):
            current["event"] = json.loads(line[6:])
        elif line == "" and current:
            frames.append(current)
            if current["event"]["type"] in ("completed", "failed", "cancelled"):
                break
            current = {}
    return frames


def session_cookie(client, user) -> str:
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def ws_url(live, task_uuid, last_seq=None) -> str:
    base = live.extra["url"].replace("http://", "ws://")
    query = f"?last_seq={last_seq}" if last_seq is not None else ""
    return f"{base}/ws/deep_research/{task_uuid}/{query}"


def test_start_streams_server_sent_events_until_the_end(live, personas):
    with httpx.stream(
        "POST",
        f"{live.extra['url']}/api/deep_research/start",
        headers={**token(personas.student), "Accept": "text/event-stream"},
        json={"question": QUESTION, "channel_id": personas.channel.pk},
        timeout=60,
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        frames = parse_sse(response.iter_lines())

    assert frames[0]["event"]["type"] == "connected" and "id" not in frames[0]
    assert frames[0]["event"]["data"]["request_log_id"]
    stored = [f for f in frames if "id" in f]
    assert [f["id"] for f in stored] == list(range(1, len(stored) + 1))
    assert [f["event"]["seq"] for f in stored] == [f["id"] for f in stored]
    assert stored[0]["event"]["type"] == "task_created" and stored[-1]["event"]["type"] == "completed"
    task = ResearchTask.objects.get(task_uuid=frames[0]["event"]["task_uuid"])
    assert task.events.count() == len(stored)


def test_last_event_id_resumes_after_what_the_client_had(live, personas):
    response = httpx.post(
        f"{live.extra['url']}/api/deep_research/start",
        headers={**token(personas.student), "Accept": "application/json"},
        json={"question": QUESTION, "channel_id": personas.channel.pk},
        timeout=30,
    )
    uuid = response.json()["task_uuid"]
    wait_for(lambda: ResearchTask.objects.get(task_uuid=uuid).is_terminal, message="the research to end")
    total = ResearchTask.objects.get(task_uuid=uuid).events.count()

    with httpx.stream(
        "GET",
        f"{live.extra['url']}/api/deep_research/task/{uuid}/stream",
        headers={**token(personas.student), "Last-Event-ID": "3"},
        timeout=30,
    ) as resumed:
        frames = parse_sse(resumed.iter_lines())
    assert [f["id"] for f in frames if "id" in f] == list(range(4, total + 1))

    other = httpx.get(
        f"{live.extra['url']}/api/deep_research/task/{uuid}/stream",
        headers=token(personas.other_student),
        timeout=10,
    )
    assert other.status_code == 404


def test_websocket_reconnect_replays_without_gaps_or_duplicates(live, personas, llm, client):
    llm.reset(Scenario(latency={"*": 0.15}, action_rounds=2, sufficient_after=2))
    response = httpx.post(
        f"{live.extra['url']}/api/deep_research/start",
        headers={**token(personas.student), "Accept": "application/json"},
        json={"question": QUESTION, "channel_id": personas.channel.pk},
        timeout=30,
    )
    uuid = response.json()["task_uuid"]
    headers = {"Cookie": session_cookie(client, personas.student), "Origin": live.extra["url"]}

    received = []
    with connect(ws_url(live, uuid, 0), additional_headers=headers, open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "connected"
        while len([e for e in received if e["seq"]]) < 3:
            received.append(json.loads(ws.recv(timeout=20)))
    last = max(e["seq"] for e in received if e["seq"])
    time.sleep(0.5)  # events keep arriving while the client is away

    with connect(ws_url(live, uuid, last), additional_headers=headers, open_timeout=10) as ws:
        hello = json.loads(ws.recv(timeout=10))
        assert hello["type"] == "connected" and hello["data"]["last_seq"] == last
        while True:
            event = json.loads(ws.recv(timeout=30))
            received.append(event)
            if event["type"] in ("completed", "failed", "cancelled"):
                break

    seqs = [e["seq"] for e in received if e["seq"] is not None]
    stored = list(
        ResearchTask.objects.get(task_uuid=uuid).events.order_by("seq").values_list("seq", flat=True)
    )
    assert seqs == stored  # every stored event exactly once, in order


def test_websocket_refuses_other_origins_and_strangers(
    live, personas, client, django_capture_on_commit_callbacks
):
    from research.services import lifecycle

    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            queue=False, user=personas.student, channel=personas.channel, question=QUESTION
        )
    ResearchTask.objects.filter(pk=task.pk).update(status="cancelled")

    with pytest.raises(InvalidStatus) as refused:
        connect(
            ws_url(live, task.task_uuid),
            additional_headers={
                "Cookie": session_cookie(client, personas.student),
                "Origin": "http://evil.example",
            },
            open_timeout=10,
        )
    assert refused.value.response.status_code == 403

    # A task the user may not see is refused exactly like one that does not exist.
    stranger = {"Cookie": session_cookie(client, personas.other_student), "Origin": live.extra["url"]}
    for uuid in (task.task_uuid, "00000000-0000-0000-0000-000000000000"):
        with pytest.raises(InvalidStatus) as hidden:
            connect(ws_url(live, uuid), additional_headers=stranger, open_timeout=10)
        assert hidden.value.response.status_code == 403
    anonymous = {"Origin": live.extra["url"]}
    with pytest.raises(InvalidStatus):
        connect(ws_url(live, task.task_uuid), additional_headers=anonymous, open_timeout=10)

    teacher = {"Cookie": session_cookie(client, personas.teacher), "Origin": live.extra["url"]}
    with connect(ws_url(live, task.task_uuid), additional_headers=teacher, open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "connected"
        assert json.loads(ws.recv(timeout=10))["type"] == "task_created"


def test_the_rate_limit_holds_across_two_processes_sharing_redis(worker, personas, scripted_llm):
    env = {
        "OPENAI_BASE_URL": scripted_llm.url,
        "UEDU_DR_RATE_JUDGE": "3/m",
        "CACHE_KEY_PREFIX": f"rl-{time.time_ns()}",
    }
    first, second = start_daphne(**env), start_daphne(**env)
    try:
        headers = token(personas.student)
        body = {"question": QUESTION, "channel_id": personas.channel.pk}
        codes = [
            httpx.post(
                f"{server.extra['url']}/api/deep_research/judge", headers=headers, json=body, timeout=30
            ).status_code
            for server in (first, second, first, second)
        ]
        assert codes == [200, 200, 200, 429]
        limited = httpx.post(
            f"{second.extra['url']}/api/deep_research/judge", headers=headers, json=body, timeout=30
        )
        assert limited.json()["error"]["code"] == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
    finally:
        first.stop()
        second.stop()


SOCKET_VISIBILITY = {
    "student": True,
    "other_student": False,
    "teacher": True,
    "other_teacher": False,
    "ta": False,
    "super_ta": True,
    "other_super_ta": False,
    "admin": True,
    "outsider": False,
}


@pytest.mark.parametrize("who, allowed", SOCKET_VISIBILITY.items())
def test_the_socket_follows_the_visibility_rule(live, personas, client, who, allowed):
    from research.services import lifecycle

    task, _ = lifecycle.task_start(
        queue=False, user=personas.student, channel=personas.channel, question=QUESTION
    )
    ResearchTask.objects.filter(pk=task.pk).update(status="cancelled")
    headers = {"Cookie": session_cookie(client, getattr(personas, who)), "Origin": live.extra["url"]}
    if allowed:
        with connect(ws_url(live, task.task_uuid), additional_headers=headers, open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "connected"
            assert json.loads(ws.recv(timeout=10))["type"] == "task_created"
    else:
        with pytest.raises(InvalidStatus):
            connect(ws_url(live, task.task_uuid), additional_headers=headers, open_timeout=10)


def test_a_stream_resumed_at_or_after_the_end_closes_at_once(live, personas):
    """An SSE client reconnects with the id of the last event it had; when that was the end, or a
    cursor beyond it, the stream says `connected` and closes instead of sending heartbeats for ever."""
    from tests.support.research_fixtures import stored_research

    task = stored_research(personas.student, personas.channel)  # task_created … completed, already over
    last = task.events.order_by("-seq").first().seq
    for cursor in (last, last + 1000):
        started = time.monotonic()
        with httpx.stream(
            "GET",
            f"{live.extra['url']}/api/deep_research/task/{task.task_uuid}/stream",
            headers={**token(personas.student), "Last-Event-ID": str(cursor)},
            timeout=10,
        ) as response:
            frames = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
        assert [f["type"] for f in frames] == ["connected"] and frames[0]["data"]["last_seq"] == cursor
        assert time.monotonic() - started < 5
