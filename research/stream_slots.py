"""How many event streams (WebSocket or SSE) one user may hold open at once, across every daphne
process: one Redis sorted set per user, a member per open stream scored by when it lapses.

A stream renews its slot while it runs; a process that dies without releasing its slots leaves
them to lapse after SLOT_SECONDS, so no crash can lock a user out for longer than that. If Redis
is away, streams are not refused for it (they call no model; the database still serves them)."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import redis
from django.conf import settings

log = logging.getLogger(__name__)

SLOT_SECONDS = 120  # renewed at each visibility check, which comes far more often
_client: redis.Redis | None = None
_lock = threading.Lock()


def _redis() -> redis.Redis:
    global _client
    with _lock:
        if _client is None:
            _client = redis.Redis.from_url(
                settings.CACHES["default"]["LOCATION"], socket_timeout=2, socket_connect_timeout=2
            )
        return _client


def _key(user_id: int) -> str:
    return f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:dr-streams:{user_id}"


def acquire(user_id: int) -> str | None:
    """A slot id, or None when the user already holds UEDU_DR_MAX_STREAMS_PER_USER open streams."""
    slot = uuid.uuid4().hex
    key, now = _key(user_id), time.time()
    try:
        pipe = _redis().pipeline()
        pipe.zremrangebyscore(key, 0, now)  # slots of streams that died without a word
        pipe.zadd(key, {slot: now + SLOT_SECONDS})
        pipe.zcard(key)
        pipe.expire(key, SLOT_SECONDS)
        _, _, count, _ = pipe.execute()
        if count > settings.UEDU_DR_MAX_STREAMS_PER_USER:
            _redis().zrem(key, slot)
            return None
    except redis.RedisError as exc:
        log.warning("stream slots unavailable, not counting: %s", exc)
    return slot


def renew(user_id: int, slot: str) -> None:
    key = _key(user_id)
    try:
        pipe = _redis().pipeline()
        pipe.zadd(key, {slot: time.time() + SLOT_SECONDS})
        pipe.expire(key, SLOT_SECONDS)
        pipe.execute()
    except redis.RedisError as exc:
        log.warning("stream slot not renewed: %s", exc)


def release(user_id: int, slot: str) -> None:
    try:
        _redis().zrem(_key(user_id), slot)
    except redis.RedisError as exc:
        log.warning("stream slot not released (it lapses by itself): %s", exc)
