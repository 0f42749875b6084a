"""The endpoint's shared rate limiter on this run's real Valkey: the window, the refund of what a
reply did not use, the fair order across owners, deadlines, the shared pause, waiters that die;
then the LLM client paced by it against the scripted server enforcing a tokens-per-minute limit
over HTTP (429 with Retry-After above it). Two limiter objects with their own connections stand
for two processes; bench/concurrency.py --rate-limit runs the same across worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings

from agent.endpoint_limiter import EndpointLimiter
from agent.engine.llm import LLMClient, LLMConfig, LLMRateLimited, UsageMeter
from tests.support.scripted_llm import Scenario, ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
WINDOW = 1.5  # seconds: the tests' "minute"
MARGIN = 0.1


def connection() -> redis.Redis:
    return redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])


@pytest.fixture
def endpoint() -> str:
    return f"http://test-{uuid.uuid4().hex}/v1\nkey"  # each test its own keys


def limiter(endpoint: str, **limits) -> EndpointLimiter:
    limits.setdefault("alive_ms", 5_000)
    return EndpointLimiter(connection(), endpoint, window_seconds=WINDOW, margin_seconds=MARGIN, **limits)


def soon(seconds: float = 10.0) -> float:
    return time.monotonic() + seconds


def test_tokens_over_the_limit_wait_until_the_window_lets_the_first_lapse(endpoint):
    pace = limiter(endpoint, tokens_per_minute=1_000)
    first = pace.acquire("a", 600, soon())
    assert first is not None and first.waited < 0.2
    started = time.monotonic()
    second = pace.acquire("b", 600, soon())
    waited = time.monotonic() - started
    assert second is not None
    assert WINDOW + MARGIN - 0.3 <= waited <= WINDOW + MARGIN + 0.8
    assert second.waited == pytest.approx(waited, abs=0.05)


def test_what_a_reply_did_not_use_is_given_back_at_once(endpoint):
    pace = limiter(endpoint, tokens_per_minute=1_000)
    first = pace.acquire("a", 900, soon())
    pace.settle(first, 150)  # the reply used far less than its bound
    second = pace.acquire("b", 800, soon())
    assert second is not None and second.waited < 0.2
    third = pace.acquire("c", 100, soon(0.3))  # 950 counted: no room for 100 more
    assert third is None


def test_requests_per_minute_are_counted_whatever_their_tokens(endpoint):
    pace = limiter(endpoint, requests_per_minute=2)
    assert pace.acquire("a", 1, soon()).waited < 0.2
    assert pace.acquire("a", 1, soon()).waited < 0.2
    assert pace.acquire("a", 1, soon(0.4)) is None
    assert pace.acquire("a", 1, soon()).waited > 0.5


def test_two_processes_share_one_window(endpoint):
    one, other = limiter(endpoint, tokens_per_minute=1_000), limiter(endpoint, tokens_per_minute=1_000)
    assert one.redis is not other.redis
    one.acquire("a", 700, soon())
    assert other.acquire("b", 700, soon(0.4)) is None


def test_a_waiter_that_runs_out_of_time_leaves_the_queue_and_blocks_no_one(endpoint):
    pace = limiter(endpoint, tokens_per_minute=1_000)
    pace.acquire("a", 1_000, soon())
    assert pace.acquire("big", 900, soon(0.3)) is None
    # Had the expired ticket stayed ahead, this one would wait for its 900 tokens as well.
    later = pace.acquire("small", 900, soon())
    assert later is not None and later.waited < WINDOW + MARGIN + 0.8
    assert connection().zcard(pace.keys[2]) == 0  # the queue is empty


def test_a_waiter_whose_process_died_lapses(endpoint):
    pace = limiter(endpoint, tokens_per_minute=1_000, alive_ms=300)
    pace.acquire("a", 1_000, soon())
    # A ticket asked for once and never again, as a killed process leaves it.
    pace._acquire(keys=pace.keys, args=["dead", "ghost", 1_000, pace.window_ms, 0, 1_000, 300, 60_000])
    time.sleep(0.4)
    started = time.monotonic()
    assert pace.acquire("b", 500, soon()) is not None
    assert time.monotonic() - started < WINDOW + MARGIN + 0.5  # not held for the dead one's 1,000 too


def test_a_research_with_many_calls_at_once_does_not_go_before_another_researchs_one(endpoint):
    pace = limiter(endpoint, tokens_per_minute=1_000)
    pace.acquire("filler", 1_000, soon())  # the window is full for WINDOW + MARGIN seconds
    order: list[str] = []
    lock = threading.Lock()

    def call(owner: str, name: str) -> None:
        permit = pace.acquire(owner, 400, soon(20))
        assert permit is not None
        with lock:
            order.append(name)

    threads = []
    for i in range(4):  # research A sends four verification batches at once
        threads.append(threading.Thread(target=call, args=("A", f"a{i}")))
        threads[-1].start()
        time.sleep(0.05)
    threads.append(threading.Thread(target=call, args=("B", "b0")))  # then B its one call
    threads[-1].start()
    for thread in threads:
        thread.join(30)
    assert sorted(order) == ["a0", "a1", "a2", "a3", "b0"]
    # B shares A's first turn: it is served among the first two, not after A's four.
    assert "b0" in order[:2]


def test_a_pause_holds_every_process(endpoint):
    one, other = limiter(endpoint, tokens_per_minute=100_000), limiter(endpoint, tokens_per_minute=100_000)
    assert one.pause(0.8) == pytest.approx(0.8, abs=0.05)
    assert one.pause(0.2) > 0.5  # a shorter pause does not cut the longer one
    permit = other.acquire("b", 10, soon())
    assert permit is not None and 0.6 <= permit.waited <= 1.3


def test_redis_being_away_sends_requests_unpaced_rather_than_failing_them():
    pace = EndpointLimiter(
        redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2),
        "http://x/v1\nkey",
        tokens_per_minute=10_000,
    )
    permit = pace.acquire("a", 10, soon())
    assert permit is not None and not permit.paced
    pace.settle(permit, 10)  # nothing to settle, nothing raised


# --------------------------------------------------------------------------- through the client


@pytest.fixture
def limited_server():
    # The provider: 3,000 tokens per WINDOW seconds, counted from what it answered.
    server = ScriptedLLM(Scenario(tokens_per_minute=3_000, rate_window=WINDOW)).start()
    yield server
    server.stop()


BLOOM_SCHEMA = {
    "type": "object",
    "properties": {"level": {"type": "string"}, "confidence": {"type": "number"}},
    "required": ["level", "confidence"],
}


def bloom_messages(words: int) -> list[dict]:
    return [
        {"role": "system", "content": "Classify the student's question into Bloom's levels."},
        {"role": "user", "content": "Student's question:\n" + "why dashboards help " * words},
    ]


def paced_client(server, pace, *, timeout: float = 10.0, records: list | None = None) -> LLMClient:
    return LLMClient(
        LLMConfig(
            models={"default": "m"},
            base_url=server.url,
            api_key="x",
            timeout=timeout,
            max_retries=2,
            limiter=pace,
        ),
        UsageMeter(),
        recorder=None if records is None else records.append,
    )


def test_paced_calls_from_two_processes_meet_no_429_and_wait_for_their_turn(limited_server, endpoint):
    # Each call's usage is about 700 tokens: the provider takes four per window.
    records: list[dict] = []
    clients = [
        paced_client(limited_server, limiter(endpoint, tokens_per_minute=3_000), records=records)
        for _ in range(2)
    ]
    for client in clients:
        client.rate_owner = uuid.uuid4().hex
    errors: list[Exception] = []

    def call(client: LLMClient) -> None:
        try:
            client.structured("bloom", bloom_messages(200), BLOOM_SCHEMA, "bloom", max_tokens=300)
        except Exception as exc:  # pragma: no cover - reported by the assertion below
            errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=call, args=(clients[i % 2],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert limited_server.rate_limited == 0  # the provider never had to refuse one
    assert len(limited_server.calls()) == 8
    assert time.monotonic() - started >= WINDOW  # the second half waited for the window
    queued = [(r["response"].get("stream") or {}).get("queued_seconds", 0) for r in records]
    assert sum(1 for q in queued if q > 0.5) >= 2  # the wait is recorded with the call


def test_a_429_pauses_every_process_for_its_retry_after_and_the_call_goes_through(endpoint):
    server = ScriptedLLM(Scenario(retry_after="1")).start()
    try:
        one, other = (paced_client(server, limiter(endpoint, tokens_per_minute=100_000)) for _ in range(2))
        server.fail("bloom", "http429")  # the provider refuses the first call once: Retry-After: 1
        took: dict[str, float] = {}

        def call(name: str, client: LLMClient) -> None:
            started = time.monotonic()
            client.structured("bloom", bloom_messages(5), BLOOM_SCHEMA, "bloom", max_tokens=300)
            took[name] = time.monotonic() - started

        first = threading.Thread(target=call, args=("first", one))
        first.start()
        time.sleep(0.3)  # the 429 is in: the pause holds the other process's call as well
        call("second", other)
        first.join(10)
        assert 0.9 <= took["first"] <= 2.0
        assert 0.4 <= took["second"] <= 1.5
        # Three requests: the refused one, then one each. The SDK did not retry on its own.
        assert len(server.calls("bloom")) == 3
    finally:
        server.stop()


def test_a_call_whose_deadline_comes_before_its_turn_fails_as_rate_limited_without_being_sent(
    limited_server, endpoint
):
    pace = limiter(endpoint, tokens_per_minute=3_000)
    pace.acquire("someone", 3_000, soon())  # the window is full
    client = paced_client(limited_server, pace, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(LLMRateLimited):
        client.structured("bloom", bloom_messages(5), BLOOM_SCHEMA, "bloom", max_tokens=300)
    assert time.monotonic() - started < 1.2  # it gave up at its deadline, not at its turn
    assert limited_server.calls() == []


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "UEDU_LLM_TOKENS_PER_MINUTE",
            "500",
            "UEDU_LLM_TOKENS_PER_MINUTE must be 0 (not limited) or at least",
        ),
        ("UEDU_LLM_TOKENS_PER_MINUTE", "lots", "UEDU_LLM_TOKENS_PER_MINUTE has a value that does not parse"),
        ("UEDU_LLM_REQUESTS_PER_MINUTE", "-1", "UEDU_LLM_REQUESTS_PER_MINUTE must be 0 (not limited)"),
    ],
)
def test_a_bad_rate_limit_stops_start_up_with_its_name(name, value, message):
    env = {
        **os.environ,
        name: value,
        "DATABASE_URL": "postgresql://x@127.0.0.1:1/x",
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "DJANGO_SETTINGS_MODULE": "uedu_dr.settings.dev",
    }
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert message in result.stderr


def test_the_limiter_is_off_by_default_and_paces_every_client_once_set(settings):
    from agent.llm_factory import llm_config

    assert llm_config().limiter is None
    settings.UEDU_LLM_TOKENS_PER_MINUTE = 50_000
    first, second = llm_config().limiter, llm_config().limiter
    assert isinstance(first, EndpointLimiter) and first is second  # one per process
    assert first.tpm == 50_000 and first.rpm == 0


def test_a_call_reserves_what_calls_like_it_used_not_its_whole_answer_bound(endpoint):
    server = ScriptedLLM(Scenario(latency={"*": 0.6})).start()
    try:
        pace = limiter(endpoint, tokens_per_minute=100_000)
        client = paced_client(server, pace)
        client.rate_owner = "r"
        in_flight: list[int] = []

        def reserved_while_answering() -> None:
            time.sleep(0.3)
            in_flight.append(sum(int(v) for v in connection().hvals(pace.keys[1])))

        for _ in range(2):
            before = sum(int(v) for v in connection().hvals(pace.keys[1]))
            watcher = threading.Thread(target=reserved_while_answering)
            watcher.start()
            client.structured("bloom", bloom_messages(5), BLOOM_SCHEMA, "bloom", max_tokens=4_000)
            watcher.join()
            in_flight[-1] -= before
        first, second = in_flight
        assert first > 4_000  # nothing known yet: the whole bound
        assert second < 1_000  # the first answer was a few dozen tokens
    finally:
        server.stop()
