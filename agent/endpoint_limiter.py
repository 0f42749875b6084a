"""One pace for every call to the model endpoint, shared by every process through Redis.

A hosted provider limits the requests and the tokens each key may send per minute. Every worker
thread of every process asks here before it sends a request, so that together they stay under
those limits instead of meeting a storm of 429s and each retrying on its own.

The protocol (one Lua script per step, so each is atomic on the server):

- **the window**: each admitted request is an entry (admitted at the server's clock, with its
  tokens) in a sorted set; entries older than the window (a minute, plus a margin for the time a
  request takes to reach the provider, whose own clock starts later) no longer count. A request
  is admitted when the window's requests + 1 ≤ the requests limit and its tokens + the request's
  ≤ the tokens limit. Before a reply, its tokens are unknown: the request counts its prompt
  estimate plus its answer bound (max tokens), an upper bound; `settle` then puts the tokens the
  server reported in its place, so that capacity comes back as soon as a reply is in.
- **fair order** (start-time fair queueing): a waiting request holds a ticket in a queue ordered
  by a tag, `max(virtual time, its owner's last finish tag)`, and the owner's finish tag moves on
  by the request's cost (its tokens when tokens are limited, else 1). An owner is a research (or
  one chat operation): a research that sends five verification batches at once queues them one
  behind the other, interleaved with every other research's next call, and a research that
  started late is not stuck behind a long queue of an early one's calls. A ticket is admitted
  only when it fits together with every ticket ahead of it, so no one overtakes a waiter that
  does not fit yet, while several that fit are admitted at once (not one per poll).
- **a shared pause**: a 429's `Retry-After` stops every process until it has passed (`pause`).
- **a waiter that dies** (its process killed) stops renewing its ticket, which lapses after
  ALIVE_MS; nothing else holds a slot for it.

The script answers how long to wait (until enough of the window lapses, or the pause ends); the
waiter sleeps that long (at most POLL_SECONDS, to see earlier refunds) and asks again, and gives
up when its deadline comes first: a research's time budget counts its wait.

If Redis fails, requests are not held back for it (logged): the provider's own 429s are still
retried, each after its Retry-After."""

from __future__ import annotations

import hashlib
import logging
import random
import time
import uuid
from dataclasses import dataclass

import redis

log = logging.getLogger(__name__)

# A provider's minute starts when a request reaches it, a little after we admitted it: counting
# each request a little longer than the provider does keeps the two windows from disagreeing.
WINDOW_MARGIN_SECONDS = 1.0
POLL_SECONDS = 0.5
ALIVE_MS = 5_000
# Keys of an endpoint nobody has used for this long disappear by themselves.
IDLE_TTL_MS = 15 * 60 * 1000

# KEYS: window (zset id -> admitted ms), tokens (hash id -> tokens), queue (zset ticket -> tag),
# alive (zset ticket -> lapses ms), meta (hash: vtime, total, pause_until),
# owners (zset owner -> finish tag), costs (hash ticket -> tokens)
_PRELUDE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

_ACQUIRE = (
    _PRELUDE
    + """
local ticket, owner = ARGV[1], ARGV[2]
local tokens, window, rpm, tpm, alive, ttl =
  tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - window)
if #old > 0 then
  local freed = 0
  for _, id in ipairs(old) do
    freed = freed + (tonumber(redis.call('HGET', KEYS[2], id)) or 0)
    redis.call('HDEL', KEYS[2], id)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  redis.call('HINCRBY', KEYS[5], 'total', -freed)
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
for _, id in ipairs(dead) do
  redis.call('ZREM', KEYS[3], id)
  redis.call('HDEL', KEYS[7], id)
end
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now) end
local tag = redis.call('ZSCORE', KEYS[3], ticket)
if not tag then
  local vtime = tonumber(redis.call('HGET', KEYS[5], 'vtime')) or 0
  local finish = tonumber(redis.call('ZSCORE', KEYS[6], owner)) or 0
  tag = math.max(vtime, finish)
  local cost = 1
  if tpm > 0 then cost = tokens end
  redis.call('ZADD', KEYS[3], tag, ticket)
  redis.call('ZADD', KEYS[6], tag + cost, owner)
  redis.call('HSET', KEYS[7], ticket, tokens)
else
  tag = tonumber(tag)
end
redis.call('ZADD', KEYS[4], now + alive, ticket)
for i = 1, 7 do redis.call('PEXPIRE', KEYS[i], ttl) end
local pause = tonumber(redis.call('HGET', KEYS[5], 'pause_until')) or 0
if pause > now then return pause - now end
local rank = redis.call('ZRANK', KEYS[3], ticket)
local ahead_tokens = 0
if rank > 0 and tpm > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, rank - 1)) do
    ahead_tokens = ahead_tokens + (tonumber(redis.call('HGET', KEYS[7], id)) or 0)
  end
end
local over_requests, over_tokens = 0, 0
if rpm > 0 then over_requests = redis.call('ZCARD', KEYS[1]) + rank + 1 - rpm end
if tpm > 0 then
  over_tokens = (tonumber(redis.call('HGET', KEYS[5], 'total')) or 0) + ahead_tokens + tokens - tpm
end
if over_requests <= 0 and over_tokens <= 0 then
  redis.call('ZREM', KEYS[3], ticket)
  redis.call('ZREM', KEYS[4], ticket)
  redis.call('HDEL', KEYS[7], ticket)
  redis.call('ZADD', KEYS[1], now, ticket)
  redis.call('HSET', KEYS[2], ticket, tokens)
  redis.call('HINCRBY', KEYS[5], 'total', tokens)
  local vtime = tonumber(redis.call('HGET', KEYS[5], 'vtime')) or 0
  if tag > vtime then
    redis.call('HSET', KEYS[5], 'vtime', tostring(tag))
    vtime = tag
  end
  -- an owner whose finish tag is behind the virtual time would get the virtual time anyway
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', vtime)
  return 0
end
local wait = window
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #entries, 2 do
  over_requests = over_requests - 1
  over_tokens = over_tokens - (tonumber(redis.call('HGET', KEYS[2], entries[i])) or 0)
  if over_requests <= 0 and over_tokens <= 0 then
    wait = tonumber(entries[i + 1]) + window - now
    break
  end
end
if wait < 1 then wait = 1 end
return wait
"""
)

