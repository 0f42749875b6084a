"""The event feed of one task, shared by the SSE stream and the WebSocket consumer.

Stored events after the client's last seq come first, then live ones. The database is read
every time the channel layer signals, and anyway every SAFETY_POLL_SECONDS while the layer works
(a signal the publisher failed to send) or every POLL_SECONDS while Redis is away; only events
with a seq above the last one sent go out: nothing is lost or sent twice across a reconnect.

The safety poll is what every open stream costs while nothing happens: at 2 s, 500 sockets of one
daphne made 250 reads a second through the loop's few threads, and under a burst the handshakes
queued behind them past daphne's connect timeout (bench/load.py)."""

from __future__ import annotations

import asyncio
import logging
import time

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from agent.engine.events import Connected, Heartbeat
from research.models import ResearchEvent
from research.services.events import TERMINAL_TYPES, events_after_query, group_name, serialize
from uedu_dr.db_pool import handing_back
from uedu_dr.pooled import pooled

log = logging.getLogger(__name__)

POLL_SECONDS = 2.0  # without a channel layer
SAFETY_POLL_SECONDS = 10.0  # with one: a lost signal delays its event by at most this


def _stored_after(task_id: int, task_uuid: str, last_seq: int) -> list[dict]:
    return [serialize(event, task_uuid) for event in events_after_query(task_id, last_seq, limit=500)]


def _ended_by(task_id: int, last_seq: int) -> bool:
    return ResearchEvent.objects.filter(task_id=task_id, type__in=TERMINAL_TYPES, seq__lte=last_seq).exists()


# A WebSocket feed reads on the loop's pool of threads (uedu_dr.pooled: Channels gives consumers
# no thread-sensitive context of their own, so the async ORM would run every socket's reads of a
# daphne process on one thread, one after another). An SSE stream reads in its request's own
# thread-sensitive context, as the async ORM would. Both hand their connection back to the pool
# after each read (uedu_dr.db_pool: a stream waits far longer than it reads).
_POOLED = (pooled(_stored_after), pooled(_ended_by))
_IN_CONTEXT = (sync_to_async(handing_back(_stored_after)), sync_to_async(handing_back(_ended_by)))


class TaskEventFeed:
    def __init__(self, task_id: int, task_uuid, last_seq: int = 0, *, pooled_reads: bool = False):
        """`pooled_reads`: read on the loop's thread pool (WebSocket consumers, see `_POOLED`);
        otherwise through the request's own thread-sensitive context (SSE)."""
        self._read_after, self._read_ended = _POOLED if pooled_reads else _IN_CONTEXT
        self.task_id = task_id
        self.task_uuid = str(task_uuid)
        self.last_seq = max(0, last_seq)
        self.finished = False
        self._layer = None
        self._channel = None
        self._loop_time = time.monotonic
        self._last_sent = self._loop_time()
        self._rewind_to: int | None = None
        self._wake = asyncio.Event()

    async def __aenter__(self) -> TaskEventFeed:
        # Subscribe before the first read, so an event stored between the read and the
        # subscription still wakes us.
        try:
            self._layer = get_channel_layer()
            self._channel = await self._layer.new_channel()
            await self._layer.group_add(group_name(self.task_uuid), self._channel)
        except Exception as exc:  # Redis away: poll the database instead
            log.warning("event feed of %s without channel layer: %s", self.task_uuid, exc)
            self._layer = None
        # A client that has already seen the end (an SSE client reconnecting with the terminal
        # event's id, or any cursor past it) gets `connected` and the end of the stream, not
        # heartbeats for ever on a task that will never send anything again.
        self.finished = await self._read_ended(self.task_id, self.last_seq)
        return self

    async def __aexit__(self, *exc_info) -> None:
        if self._layer is not None:
            try:
                await self._layer.group_discard(group_name(self.task_uuid), self._channel)
            except Exception:
                pass

    def connected(self) -> dict:
        return {
            "seq": None,
            "type": Connected.type,
            "task_uuid": self.task_uuid,
            "ts": timezone.now().isoformat(),
            "data": Connected(last_seq=self.last_seq).data(),
        }

    def heartbeat(self) -> dict:
        return {
            "seq": None,
            "type": Heartbeat.type,
            "task_uuid": self.task_uuid,
            "ts": timezone.now().isoformat(),
            "data": Heartbeat().data(),
        }

    def rewind(self, last_seq: int) -> None:
        """A client's resume request: the next events sent are those after `last_seq`, from this
        same feed (no new subscription, no second `connected`). Applied at the next read, so a
        read already under way cannot undo it."""
        self._rewind_to = max(0, last_seq)
        self._wake.set()

    async def stored(self) -> list[dict]:
        if self._rewind_to is not None:
            self.last_seq, self._rewind_to = self._rewind_to, None
        events = await self._read_after(self.task_id, self.task_uuid, self.last_seq)
        if events:
            self.last_seq = events[-1]["seq"]
            self.finished = any(e["type"] in TERMINAL_TYPES for e in events)
            self._last_sent = self._loop_time()
        return events

    async def next(self) -> list[dict]:
        """What to send now: stored events, or a heartbeat when nothing was sent for a while,
        or nothing (call again)."""
        events = await self.stored()
        if events:
            return events
        await self._wait()
        events = await self.stored()
        if events:
            return events
        if self._loop_time() - self._last_sent >= settings.UEDU_DR_HEARTBEAT_SECONDS:
            self._last_sent = self._loop_time()
            return [self.heartbeat()]
        return []

    async def _wait(self) -> None:
        idle_left = settings.UEDU_DR_HEARTBEAT_SECONDS - (self._loop_time() - self._last_sent)
        poll = SAFETY_POLL_SECONDS if self._layer is not None else POLL_SECONDS
        timeout = max(0.05, min(poll, idle_left))
        waits = {asyncio.ensure_future(self._wake.wait())}
        if self._layer is not None:
            waits.add(asyncio.ensure_future(self._layer.receive(self._channel)))
        try:
            done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in waits:
                pending.cancel()
        self._wake.clear()
        for finished in done:
            if (
                not finished.cancelled() and finished.exception() is not None
            ):  # the layer broke: go on with the database
                log.warning(
                    "event feed of %s lost its channel layer: %s", self.task_uuid, finished.exception()
                )
                self._layer = None
