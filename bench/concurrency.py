"""How many researches the Celery workers of one box run at once, and what each costs in CPU.

For each scripted LLM latency (default 0.2 s, a GPU-served model, where the engine's own time
matters most; then 0.5 s, a quick hosted model),
in one run: the scripted LLM (its own process, fixed latency per call) and real threads-pool
workers, as `make run` starts them (one process per core, `--workers`), with the production
settings they are deployed with; then N=1 researches (median of --repeat) and one batch of N=50
are timed, and the workers' CPU time during the batch is read. The headline latency is run again
with a single worker process, side by side. Prints per run and, last, one JSON line:

  makespan_ratio              makespan(N=50) / makespan(N=1) at the headline latency (target ≤ 2,
                              and all N completed)
  makespan_ratio_one_worker   the same with one worker process (not a target: the GIL holds one
                              process to one core, which is why `make run` starts one per core)
  engine_overhead_ms          makespan(N=1) minus the scripted LLM's latency on its critical path:
                              what the research itself costs in wall time (Celery pickup, DB,
                              tools, the engine), absolute, at the default latency
  engine_cpu_ms_per_research  the workers' CPU time during the N=50 batch, per research: reported
                              beside the reference work before and after it, not a target by
                              itself (on a shared VM it moves with the machine's speed)
  worker_user_system_ms_per_research (per run) that CPU split into the workers' own code and the
                              kernel's work for them (sockets, futexes, thread switches)
  completed                   researches of the batch that completed; any other outcome fails
  researches_per_worker       how the batch spread over the worker processes
  reference_cpu_ms            CPU ms of a fixed piece of Python work timed right after the batch:
                              how fast the (virtual) machine was then; the CPU per research moves
                              with it from run to run
  steal_ms_per_research       time the hypervisor gave this VM's vCPUs to others during the
                              batch, per research (the makespan waits for it)
  reference_after_wait        a smaller piece of similar Python work (~0.2 ms), its median CPU run
                              back to back and run after 0.5 s asleep, and their ratio: on this VM
                              the same work cost 1.3-3.4x more after a wait (caches and the vCPU go
                              cold; docs/performance.md), which a research meets after
                              every call to the scripted LLM

    .venv/bin/python bench/concurrency.py [--n 50] [--latency 0.2 --latency 0.5] [--workers 2] [--profile]

`--profile` records the first worker with py-spy (GIL holder only; SPY_FLAGS replaces `--gil`)
during the batch (pip install py-spy) into var/bench/concurrency-<latency>.speedscope.json.
Beware: `--gil` gives a sample to the last thread that held the GIL while no thread holds it, so
threads that block on the network (the event publisher, database calls) look larger than they
are; a thread's CPU time (/proc/<pid>/task, time.thread_time) is the reliable split.
Exits non-zero when a target fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from _stack import ROOT, BenchStack, reference_cpu_ms, uptime

RATIO_TARGET = 2.0


def measure(stack: BenchStack, latency: float, n: int, repeat: int, profile: bool, workers: int) -> dict:
    import psutil
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from channels_app.models import Channel
    from research.models import ResearchTask
    from research.services import lifecycle

    llm_url = stack.scripted_llm(latency=latency)
    # As `make run` starts them: `workers` threads-pool processes, each able to take the whole
    # batch, on the research queue, and the worker of the light jobs (the questions' Bloom level).
    env = dict(OPENAI_BASE_URL=llm_url, OPENAI_API_KEY="bench", UEDU_DEEP_RESEARCH_DAILY_CAP_USD="100000")
    pool = [
        stack.worker(concurrency=max(64, n + 8), name=f"bench{i}", queues="celery", **env)
        for i in range(workers)
    ]
    light = stack.light_worker(**env)
    teacher = get_user_model().objects.get(username="teacher")  # unlimited quota
    channel = Channel.objects.get(slug="demo-course")
    question = "請比較學習分析與布魯姆分類法在課程設計中的角色"

    def batch(size: int) -> tuple[float, list[int], list[str]]:
        started = time.monotonic()

        def one(i: int) -> int:
            try:
                return lifecycle.task_start(
                    user=teacher, channel=channel, question=f"{question} #{latency}-{size}-{i}"
                )[0].pk
            finally:
                connection.close()

        with ThreadPoolExecutor(max_workers=min(size, 8)) as pool:  # as many students pressing at once
            tasks = list(pool.map(one, range(size)))
        wall_start = timezone.now() - timedelta(seconds=time.monotonic() - started)
        pending = set(tasks)
        deadline = time.monotonic() + 600
        while pending and time.monotonic() < deadline:
            done = set(
                ResearchTask.objects.filter(pk__in=pending, status__in=ResearchTask.TERMINAL).values_list(
                    "pk", flat=True
                )
            )
            pending -= done
            if pending:
                # The end is read from the rows (finished_at), so polling often buys no accuracy
                # and only takes CPU from the box being measured (20 ms polls: ~20 ms per research).
                time.sleep(0.25)
        rows = ResearchTask.objects.filter(pk__in=tasks)
        finished = [f for f in rows.values_list("finished_at", flat=True) if f]
        # The end is when the last task was finished in the database, not when we noticed.
        elapsed = (max(finished) - wall_start).total_seconds() if finished else float("inf")
        return elapsed, tasks, list(rows.values_list("status", flat=True))

    batch(1)  # warm-up: imports, first connections
    singles, criticals, tool_times, calls = [], [], [], []
    for _ in range(repeat):
        elapsed, tasks, statuses = batch(1)
        if statuses != ["completed"]:
            raise SystemExit(f"a single research did not complete: {statuses}")
        task = ResearchTask.objects.get(pk=tasks[0])
        # The research's own LLM calls, one after another (its question's Bloom classification is
        # a job of its own, on the light worker, and not on its critical path).
        own_calls = task.transcript.count()
        rounds: dict[int, int] = {}
        for step in task.steps.all():
            rounds[step.round] = max(rounds.get(step.round, 0), step.duration_ms)
        singles.append(elapsed)
        calls.append(own_calls)
        criticals.append(own_calls * latency)
        tool_times.append(sum(rounds.values()) / 1000)
    pick = sorted(range(len(singles)), key=lambda i: singles[i])[len(singles) // 2]
    single, critical, tools = singles[pick], criticals[pick], tool_times[pick]

    spy = None
    if profile:
        out = ROOT / "var" / "bench" / f"concurrency-{latency}.speedscope.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        spy = subprocess.Popen(
            [
                shutil.which("py-spy", path=str(ROOT / ".venv" / "bin")) or "py-spy",
                "record",
                "-p",
                str(pool[0].pid),
                "-r",
                "100",
                *os.environ.get("SPY_FLAGS", "--gil").split(),
                "-f",
                "speedscope",
                "-o",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1)
    # The light worker's CPU counts too: the Bloom classification each research's question adds.
    procs = [psutil.Process(worker.pid) for worker in (*pool, light)]
    # The machine's speed just before the batch, as well as after it: it moves by up to 2x within
    # minutes here (docs/performance.md), and a batch is only comparable at a known speed.
    reference_before = reference_cpu_ms()
    own, valkey = psutil.Process(), psutil.Process(stack.valkey_process.pid)
    times_before = [proc.cpu_times() for proc in procs]
    box_before, llm_before, own_before = _box_cpu(), _cpu(stack.llm_process), _cpu(own)
    steal_before = _steal()
    pg_before, valkey_before = _postgres_cpu(), _cpu(valkey)
    sessions_before = _sessions()
    received_before = [_received(worker) for worker in pool]
    many, _, statuses = batch(n)
    times_after = [proc.cpu_times() for proc in procs]
    user_used = sum(a.user - b.user for a, b in zip(times_after, times_before))
    cpu_used = user_used + sum(a.system - b.system for a, b in zip(times_after, times_before))
    box_used, llm_used, own_used = (
        _box_cpu() - box_before,
        _cpu(stack.llm_process) - llm_before,
        _cpu(own) - own_before,
    )
    steal = _steal() - steal_before
    pg_used, valkey_used = _postgres_cpu() - pg_before, _cpu(valkey) - valkey_before
    sessions = _sessions() - sessions_before
    taken = [_received(worker) - before for worker, before in zip(pool, received_before)]
    if spy is not None:
        spy.send_signal(2)
        spy.wait(30)
    reference = reference_cpu_ms()
    after_wait = _reference_after_wait()
    for worker in (*pool, light):  # the next run gets workers of its own, pointed at its own LLM server
        worker.terminate()
    for worker in (*pool, light):
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    return {
        "latency_s": latency,
        "workers": workers,
        "researches_per_worker": taken,
        "earlier_researches_per_worker": received_before,  # the warm-up and the N=1 runs
        "llm_calls_per_research": calls[pick],
        "tool_time_on_critical_path_s": round(tools, 3),
        "makespan_1_s": round(single, 3),
        "makespan_n_s": round(many, 3),
        "makespan_ratio": round(many / single, 3),
        "engine_overhead_ms": round((single - critical) * 1000, 1),
        "engine_cpu_ms_per_research": round(cpu_used * 1000 / n, 1),
        # The workers' CPU split between their own code (user) and the kernel working for them
        # (system: sockets, futexes, thread switches).
        "worker_user_system_ms_per_research": [
            round(user_used * 1000 / n, 1),
            round((cpu_used - user_used) * 1000 / n, 1),
        ],
        # Where the rest of the box's CPU went during the batch, per research: the scripted LLM
        # server, this bench (starting and polling), PostgreSQL, Valkey, and the rest (the OS, others).
        "box_cpu_ms_per_research": {
            "workers": round(cpu_used * 1000 / n, 1),
            "postgres": round(pg_used * 1000 / n, 1),
            "valkey": round(valkey_used * 1000 / n, 1),
            "scripted_llm": round(llm_used * 1000 / n, 1),
            "bench": round(own_used * 1000 / n, 1),
            "rest": round((box_used - cpu_used - pg_used - valkey_used - llm_used - own_used) * 1000 / n, 1),
        },
        # Time the hypervisor gave this VM's vCPUs to something else during the batch (steal), per
        # research: time the batch waited for a core it was owed, which lengthens its makespan.
        "steal_ms_per_research": round(steal * 1000 / n, 1),
        "completed": statuses.count("completed"),
        "postgres_sessions_per_research": round(sessions / n, 2),  # connections PostgreSQL opened
        "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        # The same fixed single-threaded Python work, timed right after the batch: how fast this
        # virtual machine was at the time (its CPU per research moves with it from run to run).
        "reference_cpu_ms": reference,
        "reference_cpu_ms_before": reference_before,
        "reference_after_wait": after_wait,
    }


def _reference_after_wait(wait: float = 0.5, repeat: int = 7) -> dict:
    """The median CPU of a ~0.2 ms piece of Python work run back to back, and run after `wait`
    seconds asleep (as a research's thread runs after each LLM call), in ms, and their ratio."""
    doc = {
        "claims": [
            {"text": f"claim {i} " * 8, "citations": [i, i + 1], "verdict": "supported"} for i in range(30)
        ]
    }

    def work() -> float:
        started = time.thread_time()
        for _ in range(5):
            back = json.loads(json.dumps(doc, ensure_ascii=False))
            sorted(back["claims"], key=lambda c: c["text"])
        return time.thread_time() - started

    work()
    hot = sorted(work() for _ in range(repeat * 3))[repeat * 3 // 2]
    cold = []
    for _ in range(repeat):
        time.sleep(wait)
        cold.append(work())
    cold_ms = sorted(cold)[repeat // 2]
    return {
        "back_to_back_ms": round(hot * 1000, 3),
        "after_wait_ms": round(cold_ms * 1000, 3),
        "ratio": round(cold_ms / hot, 2),
    }


def _cpu(process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def _sessions() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def _postgres_cpu() -> float:
    """Every PostgreSQL process's CPU: the postmaster's own and its exited backends' (counted in its
    children's times once reaped), plus the live backends'."""
    import psutil

    total = 0.0
    for proc in psutil.process_iter(["name"]):
        try:
            if proc.info["name"] != "postgres" or proc.parent() is None or proc.parent().name() == "postgres":
                continue
            times = proc.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
            total += sum(_cpu(child) for child in proc.children())
        except psutil.Error:
            continue
    return total


def _steal() -> float:
    import psutil

    return getattr(psutil.cpu_times(), "steal", 0.0)


def _box_cpu() -> float:
    import psutil

    times = psutil.cpu_times()
    return times.user + times.nice + times.system + getattr(times, "irq", 0) + getattr(times, "softirq", 0)


def _received(worker: subprocess.Popen) -> int:
    """Researches this worker has taken so far (Celery logs each task it receives)."""
    with open(worker.log_path, errors="replace") as log:  # type: ignore[attr-defined]
        return sum(
            "execute_research_task[" in line and "Task " in line and "received" in line for line in log
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument(
        "--latency",
        type=float,
        action="append",
        help="seconds per scripted LLM call; repeatable; the first is the headline (default 0.2 and 0.5)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="N=1 runs (the median is used)")
    parser.add_argument(
        "--profile", action="store_true", help="record the first worker with py-spy during each batch"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes, as `make run` starts them (default: one per core); the headline "
        "latency is also run with one worker, side by side",
    )
    args = parser.parse_args()
    latencies = args.latency or [0.2, 0.5]

    stack = BenchStack("concurrency")
    try:
        from django.conf import settings
        from django.core.management import call_command

        settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = 100000
        # One teacher starts the whole batch (the starts run in this process): no bound on what one
        # user has under way (research.services.start_limits), which is not what is measured.
        settings.UEDU_DR_MAX_ACTIVE = {**settings.UEDU_DR_MAX_ACTIVE, "teacher": None}
        call_command("load_demo_data", verbosity=0)
        runs = []
        for latency in latencies:
            run = measure(stack, latency, args.n, args.repeat, args.profile, args.workers)
            print(json.dumps(run), file=sys.stderr, flush=True)
            runs.append(run)
        single = None
        if args.workers != 1:
            single = measure(stack, latencies[0], args.n, args.repeat, False, 1)
            print(json.dumps(single), file=sys.stderr, flush=True)
    finally:
        stack.close()

    head = runs[0]
    failures = []
    for run in runs + ([single] if single else []):
        if run["completed"] != args.n:
            failures.append(
                f"{args.n - run['completed']} of {args.n} researches did not complete at {run['latency_s']} s: {run['statuses']}"
            )
    if head["makespan_ratio"] > RATIO_TARGET:
        failures.append(f"makespan ratio {head['makespan_ratio']} > {RATIO_TARGET} at {head['latency_s']} s")
    result = {
        "bench": "concurrency",
        "n": args.n,
        "completed": head["completed"],
        "latency_s": head["latency_s"],
        "makespan_ratio": head["makespan_ratio"],
        "engine_overhead_ms": head["engine_overhead_ms"],
        "engine_cpu_ms_per_research": head["engine_cpu_ms_per_research"],
        "workers": head["workers"],
        "researches_per_worker": head["researches_per_worker"],
        "makespan_ratio_one_worker": single["makespan_ratio"] if single else head["makespan_ratio"],
        "cpu_ms_one_worker": single["engine_cpu_ms_per_research"]
        if single
        else head["engine_cpu_ms_per_research"],
        "makespan_ratio_by_latency": {str(r["latency_s"]): r["makespan_ratio"] for r in runs},
        "completed_by_latency": {str(r["latency_s"]): r["completed"] for r in runs},
        "cpu_ms_by_latency": {str(r["latency_s"]): r["engine_cpu_ms_per_research"] for r in runs},
        "llm_calls_per_research": head["llm_calls_per_research"],
        "makespan_1_s": head["makespan_1_s"],
        "makespan_n_s": head["makespan_n_s"],
        "reference_cpu_ms": head["reference_cpu_ms"],
        "reference_cpu_ms_before": head["reference_cpu_ms_before"],
        "reference_after_wait": head["reference_after_wait"],
        "steal_ms_per_research": head["steal_ms_per_research"],
        "uptime": uptime(),
        "ok": not failures,
    }
    for failure in failures:
        print("target missed: " + failure, file=sys.stderr)
    print(json.dumps(result))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
