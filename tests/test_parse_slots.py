"""How many bounded parse children run at once: at most UEDU_PARSE_CHILDREN_PER_PROCESS in one
process and UEDU_PARSE_CHILDREN_PLATFORM across the platform (a Redis set the processes share).
A parse waits for a slot within the time its caller gives; inside `refuse_when_busy` (the chat's
fetch_url in the web process) it is refused at once, and no child is started."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import threading
import time

import pytest
import redis

from tests.support.slow_parse import take
from tests.support.stack import ROOT, child_env, wait_for
from uedu_dr import parse_slots
from uedu_dr.bounded_process import refuse_when_busy, run_bounded

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def empty_platform_set():
    client, key = parse_slots._redis(), parse_slots._key()
    client.delete(key)
    yield
    client.delete(key)


def parse(seconds: float, *, wait: float) -> tuple:
    return run_bounded(take, (seconds,), memory_mb=512, timeout_seconds=30, wait_seconds=wait)


def in_background(seconds: float) -> threading.Thread:
    """A parse that holds its slot for `seconds`, started once its child is alive."""
    before = len(multiprocessing.active_children())
    thread = threading.Thread(target=parse, args=(seconds,), kwargs={"wait": 0}, daemon=True)
    thread.start()
    wait_for(lambda: len(multiprocessing.active_children()) > before, message="the first child")
    return thread


def test_one_process_runs_at_most_its_bound_and_a_request_a_person_waits_on_is_refused_at_once(settings):
    settings.UEDU_PARSE_CHILDREN_PER_PROCESS = 1
    settings.UEDU_PARSE_CHILDREN_PLATFORM = 8
    holder = in_background(4)

    started = time.monotonic()
    with refuse_when_busy():
        refused = parse(0, wait=30)
    assert refused == ("busy",) and time.monotonic() - started < 1
    assert len(multiprocessing.active_children()) == 1  # no second child was started

    # A worker's parse (materials, a research's fetch) waits its turn within the time it has.
    assert parse(0, wait=30) == ("ok", "read")
    assert time.monotonic() - started > 2
    holder.join(30)
    assert parse(0, wait=0) == ("ok", "read")  # the slot came back


def test_the_platform_bound_holds_across_processes(settings):
    settings.UEDU_PARSE_CHILDREN_PER_PROCESS = 4
    settings.UEDU_PARSE_CHILDREN_PLATFORM = 1
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import django; django.setup()\n"
            "from uedu_dr.bounded_process import run_bounded\n"
            "from tests.support.slow_parse import take\n"
            # It holds its slot long enough for this process to see it on a loaded machine.
            "print(run_bounded(take, (15,), memory_mb=512, timeout_seconds=60, wait_seconds=0))",
        ],
        cwd=ROOT,
        env=child_env(UEDU_PARSE_CHILDREN_PLATFORM="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    def the_other_holds_a_slot() -> bool:
        if other.poll() is not None:  # it ended before this process saw its child: say what it printed
            raise AssertionError(f"the other process ended early: {other.communicate()[0]}")
        return parse_slots.running_on_platform() == 1

    try:
        wait_for(the_other_holds_a_slot, timeout=120, message="the other process's child")
        assert parse(0, wait=0) == ("busy",)  # this process has room; the platform has none
        assert parse(0, wait=60) == ("ok", "read")  # after the other one's child
        assert "('ok', 'read')" in other.communicate(timeout=60)[0]
    finally:
        other.kill()
    assert parse_slots.running_on_platform() == 0


def test_a_slot_of_a_process_that_died_lapses_by_itself(settings):
    settings.UEDU_PARSE_CHILDREN_PER_PROCESS = 4
    settings.UEDU_PARSE_CHILDREN_PLATFORM = 1
    client, key = parse_slots._redis(), parse_slots._key()
    client.zadd(key, {"held-by-a-live-process": time.time() + 60})
    assert parse(0, wait=0) == ("busy",)
    client.zadd(key, {"held-by-a-live-process": time.time() - 1})  # its lapse time has passed
    assert parse(0, wait=0) == ("ok", "read")


def test_without_redis_the_process_bound_still_holds(settings, monkeypatch, caplog):
    settings.UEDU_PARSE_CHILDREN_PER_PROCESS = 1
    monkeypatch.setattr(
        parse_slots, "_client", redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    )
    monkeypatch.setattr(parse_slots, "_client_location", settings.CACHES["default"]["LOCATION"])
    holder = in_background(3)
    assert parse(0, wait=0) == ("busy",)
    holder.join(30)
    assert parse(0, wait=0) == ("ok", "read")
    assert "the platform bound is not counted" in caplog.text
