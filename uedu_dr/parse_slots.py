"""How many bounded parse children (uedu_dr.bounded_process) run at once.

Each child may take UEDU_EXTRACTION_MAX_MEMORY_MB (1 GB) for up to its deadline. Without a bound,
requests that each start one (a chat message may fetch four pages, twenty messages a minute)
could keep dozens alive on one node. Two bounds hold:

- per process, UEDU_PARSE_CHILDREN_PER_PROCESS (a semaphore): what one web or worker process may
  put on its machine;
- across the platform, UEDU_PARSE_CHILDREN_PLATFORM: one Redis sorted set, a member per running
  child scored by when it lapses (its deadline and a margin), so a process that dies holding
  slots frees them by itself.

A caller waits for a slot up to the time it is given (0: not at all) and is told when none came.
If Redis is away the platform bound is not counted (logged); the per-process one still holds."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid

import redis
from django.conf import settings

log = logging.getLogger(__name__)

POLL_SECONDS = 0.2
LAPSE_MARGIN_SECONDS = 30  # past its deadline a child is killed; its slot goes a little later

_lock = threading.Lock()
_semaphore: threading.BoundedSemaphore | None = None
_semaphore_size = 0
_client: redis.Redis | None = None
_client_location = ""

# Drop the lapsed, then add ours if there is room: one atomic step, so two processes never both
# take the last slot.
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0
"""


def _process_semaphore() -> threading.BoundedSemaphore:
    global _semaphore, _semaphore_size
    size = settings.UEDU_PARSE_CHILDREN_PER_PROCESS
    with _lock:
        if _semaphore is None or _semaphore_size != size:  # a changed setting (tests) gets a new one
            _semaphore, _semaphore_size = threading.BoundedSemaphore(size), size
        return _semaphore


def _redis() -> redis.Redis:
    global _client, _client_location
    location = settings.CACHES["default"]["LOCATION"]
    with _lock:
        # a changed cache setting (tests override it) gets a client of its own
        if _client is None or _client_location != location:
            _client = redis.Redis.from_url(location, socket_timeout=2, socket_connect_timeout=2)
            _client_location = location
        return _client


def _key() -> str:
    return f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:parse-children"


def running_on_platform() -> int:
    """How many children hold a platform slot now (lapsed ones not counted)."""
    return int(_redis().zcount(_key(), time.time(), "+inf"))


def _take_platform_slot(hold_seconds: float) -> str | None:
    """A platform slot's id, "" when Redis is away (not counted), or None when all are taken."""
    slot, now = uuid.uuid4().hex, time.time()
    lapse = hold_seconds + LAPSE_MARGIN_SECONDS
    try:
        taken = _redis().eval(
            _ACQUIRE, 1, _key(), now, settings.UEDU_PARSE_CHILDREN_PLATFORM, now + lapse, slot, int(lapse) + 1
        )
    except redis.RedisError as exc:
        log.warning("parse slots unavailable, the platform bound is not counted: %s", exc)
        return ""
    return slot if taken else None


def _release_platform_slot(slot: str) -> None:
    if not slot:
        return
    try:
        _redis().zrem(_key(), slot)
    except redis.RedisError as exc:
        log.warning("parse slot not released (it lapses by itself): %s", exc)


@contextlib.contextmanager
def parse_slot(*, wait_seconds: float, hold_seconds: float):
    """Yields True with a slot in this process and on the platform, held for the block, or False
    when none came within `wait_seconds`. `hold_seconds` is the child's deadline."""
    deadline = time.monotonic() + max(0.0, wait_seconds)
    semaphore = _process_semaphore()
    acquired = (
        semaphore.acquire(timeout=wait_seconds) if wait_seconds > 0 else semaphore.acquire(blocking=False)
    )
    if not acquired:
        yield False
        return
    try:
        while (slot := _take_platform_slot(hold_seconds)) is None:
            if time.monotonic() + POLL_SECONDS > deadline:
                yield False
                return
            time.sleep(POLL_SECONDS)
        try:
            yield True
        finally:
            _release_platform_slot(slot)
    finally:
        semaphore.release()
