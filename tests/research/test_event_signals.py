"""Channel-layer wake-ups for research events, on the real Valkey channel layer."""

from __future__ import annotations

import asyncio
import threading
import uuid

import pytest
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from research.services import events


async def _drain(layer, channel: str, wait: float = 1.0) -> list[int]:
    """The seqs of the wake-ups the channel receives until it has been quiet for `wait` seconds."""
    got = []
    while True:
        try:
            got.append((await asyncio.wait_for(layer.receive(channel), timeout=wait))["event"]["seq"])
        except TimeoutError:
            return got


def _hold_publisher(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Make the publisher's thread wait inside its next publish until released, so that wake-ups
    sent meanwhile queue up behind it."""
    inside, release = threading.Event(), threading.Event()
    publish = events._signals._publish

    def held(group, message):
        if not inside.is_set():
            inside.set()
            assert release.wait(10)
        publish(group, message)

    monkeypatch.setattr(events._signals, "_publish", held)
    return inside, release


def test_events_stored_while_a_wake_up_is_queued_share_it_and_a_later_one_gets_its_own(monkeypatch):
    task_uuid, other_uuid = uuid.uuid4(), uuid.uuid4()
    inside, release = _hold_publisher(monkeypatch)

    async def scenario():
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(events.group_name(task_uuid), channel)
        try:
            events.signal(other_uuid, {"seq": 1, "type": "step"})  # another task's wake-up holds the thread
            assert await asyncio.to_thread(inside.wait, 5)
            for seq in (1, 2, 3):
                events.signal(task_uuid, {"seq": seq, "type": "step"})
            release.set()
            first = await _drain(layer, channel)
            events.signal(task_uuid, {"seq": 4, "type": "step"})  # the queued one has gone: a new wake-up
            second = await _drain(layer, channel)
            return first, second
        finally:
            await layer.group_discard(events.group_name(task_uuid), channel)

    first, second = async_to_sync(scenario)()
    assert first == [1]  # one wake-up: the listener reads events 1–3 from the table
    assert second == [4]


def test_a_wake_up_reaches_a_listener_in_the_layers_own_format():
    """The publisher writes on Redis itself; a consumer subscribed through the channel layer gets
    the message exactly as the layer's group_send would have delivered it."""
    task_uuid = uuid.uuid4()
    payload = {
        "seq": 7,
        "type": "step",
        "task_uuid": str(task_uuid),
        "ts": "2026-12-01T00:00:00+00:00",
        "data": {"說明": "中文"},
    }

    assert _woken(task_uuid, payload) == {"type": "research.event", "event": payload}


def _woken(task_uuid, payload: dict, *, layer_class: str | None = None) -> dict:
    """What a listener of the task's group receives once the event is signalled."""

    async def scenario():
        layer = get_channel_layer()
        if layer_class:
            assert type(layer).__name__ == layer_class
        channel = await layer.new_channel()
        await layer.group_add(events.group_name(task_uuid), channel)
        try:
            events.signal(task_uuid, payload)
            return await asyncio.wait_for(layer.receive(channel), timeout=5)
        finally:
            await layer.group_discard(events.group_name(task_uuid), channel)

    return async_to_sync(scenario)()


def test_another_channel_layer_gets_its_wake_ups_through_its_own_group_send(settings):
    """The publisher writes on Redis itself only for the pub/sub layer; any other layer (here
    channels_redis's list-based RedisChannelLayer on the same Valkey) goes through the layer's
    own group_send, and a listener of that layer is woken all the same."""
    pubsub = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": pubsub["hosts"], "prefix": f"{pubsub.get('prefix', 'asgi')}:core-test"},
        }
    }
    task_uuid = uuid.uuid4()
    payload = {"seq": 3, "type": "step", "task_uuid": str(task_uuid), "data": {"說明": "中文"}}

    assert _woken(task_uuid, payload, layer_class="RedisChannelLayer") == {
        "type": "research.event",
        "event": payload,
    }


def test_a_redis_behind_sentinel_is_left_to_the_layers_own_group_send(settings):
    """A Sentinel host has no fixed address to publish on: the publisher makes no client of its
    own for it (and _publish then calls the layer's group_send)."""
    live = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [{"sentinels": [("127.0.0.1", 26379)], "master_name": "uedu"}]},
        }
    }
    assert events._Publisher()._shards() is None
    # A plain host gets one client of the publisher's own, holding one connection.
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": live, "prefix": "p"},
        }
    }
    prefix, clients = events._Publisher()._shards()
    assert prefix == "p" and len(clients) == 1 and clients[0].connection is not None
    # A host that is down fails the publish, which is logged; the next publish tries again.
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:6399/0"], "prefix": "p"},
        }
    }
    with pytest.raises(redis.exceptions.ConnectionError):
        events._Publisher()._shards()


def test_the_publisher_picks_the_shard_the_channel_layer_listens_on():
    """events.shard_of is the layer's rule, written out (the layer's own function is private).
    If a channels_redis upgrade changes the rule, this fails instead of wake-ups going to a shard
    nobody listens on."""
    from channels_redis.utils import _consistent_hash  # the private reference, in the test only

    names = [events.group_name(uuid.UUID(int=n * 7919)) for n in range(300)] + ["asgi__group__é中"]
    for shards in range(1, 6):
        for name in names:
            assert events.shard_of(f"asgi__group__{name}", shards) == _consistent_hash(
                f"asgi__group__{name}", shards
            )
    assert {events.shard_of(f"asgi__group__{n}", 3) for n in names} == {0, 1, 2}
