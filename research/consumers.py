"""WebSocket stream of one task's events: ws/deep_research/<uuid>/?last_seq=N

On connect it sends `connected`, then every stored event after the client's last seq, then live
events, with a heartbeat after 15 s of silence. A client may send {"last_seq": N} at any time to
be sent again what follows N, on the same feed. Only those allowed to see the task may connect:
for everyone else the handshake is refused exactly as for a task that does not exist, so ids
cannot be probed.

Bounds: the visibility rule (research.selectors) is checked again every
UEDU_DR_STREAM_RECHECK_SECONDS and on each resume, and a user who may no longer see the task
(a removed Super TA) is cut off with close code 4403; the socket closes (1000) once the task's
terminal event has been sent; a user holds at most UEDU_DR_MAX_STREAMS_PER_USER open streams,
and one more is closed at once with code 4429."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from research import stream_slots
from research.feed import TaskEventFeed
from research.selectors import still_sees, visible_tasks
from uedu_dr.pooled import pooled

log = logging.getLogger(__name__)

CLOSE_DONE = 1000
CLOSE_NOT_VISIBLE = 4403
CLOSE_TOO_MANY_STREAMS = 4429


class TaskEventsConsumer(AsyncJsonWebsocketConsumer):
    # No channel-layer inbox of its own: the base consumer would close the socket (1011) the
    # moment Redis went away. The event feed subscribes by itself and survives a Redis restart
    # by reading the database.
    channel_layer_alias = None

    async def dispatch(self, message):
        # Channels' dispatch first runs close_old_connections on the one thread shared by every
        # socket of the process, so each message (a handshake included) would queue there behind
        # every other socket's calls. This consumer makes its sync calls on the pool (uedu_dr.pooled)
        # and holds no connection on that thread, so there is nothing there to close.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self):
        self.user = self.scope.get("user")
        task = await self._visible_task(self.scope["url_route"]["kwargs"]["task_uuid"])
        if task is None:
            # Its line carries the client's address (uedu_dr.client_address, the HTTP rule): ids
            # probed from one place show as such.
            log.info("stream refused (WebSocket): task %s", self.scope["url_route"]["kwargs"]["task_uuid"])
            await self.close()  # before accept: the handshake is refused (HTTP 403)
            return
        self.task_id, self.task_uuid = task
        log.info("stream opened (WebSocket): task %s, user #%s", self.task_uuid, self.user.pk)
        await self.accept()
        self.slot = await _slots_acquire(self.user.pk)
        if self.slot is None:
            await self.close(code=CLOSE_TOO_MANY_STREAMS, reason="too many open streams")
            return
        query = parse_qs(self.scope.get("query_string", b"").decode())
        self.feed: TaskEventFeed | None = None
        self._pump = asyncio.create_task(self._run(_int(query.get("last_seq", ["0"])[0])))

    async def receive_json(self, content, **kwargs):
        # A resume request: replay from the client's seq on the running feed, after checking
        # again that the client may still see the task.
        if not (isinstance(content, dict) and "last_seq" in content and getattr(self, "feed", None)):
            return
        if not await self._still_visible():
            await self._cut_off()
            return
        self.feed.rewind(_int(content["last_seq"]))

    async def disconnect(self, code):
        pump = getattr(self, "_pump", None)
        if pump is not None and pump is not asyncio.current_task():
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump
        if getattr(self, "slot", None):
            await _slots_release(self.user.pk, self.slot)
            self.slot = None

    async def _run(self, last_seq: int) -> None:
        async with TaskEventFeed(self.task_id, self.task_uuid, last_seq, pooled_reads=True) as feed:
            self.feed = feed
            await self.send_json(feed.connected())
            checked = time.monotonic()
            while True:
                if time.monotonic() - checked >= settings.UEDU_DR_STREAM_RECHECK_SECONDS:
                    checked = time.monotonic()
                    if not await self._still_visible():
                        await self._cut_off()
                        return
                    await _slots_renew(self.user.pk, self.slot)
                for event in await feed.next():
                    await self.send_json(event)
                if feed.finished:
                    # Everything up to the end has been sent: nothing more will ever come.
                    await self.close(code=CLOSE_DONE)
                    return

    async def _cut_off(self) -> None:
        await self.close(code=CLOSE_NOT_VISIBLE, reason="no longer allowed to see this research")

    async def _still_visible(self) -> bool:
        session = self.scope.get("session")
        return await _may_see(self.user, self.task_id, getattr(session, "session_key", None))

    async def _visible_task(self, task_uuid):
        if self.user is None or not self.user.is_authenticated:
            return None
        return await _visible_ids(self.user, task_uuid)


# Every sync call of a socket runs on the loop's pool of threads (uedu_dr.pooled), not on the one
# thread Channels would share between all the sockets of this process.
@pooled
def _visible_ids(user, task_uuid):
    return visible_tasks(user).filter(task_uuid=task_uuid).values_list("pk", "task_uuid").first()


@pooled
def _may_see(user, task_id, session_key) -> bool:
    return still_sees(user, task_id, session_key)


_slots_acquire = pooled(stream_slots.acquire)
_slots_renew = pooled(stream_slots.renew)
_slots_release = pooled(stream_slots.release)


def _int(value) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0
