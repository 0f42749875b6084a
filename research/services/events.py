"""Research events: stored with a per-task seq (the source of truth), then signalled on the
channel layer after commit. Clients that miss a signal catch up from the table."""

from __future__ import annotations

import binascii
import json
import logging
import threading
import uuid
from collections.abc import Sequence

import redis
from asgiref.sync import async_to_sync
from channels.layers import DEFAULT_CHANNEL_LAYER, get_channel_layer
from channels_redis.pubsub import RedisPubSubChannelLayer
from channels_redis.utils import decode_hosts
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from agent.engine.events import TERMINAL, Event, Heartbeat
from research.models import ResearchEvent

log = logging.getLogger(__name__)

# Events that end a task's stream.
TERMINAL_TYPES = frozenset(TERMINAL)


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


def record_event(
    task_id: int, task_uuid, event: Event, *, writes: Sequence[Write] = (), extra: dict | None = None
) -> bool:
    """Store the event (agent.engine.events) with the next seq of its task and signal it once the
    row is committed. Its `data` is `event.data()`, with `extra` added (the runner's meter).

    One statement does both: the seq comes from an UPDATE … RETURNING on the task row, whose row
    lock serialises writers across threads and processes, and the INSERT uses it in the same
    statement (one round trip, atomic on its own). Seq order is therefore commit order, and a
    replay never sees a gap that is later filled. The time is the statement's own
    (clock_timestamp), not its transaction's start (now()): an event stored at the end of a long
    transaction did not happen when the transaction began. Values JSON cannot hold (dates,
    decimals) are stored as their text.

    `writes`: the research's own rows reported since its last event (its transcript, its steps),
    written by the same statement (see `Write`). A research announces each model call and each
    tool step with an event, so this saves a round trip per call and per step, and a listener
    woken by the event finds the rows it announces.

    Returns the task's `cancel_requested` as the same statement read it (under the row lock): a
    research thread that stores an event has just checked for a cancel as well."""
    if not isinstance(event, Event):  # the (type, data) call of before the events were typed
        raise TypeError(f"an event is an agent.engine.events.Event, not {event!r}")
    if not event.stored:
        raise ValueError(f"{event.type} events are not stored")
    type, data = event.type, event.data()
    for key, value in (extra or {}).items():
        data.setdefault(key, value)
    ctes, params = _ctes(writes)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH next AS (
                UPDATE deep_research_tasks SET event_seq = event_seq + 1 WHERE id = %s RETURNING id, event_seq, cancel_requested
            ){ctes}
            INSERT INTO deep_research_events (task_id, seq, type, data, created_at)
            SELECT %s, event_seq, %s, %s::jsonb, clock_timestamp() FROM next
            RETURNING seq, (SELECT cancel_requested FROM next)
            """,
            [task_id, *params, task_id, type, stored_json(data)],
        )
        row = cursor.fetchone()
    if row is None:
        raise TaskGone(task_id)
    # A wake-up, not the event: listeners read the stored events (research.feed), so the signal
    # carries no data to serialise. Inside a caller's transaction it waits for the commit.
    wake_up = {"seq": row[0], "type": type, "task_uuid": str(task_uuid)}
    transaction.on_commit(lambda: signal(task_uuid, wake_up))
    return bool(row[1])


# A data-modifying statement (INSERT, UPDATE) of a research's own rows and its parameters, run as
# a CTE of one statement: it reads its task's id as `next.id` from the CTE `next` (one row, none
# for a task that is gone, so nothing is written for it). The CTEs of one statement share one
# snapshot and cannot see each other's changes, so two writes of one row never go together.
Write = tuple[str, list]


def write_along(task_id: int, writes: Sequence[Write]) -> None:
    """`writes` in one statement, without an event (what a research reported after its last one)."""
    if not writes:
        return
    ctes, params = _ctes(writes)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH next AS (SELECT id FROM deep_research_tasks WHERE id = %s){ctes} SELECT 1",
            [task_id, *params],
        )


def _ctes(writes: Sequence[Write]) -> tuple[str, list]:
    return "".join(f",\nw{n} AS ({sql})" for n, (sql, _) in enumerate(writes)), [
        p for _, params in writes for p in params
    ]


def stored_json(value) -> str:
    """Tool and model data may hold dates or decimals; store what JSON can hold (as text)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def shard_of(channel_name: str, shards: int) -> int:
    """The shard channels_redis publishes and subscribes a channel on: CRC-32 of the name, cut to
    4,096 slots, spread evenly over the shards. Its own function for this is private (not an API
    it keeps), so the rule is written here; tests/research/test_event_signals.py pins it to the
    installed layer's choice."""
    if shards == 1:
        return 0
    slot = binascii.crc32(channel_name.encode("utf8")) & 0xFFF
    return int(slot / (4096 / shards))


