"""The web process's requests in flight (uedu_dr.web_capacity): one more than the limit waits
its turn without a thread or a connection, and past the wait gets 503 server_busy in the API's
error shape with a Retry-After; event streams and WebSockets are not counted. The same wrapper
serves every request of daphne (uedu_dr.asgi); bench/load.py meets it under a burst."""

from __future__ import annotations

import asyncio
import json

from uedu_dr.web_capacity import RequestsInFlight


def scope(path: str = "/api/deep_research/start", accept: bytes = b"application/json", kind: str = "http"):
    return {"type": kind, "path": path, "headers": [(b"accept", accept)]}


def run(settings, *scopes) -> list[dict]:
    """Send the requests at once to a wrapped app that answers only when released; returns the
    start message each got, in order."""
    settings.UEDU_WEB_REQUESTS_IN_FLIGHT = 1
    settings.UEDU_WEB_QUEUE_SECONDS = 1

    async def scenario():
        release = asyncio.Event()

        async def app(scope, receive, send):
            await release.wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

        wrapped = RequestsInFlight(app)
        answers: list[list[dict]] = [[] for _ in scopes]

        async def call(i, request_scope):
            async def send(message):
                answers[i].append(message)

            await wrapped(request_scope, None, send)

        calls = [asyncio.create_task(call(i, s)) for i, s in enumerate(scopes)]
        await asyncio.sleep(1.5)  # past the wait: the one beyond the limit has been answered
        release.set()
        await asyncio.gather(*calls)
        return answers

    return [messages[0] | {"body": messages[1]["body"]} for messages in asyncio.run(scenario())]


def test_a_request_beyond_the_limit_waits_then_is_a_503_with_retry_after(settings):
    first, second = run(settings, scope(), scope())
    assert first["status"] == 200
    assert second["status"] == 503
    headers = dict(second["headers"])
    assert headers[b"retry-after"] == b"5" and headers[b"content-type"] == b"application/json"
    assert json.loads(second["body"])["error"]["code"] == "server_busy"


def test_event_streams_and_sockets_are_not_counted(settings):
    answers = run(
        settings,
        scope(),
        scope("/api/deep_research/task/x/stream", b"text/event-stream"),
        scope("/ws/deep_research/x/", kind="websocket"),
    )
    assert [a["status"] for a in answers] == [200, 200, 200]


def test_more_requests_in_flight_than_database_connections_stops_start_up():
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "UEDU_WEB_REQUESTS_IN_FLIGHT": "120",
        "UEDU_DB_POOL_MAX": "100",
        "DATABASE_URL": "postgresql://x@127.0.0.1:1/x",
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "DJANGO_SETTINGS_MODULE": "uedu_dr.settings.dev",
    }
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=Path(__file__).resolve().parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "UEDU_WEB_REQUESTS_IN_FLIGHT must be below UEDU_DB_POOL_MAX" in result.stderr
