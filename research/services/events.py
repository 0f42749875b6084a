"""Research events: stored with a per-task seq (the source of truth), then signalled on the
channel layer after commit. Clients that miss a signal catch up from the table."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid

from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.utils import timezone

from research.models import ResearchEvent

log = logging.getLogger(__name__)

# Events that end a task's stream.
TERMINAL_TYPES = frozenset({"completed", "failed", "cancelled"})


class TaskGone(Exception):
    """The task row no longer exists (deleted while running)."""


def group_name(task_uuid: uuid.UUID | str) -> str:
    return f"research.task.{uuid.UUID(str(task_uuid)).hex}"


def serialize(event: ResearchEvent, task_uuid) -> dict:
    return {
        "seq": event.seq,
        "type": event.type,
        "task_uuid": str(task_uuid),
        "ts": event.created_at.isoformat(),
        "data": event.data,
    }


def record_event(task_id: int, task_uuid, type: str, data: dict) -> dict:
    """Store the event with the next seq of its task and signal it once the row is committed.

    One statement does both: the seq comes from an UPDATE … RETURNING on the task row, whose row
    lock serialises writers across threads and processes, and the INSERT uses it in the same
    statement (one round trip, atomic on its own). Seq order is therefore commit order, and a
    replay never sees a gap that is later filled. The time is the statement's own
    (clock_timestamp), not its transaction's start (now()): an event stored at the end of a long
    transaction did not happen when the transaction began."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH next AS (
                UPDATE deep_research_tasks SET event_seq = event_seq + 1 WHERE id = %s RETURNING event_seq
            )
            INSERT INTO deep_research_events (task_id, seq, type, data, created_at)
            SELECT %s, event_seq, %s, %s::jsonb, clock_timestamp() FROM next
            RETURNING seq, created_at
            """,
            [task_id, task_id, type, json.dumps(data, ensure_ascii=False)],
        )
        row = cursor.fetchone()
    if row is None:
        raise TaskGone(task_id)
    payload = {"seq": row[0], "type": type, "task_uuid": str(task_uuid), "ts": row[1].isoformat(), "data": data}
    # Inside a caller's transaction the signal waits for its commit; otherwise it goes now.
    transaction.on_commit(lambda: signal(task_uuid, payload))
    return payload


class _SignalLoop:
    """A long-lived event loop thread for channel-layer sends from sync code.

    async_to_sync would build a new loop, and so a new Redis connection, for every event; this
    loop keeps one connection pool for the process. Sends are fire-and-forget: the research
    never waits on Redis, and a lost signal only delays a listener until its next table read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: set[str] = set()  # groups whose send is queued on the loop, not yet started

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="channel-layer-signals", daemon=True).start()
            return self._loop

    def send(self, group: str, message: dict) -> None:
        """Queue a wake-up for the group's listeners, unless one is queued and not yet started.

        A listener woken reads every stored event after its last seq (research.feed), not the
        message, so the queued wake-up carries this event too: it starts after this event was
        committed. A research's bursts of events (a tool round's steps) then cost one Redis
        exchange instead of one each, on the worker and on every daphne holding a listener."""
        layer = get_channel_layer()
        if layer is None:
            return
        with self._lock:
            if group in self._waiting:
                return
            self._waiting.add(group)
        try:
            future = asyncio.run_coroutine_threadsafe(self._send(layer, group, message), self.loop())
        except Exception:
            with self._lock:
                self._waiting.discard(group)
            raise
        future.add_done_callback(_log_failure)

    async def _send(self, layer, group: str, message: dict) -> None:
        with self._lock:
            self._waiting.discard(group)  # from here on, a new event needs a wake-up of its own
        await layer.group_send(group, message)


def _log_failure(future) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("could not signal an event: %s", future.exception())


_signals = _SignalLoop()


def signal(task_uuid, payload: dict) -> None:
    """Tell live listeners. Losing this is harmless: listeners re-read the table on gaps."""
    try:
        _signals.send(group_name(task_uuid), {"type": "research.event", "event": payload})
    except Exception as exc:  # Redis down must not fail a research; the DB has the event
        log.warning("could not signal event %s of %s: %s", payload.get("seq"), task_uuid, exc)


def heartbeat_payload(task_uuid) -> dict:
    return {"seq": None, "type": "heartbeat", "task_uuid": str(task_uuid), "ts": timezone.now().isoformat(), "data": {}}


def events_after_query(task_id: int, after_seq: int, limit: int = 1000):
    """A task's stored events after `after_seq`, in order: the one query behind every catch-up
    (the terminal command, the SSE and WebSocket feed, the events API). Lazy, so async callers
    can iterate it with `async for`."""
    return ResearchEvent.objects.filter(task_id=task_id, seq__gt=after_seq).order_by("seq")[:limit]


def events_after(task_id: int, after_seq: int, limit: int = 1000) -> list[ResearchEvent]:
    return list(events_after_query(task_id, after_seq, limit))