class _Publisher:
    """One daemon thread that publishes wake-ups on the channel layer's Redis with a plain
    (blocking) client, for sync code.

    Sends are fire-and-forget: the research only queues a wake-up and never waits on Redis, and a
    lost one only delays a listener until its next table read. Not the layer's own `group_send`
    from an asyncio loop thread: that costs a loop, a future and an async client's machinery per
    event for what is one PUBLISH (measured: docs/bench-history.md). The message is the one
    `group_send` would publish: the layer's own serializer, on the group's channel name and shard.
    Another layer, or Redis behind Sentinel, goes through the layer's own `group_send`."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queued: dict[str, dict] = {}  # group -> its wake-up, queued and not yet started
        self._thread: threading.Thread | None = None
        self._clients: tuple[str, list] | None = None

    def send(self, group: str, message: dict) -> None:
        """Queue a wake-up for the group's listeners, unless one is queued and not yet started.

        A listener woken reads every stored event after its last seq (research.feed), not the
        message, so the queued wake-up carries this event too: it starts after this event was
        committed. A research's bursts of events (a tool round's steps) then cost one Redis
        exchange instead of one each, on the worker and on every daphne holding a listener."""
        with self._cond:
            if group in self._queued:
                return
            self._queued[group] = message
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="channel-layer-signals", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queued:
                    self._cond.wait()
                group = next(iter(self._queued))  # the oldest first
                message = self._queued.pop(group)  # from here on, a new event needs a wake-up of its own
            try:
                self._publish(group, message)
            except Exception as exc:  # Redis down must not stop the thread; the next send reconnects
                self._clients = None
                log.warning("could not signal an event: %s", exc)

    def _publish(self, group: str, message: dict) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        shards = self._shards() if isinstance(layer, RedisPubSubChannelLayer) else None
        if shards is None:
            async_to_sync(layer.group_send)(group, message)
            return
        prefix, clients = shards
        name = f"{prefix}__group__{group}"  # RedisPubSubLoopLayer._get_group_channel_name
        clients[shard_of(name, len(clients))].publish(name, layer.serialize(message))

    def _shards(self) -> tuple[str, list] | None:
        """The layer's prefix and one blocking client per configured host (the layer's shards, in
        its order), made once; None for Sentinel hosts."""
        if self._clients is None:
            config = settings.CHANNEL_LAYERS[DEFAULT_CHANNEL_LAYER].get("CONFIG", {})
            hosts = decode_hosts(config.get("hosts"))
            if any("master_name" in host for host in hosts):
                return None
            clients = []
            for host in hosts:
                # Only the publisher's thread uses these clients: one connection each, held, instead
                # of a pool's checkout, health read and release around every PUBLISH (a fifth of it).
                # Made on first use, so a shard that is down fails the publish, which is logged.
                options = {
                    "socket_timeout": 5,
                    "socket_connect_timeout": 2,
                    "single_connection_client": True,
                    **host,
                }
                address = options.pop("address", None)
                clients.append(
                    redis.Redis.from_url(address, **options) if address else redis.Redis(**options)
                )
            self._clients = (config.get("prefix", "asgi"), clients)
        return self._clients


_signals = _Publisher()


def signal(task_uuid, payload: dict) -> None:
    """Tell live listeners. Losing this is harmless: listeners re-read the table on gaps."""
    try:
        _signals.send(group_name(task_uuid), {"type": "research.event", "event": payload})
    except Exception as exc:  # Redis down must not fail a research; the DB has the event
        log.warning("could not signal event %s of %s: %s", payload.get("seq"), task_uuid, exc)


def heartbeat_payload(task_uuid) -> dict:
    return {
        "seq": None,
        "type": Heartbeat.type,
        "task_uuid": str(task_uuid),
        "ts": timezone.now().isoformat(),
        "data": Heartbeat().data(),
    }


def events_after_query(task_id: int, after_seq: int, limit: int = 1000):
    """A task's stored events after `after_seq`, in order: the one query behind every catch-up
    (the terminal command, the SSE and WebSocket feed, the events API). Lazy, so async callers
    can iterate it with `async for`."""
    return ResearchEvent.objects.filter(task_id=task_id, seq__gt=after_seq).order_by("seq")[:limit]


def events_after(task_id: int, after_seq: int, limit: int = 1000) -> list[ResearchEvent]:
    return list(events_after_query(task_id, after_seq, limit))
