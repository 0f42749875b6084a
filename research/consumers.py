"""WebSocket stream of one task's events: ws/deep_research/<uuid>/?last_seq=N

On connect it sends `connected`, then every stored event after the client's last seq, then live
events, with a heartbeat after 15 s of silence. A client may also send {"last_seq": N} right
after connecting. Only those allowed to see the task may connect: for everyone else the
handshake is refused exactly as for a task that does not exist, so ids cannot be probed."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from research.feed import TaskEventFeed
from research.selectors import visible_tasks

class TaskEventsConsumer(AsyncJsonWebsocketConsumer):
    # No channel-layer inbox of its own: the base consumer would close the socket (1011) the
    # moment Redis went away. The event feed subscribes by itself and survives a Redis restart
    # by reading the database.
    channel_layer_alias = None

    async def connect(self):
        user = self.scope.get("user")
        task = await self._visible_task(user, self.scope["url_route"]["kwargs"]["task_uuid"])
        if task is None:
            await self.close()  # before accept: the handshake is refused (HTTP 403)
            return
        self.task_id, self.task_uuid = task
        query = parse_qs(self.scope.get("query_string", b"").decode())
        last_seq = _int(query.get("last_seq", ["0"])[0])
        await self.accept()
        self._pump = asyncio.create_task(self._run(last_seq))

    async def receive_json(self, content, **kwargs):
        # A resume request after connect restarts the feed from the client's last seq.
        if isinstance(content, dict) and "last_seq" in content and hasattr(self, "_pump"):
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
            self._pump = asyncio.create_task(self._run(_int(content["last_seq"])))

    async def disconnect(self, code):
        pump = getattr(self, "_pump", None)
        if pump is not None:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump

    async def _run(self, last_seq: int) -> None:
        async with TaskEventFeed(self.task_id, self.task_uuid, last_seq) as feed:
            await self.send_json(feed.connected())
            while True:
                for event in await feed.next():
                    await self.send_json(event)
                if feed.finished:
                    break
            # The stream is complete; keep the socket open for heartbeats until the client leaves.
            while True:
                await asyncio.sleep(settings.UEDU_DR_HEARTBEAT_SECONDS)
                await self.send_json(feed.heartbeat())

    @database_sync_to_async
    def _visible_task(self, user, task_uuid):
        if user is None or not user.is_authenticated:
            return None
        return visible_tasks(user).filter(task_uuid=task_uuid).values_list("pk", "task_uuid").first()


def _int(value) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0
