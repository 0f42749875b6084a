"""How many HTTP requests one web process works on at once; the rest wait their turn, briefly.

Each request Django handles runs in a thread of its own and holds a database connection from the
process's pool from its first query to its end. Under a burst the number in flight can pass the
pool's size; the requests beyond it then wait UEDU_DB_POOL_TIMEOUT for a connection and fail with
a 500 (bench/load.py measured 125 such answers at 1,000 starts in a minute), while WebSocket
handshakes, whose reads need a connection too, time out. This ASGI wrapper in front of Django lets
at most UEDU_WEB_REQUESTS_IN_FLIGHT requests in at once (below the pool's size, leaving the rest
to the sockets' reads); one more waits without a thread or a connection, for up to
UEDU_WEB_QUEUE_SECONDS, then is answered 503 `server_busy` with a Retry-After, in the API's error
shape. Event streams over HTTP (SSE) are not counted: they hold no connection between reads and
last for minutes. WebSockets are not HTTP requests here."""

from __future__ import annotations

import asyncio
import json

from django.conf import settings

RETRY_AFTER = 5
# Both languages: this answer leaves before Django has chosen the reader's.
MESSAGE = (
    "The server is busy right now. Nothing was done; please try again in a few seconds. "
    "伺服器目前忙碌中，這次請求沒有執行；請幾秒後再試。"
)


class RequestsInFlight:
    def __init__(self, app):
        self.app = app
        self._slots: asyncio.Semaphore | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or _is_event_stream(scope):
            return await self.app(scope, receive, send)
        if self._slots is None:  # made on the event loop that serves the requests
            self._slots = asyncio.Semaphore(settings.UEDU_WEB_REQUESTS_IN_FLIGHT)
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=settings.UEDU_WEB_QUEUE_SECONDS)
        except TimeoutError:
            await _busy(send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._slots.release()


def _is_event_stream(scope) -> bool:
    headers = dict(scope.get("headers") or [])
    return b"text/event-stream" in headers.get(b"accept", b"") or scope.get("path", "").endswith("/stream")


async def _busy(send) -> None:
    body = json.dumps({"error": {"code": "server_busy", "message": MESSAGE}}, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(RETRY_AFTER).encode()),
                (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
                (b"x-content-type-options", b"nosniff"),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
