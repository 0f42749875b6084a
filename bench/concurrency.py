"""How many researches one Celery worker process runs at once.

Runs N=1 and N=50 researches against the scripted LLM (fixed latency per call, its own
process) through a real threads-pool worker, side by side in one run, and prints:
  makespan_ratio              makespan(N=50) / makespan(N=1)               (target ≤ 3)
  engine_cpu_ms_per_research  worker CPU time during N=50, per research
  overhead_share              (makespan(N=1) − LLM latency on its critical path) / makespan(N=1)  (target < 0.05)

    .venv/bin/python bench/concurrency.py [--n 50] [--latency 1.0]
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from _stack import BenchStack


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per scripted LLM call (a quick real model call)")
    parser.add_argument("--repeat", type=int, default=3, help="N=1 runs (the median is used)")
    args = parser.parse_args()

    stack = BenchStack("concurrency")
    try:
        llm_url = stack.scripted_llm(latency=args.latency)
        worker = stack.worker(concurrency=max(64, args.n + 8), OPENAI_BASE_URL=llm_url, OPENAI_API_KEY="bench",
                              UEDU_DEEP_RESEARCH_DAILY_CAP_USD="100000")
        import psutil
        from django.conf import settings
        from django.core.management import call_command

        settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = 100000
        call_command("load_demo_data", verbosity=0)
        from channels_app.models import Channel
        from django.contrib.auth import get_user_model

        from django.db import connection
        from django.utils import timezone

        from research.models import ResearchTask
        from research.services import lifecycle

        teacher = get_user_model().objects.get(username="teacher")  # unlimited quota
        channel = Channel.objects.get(slug="demo-course")
        question = "請比較學習分析與布魯姆分類法在課程設計中的角色"

        def batch(n: int) -> tuple[float, list]:
            started = time.monotonic()
            def one(i: int) -> int:
                try:
                    return lifecycle.task_start(user=teacher, channel=channel, question=f"{question} #{i}")[0].pk
                finally:
                    connection.close()

            with ThreadPoolExecutor(max_workers=min(n, 8)) as pool:  # as many students pressing at once
                tasks = list(pool.map(one, range(n)))
            wall_start = timezone.now() - timedelta(seconds=time.monotonic() - started)
            pending = set(tasks)
            while pending:
                done = set(ResearchTask.objects.filter(pk__in=pending, status__in=ResearchTask.TERMINAL).values_list("pk", flat=True))
                pending -= done
                if pending:
                    time.sleep(0.02)
            rows = ResearchTask.objects.filter(pk__in=tasks)
            # The end is when the last task was finished in the database, not when we noticed.
            elapsed = (max(rows.values_list("finished_at", flat=True)) - wall_start).total_seconds()
            return elapsed, list(rows.values_list("status", flat=True))

        batch(1)  # warm-up: imports, first connections, model load
        singles, criticals, tool_times, calls = [], [], [], []
        for _ in range(args.repeat):
            elapsed, statuses = batch(1)
            assert statuses == ["completed"], statuses
            task = ResearchTask.objects.order_by("-pk").first()
            # The research's own LLM calls, one after another (the Bloom classifier of the
            # question runs beside it and is not on its critical path).
            own_calls = task.transcript.count()
            rounds: dict[int, int] = {}
            for step in task.steps.all():
                rounds[step.round] = max(rounds.get(step.round, 0), step.duration_ms)
            singles.append(elapsed)
            calls.append(own_calls)
            criticals.append(own_calls * args.latency)
            tool_times.append(sum(rounds.values()) / 1000)
        pick = sorted(range(len(singles)), key=lambda i: singles[i])[len(singles) // 2]
        single, critical, tools = singles[pick], criticals[pick], tool_times[pick]

        proc = psutil.Process(worker.pid)
        cpu_before = sum(proc.cpu_times()[:2])
        many, statuses = batch(args.n)
        cpu_used = sum(proc.cpu_times()[:2]) - cpu_before
        result = {
            "bench": "concurrency",
            "n": args.n,
            "latency_s": args.latency,
            "llm_calls_per_research": calls[pick],
            "tool_time_on_critical_path_s": round(tools, 3),
            "makespan_1_s": round(single, 3),
            "makespan_n_s": round(many, 3),
            "makespan_ratio": round(many / single, 3),
            "engine_cpu_ms_per_research": round(cpu_used * 1000 / args.n, 1),
            # As the issue defines it: everything but the scripted LLM latency (tools included).
            "overhead_share": round((single - critical) / single, 4),
            # The engine's own share: neither the LLM's latency nor the tools' real work.
            "engine_overhead_share": round((single - critical - tools) / single, 4),
            "completed": statuses.count("completed"),
        }
        print(json.dumps(result))
    finally:
        stack.close()


if __name__ == "__main__":
    main()
