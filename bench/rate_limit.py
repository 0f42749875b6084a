"""A burst of researches against a provider that limits tokens per minute, with and without the
endpoint's shared limiter (agent/endpoint_limiter.py), side by side in one run.

The scripted LLM (its own process) answers like a hosted small model (0.8 s to the first token,
5,000 prompt tokens/s, 80 answer tokens/s; `--latency-model`) and enforces a tokens-per-minute
limit as a provider does: every answered request counts its usage when it arrived, over a sliding
minute, and a request above the limit is answered 429 at once with the Retry-After that would let
it fit. Two threads-pool workers (production settings) run N researches started at once by the
demo teacher on the demo channel.

The limit is set from one research measured alone first, so that the batch needs about
`--minutes` minutes of the limit: limit = N × tokens of that research / minutes.

Per mode, printed as a line each, then the JSON line last:
  completed / failed          researches of the batch by status (target: all N completed)
  makespan_s                  first start to last finish (the rows' finished_at)
  limit_allows_s              the tokens the provider counted in the batch at the limit's pace:
                              counted / limit × 60 s (the sliding minute lets a first minute's worth
                              through at once, so a perfect pacer can finish a little under this)
  makespan_ratio              makespan_s / limit_allows_s (target ≤ 1.2 with the limiter)
  http_429                    requests the provider refused
  queued_s_p50_p95            a call's wait for the limiter (the transcript's stream.queued_seconds)
The mode without the limiter is the product before it, for comparison; it is not judged.

    .venv/bin/python bench/rate_limit.py [--n 50] [--minutes 2] [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from _stack import BenchStack, reference_cpu_ms, uptime

RATIO_TARGET = 1.2
HOSTED = {"first_token": 0.8, "prefill_rate": 5000, "decode_rate": 80}


def run_batch(stack: BenchStack, *, n: int, tpm: int, limited: bool, label: str) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from channels_app.models import Channel
    from research.models import ResearchTask, TranscriptEntry
    from research.services import lifecycle

    llm_url = stack.scripted_llm(**HOSTED, tokens_per_minute=tpm)
    env = {
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "bench",
        "UEDU_DEEP_RESEARCH_DAILY_CAP_USD": "100000",
    }
    if limited:
        env["UEDU_LLM_TOKENS_PER_MINUTE"] = str(tpm)
    workers = [stack.worker(concurrency=max(64, n + 8), name=f"rate-{label}-{i}", **env) for i in range(2)]
    teacher = get_user_model().objects.get(username="teacher")
    channel = Channel.objects.get(slug="demo-course")

    def one(i: int) -> int:
        try:
            question = f"請比較學習分析與布魯姆分類法在課程設計中的角色 ({label} {i})"
            return lifecycle.task_start(user=teacher, channel=channel, question=question)[0].pk
        finally:
            connection.close()

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=8) as pool:
        tasks = list(pool.map(one, range(n)))
    wall_start = timezone.now() - timedelta(seconds=time.monotonic() - started)
    deadline = time.monotonic() + 1800
    terminal = list(ResearchTask.TERMINAL)
    while time.monotonic() < deadline:
        if ResearchTask.objects.filter(pk__in=tasks, status__in=terminal).count() == n:
            break
        time.sleep(1)
    rows = ResearchTask.objects.filter(pk__in=tasks)
    statuses = list(rows.values_list("status", flat=True))
    finished = [f for f in rows.values_list("finished_at", flat=True) if f]
    makespan = (max(finished) - wall_start).total_seconds() if finished else float("inf")
    stats = json.load(urllib.request.urlopen(llm_url.rsplit("/v1", 1)[0] + "/_stats", timeout=10))
    queued = sorted(
        q or 0.0
        for q in TranscriptEntry.objects.filter(task_id__in=tasks).values_list(
            "response__stream__queued_seconds", flat=True
        )
    )
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.wait(60)
    allows = stats["counted_tokens"] / tpm * 60
    return {
        "mode": label,
        "limiter": limited,
        "n": n,
        "completed": statuses.count("completed"),
        "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
        "makespan_s": round(makespan, 1),
        "tokens_per_minute": tpm,
        "counted_tokens": stats["counted_tokens"],
        "limit_allows_s": round(allows, 1),
        "makespan_ratio": round(makespan / allows, 3) if allows else None,
        "http_429": stats["rate_limited"],
        "requests": stats["requests"],
        "queued_s_p50_p95": [
            round(statistics.median(queued), 2) if queued else None,
            round(queued[int(0.95 * (len(queued) - 1))], 2) if queued else None,
        ],
        "uptime": uptime(),
    }


def single_research_tokens(stack: BenchStack) -> int:
    """The tokens one research's calls (and its question's Bloom classification) use, alone."""
    result = run_batch(stack, n=1, tpm=10**9, limited=False, label="alone")
    if result["completed"] != 1:
        raise SystemExit(f"a research alone did not complete: {result['statuses']}")
    return result["counted_tokens"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=2.0, help="minutes of the limit the batch needs")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run without the limiter")
    args = parser.parse_args()

    stack = BenchStack("rate-limit")
    runs = []
    try:
        from django.conf import settings
        from django.core.management import call_command

        settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = 100000
        call_command("load_demo_data", verbosity=0)
        reference_before = reference_cpu_ms()
        alone = single_research_tokens(stack)
        tpm = max(10_000, math.ceil(args.n * alone / args.minutes))
        print(f"one research alone: {alone} tokens; limit {tpm} tokens per minute", file=sys.stderr)
        modes = [("limiter", True)] + ([] if args.no_baseline else [("no-limiter", False)])
        for label, limited in modes:
            run = run_batch(stack, n=args.n, tpm=tpm, limited=limited, label=label)
            print(json.dumps(run), file=sys.stderr, flush=True)
            runs.append(run)
        reference_after = reference_cpu_ms()
    finally:
        stack.close()

    head = runs[0]
    failures = []
    if head["completed"] != args.n:
        failures.append(
            f"{args.n - head['completed']} of {args.n} researches did not complete: {head['statuses']}"
        )
    if head["makespan_ratio"] is None or head["makespan_ratio"] > RATIO_TARGET:
        failures.append(
            f"makespan {head['makespan_s']} s is above {RATIO_TARGET} × the {head['limit_allows_s']} s the limit allows"
        )
    result = {
        "bench": "rate_limit",
        "n": args.n,
        "completed": head["completed"],
        "failed": args.n - head["completed"],
        "makespan_s": head["makespan_s"],
        "limit_allows_s": head["limit_allows_s"],
        "makespan_ratio": head["makespan_ratio"],
        "http_429": head["http_429"],
        "tokens_per_minute": head["tokens_per_minute"],
        "tokens_one_research": alone,
        "queued_s_p50_p95": head["queued_s_p50_p95"],
        "without_limiter": {
            k: runs[1][k]
            for k in ("completed", "statuses", "makespan_s", "makespan_ratio", "http_429", "requests")
        }
        if len(runs) > 1
        else None,
        "reference_cpu_ms_before": reference_before,
        "reference_cpu_ms": reference_after,
        "uptime": uptime(),
        "ok": not failures,
    }
    for failure in failures:
        print("target missed: " + failure, file=sys.stderr)
    print(json.dumps(result))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