_SETTLE = """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local before = tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[3], 'total', tonumber(ARGV[2]) - before)
return 1
"""

_PAUSE = (
    _PRELUDE
    + """
local until_ms = now + tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', KEYS[1], 'pause_until')) or 0
if until_ms > current then
  redis.call('HSET', KEYS[1], 'pause_until', until_ms)
  current = until_ms
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return current - now
"""
)

_LEAVE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""


@dataclass
class Permit:
    ticket: str
    tokens: int
    waited: float  # seconds spent waiting for admission
    paced: bool = True  # False: Redis failed and the request went unpaced


class EndpointLimiter:
    """Requests and tokens per minute for one endpoint and key, over one Redis server.

    `requests_per_minute` / `tokens_per_minute`: 0 leaves that dimension unlimited.
    `window_seconds`: the provider's window (a minute; tests use a shorter one)."""

    def __init__(
        self,
        client: redis.Redis,
        endpoint: str,
        *,
        requests_per_minute: int = 0,
        tokens_per_minute: int = 0,
        window_seconds: float = 60.0,
        margin_seconds: float = WINDOW_MARGIN_SECONDS,
        prefix: str = "uedu",
        alive_ms: int = ALIVE_MS,
    ) -> None:
        if requests_per_minute < 0 or tokens_per_minute < 0:
            raise ValueError("rate limits must not be negative")
        self.redis = client
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self.window_ms = int((window_seconds + margin_seconds) * 1000)
        self.alive_ms = alive_ms
        digest = hashlib.sha256(endpoint.encode()).hexdigest()[:16]
        # One hash tag: every key of an endpoint lives on the same Redis Cluster slot.
        base = f"{prefix}:llm-rate:{{{digest}}}"
        self.keys = [
            f"{base}:{name}" for name in ("window", "tokens", "queue", "alive", "meta", "owners", "costs")
        ]
        self._acquire = client.register_script(_ACQUIRE)
        self._settle = client.register_script(_SETTLE)
        self._pause = client.register_script(_PAUSE)
        self._leave = client.register_script(_LEAVE)

    @staticmethod
    def endpoint_key(base_url: str, api_key: str) -> str:
        """What a provider's limit is attached to: the endpoint and the key (hashed; never stored)."""
        return f"{base_url or 'https://api.openai.com/v1'}\n{api_key}"

    def acquire(self, owner: str, tokens: int, deadline: float) -> Permit | None:
        """Wait in fair order until a request of `tokens` (prompt estimate + answer bound) fits,
        and count it; None when `deadline` (time.monotonic()) comes first."""
        started = time.monotonic()
        # A request larger than the whole limit waits for an empty window rather than forever.
        tokens = max(1, min(int(tokens), self.tpm) if self.tpm else int(tokens))
        ticket = uuid.uuid4().hex
        while True:
            try:
                wait_ms = int(
                    self._acquire(
                        keys=self.keys,
                        args=[
                            ticket,
                            owner,
                            tokens,
                            self.window_ms,
                            self.rpm,
                            self.tpm,
                            self.alive_ms,
                            IDLE_TTL_MS,
                        ],
                    )
                )
            except redis.RedisError as exc:
                log.warning("model rate limiter unavailable, sending unpaced: %s", exc)
                return Permit(ticket, tokens, time.monotonic() - started, paced=False)
            if wait_ms <= 0:
                return Permit(ticket, tokens, time.monotonic() - started)
            now = time.monotonic()
            if now >= deadline:
                self._give_up(ticket)
                return None
            # A little jitter, so that waiters told the same time do not all ask at once.
            time.sleep(min(wait_ms / 1000, POLL_SECONDS, deadline - now) * random.uniform(0.9, 1.0))

    def settle(self, permit: Permit, tokens: int) -> None:
        """The request is over: it counts `tokens` (what the server reported; 0 when it refused
        the request) instead of its estimate, for the rest of the window."""
        if not permit.paced:
            return
        try:
            self._settle(
                keys=[self.keys[0], self.keys[1], self.keys[4]], args=[permit.ticket, max(0, int(tokens))]
            )
        except redis.RedisError as exc:
            log.warning("model rate limiter: could not settle a request: %s", exc)

    def pause(self, seconds: float) -> float:
        """Hold every process's requests for `seconds` (a 429's Retry-After); a longer pause
        already set stays. Returns the pause left, in seconds."""
        try:
            left = self._pause(keys=[self.keys[4]], args=[max(1, int(seconds * 1000)), IDLE_TTL_MS])
            return int(left) / 1000
        except redis.RedisError as exc:
            log.warning("model rate limiter: could not share a pause: %s", exc)
            return 0.0

    def _give_up(self, ticket: str) -> None:
        try:
            self._leave(keys=[self.keys[2], self.keys[3], self.keys[6]], args=[ticket])
        except redis.RedisError:
            pass  # the ticket lapses after ALIVE_MS by itself
