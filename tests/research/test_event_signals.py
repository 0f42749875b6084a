"""Channel-layer wake-ups for research events, on the real Valkey channel layer."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from research.services import events


async def _drain(layer, channel: str, wait: float = 1.0) -> list[int]:
    """The seqs of the wake-ups the channel receives until it has been quiet for `wait` seconds."""
    got = []
    while True:
        try:
            got.append((await asyncio.wait_for(layer.receive(channel), timeout=wait))["event"]["seq"])
        except asyncio.TimeoutError:
            return got


def test_events_stored_while_a_wake_up_is_queued_share_it_and_a_later_one_gets_its_own():
    task_uuid = uuid.uuid4()
    loop = events._signals.loop()

    async def scenario():
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(events.group_name(task_uuid), channel)
        try:
            # Block the signal loop's thread (a sleep that does not yield), so that the next
            # wake-ups queue up behind it and none can start before all three are signalled.
            blocking = threading.Event()

            async def hold_the_loop():
                blocking.set()
                time.sleep(0.5)

            busy = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(hold_the_loop(), loop))
            assert blocking.wait(5)
            for seq in (1, 2, 3):
                events.signal(task_uuid, {"seq": seq, "type": "step"})
            await busy
            first = await _drain(layer, channel)
            events.signal(task_uuid, {"seq": 4, "type": "step"})  # the queued one has gone: a new wake-up
            second = await _drain(layer, channel)
            return first, second
        finally:
            await layer.group_discard(events.group_name(task_uuid), channel)

    first, second = async_to_sync(scenario)()
    assert first == [1]  # one wake-up: the listener reads events 1–3 from the table
    assert second == [4]
