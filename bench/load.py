"""Load: 100 students start researches within one minute while 100 sockets stream the events.

Against a real stack started here (daphne, a threads-pool Celery worker, PostgreSQL, Valkey) and
the scripted LLM at a realistic latency per call (its own process). Each student makes two
start attempts with a quota of one, and the platform cap admits only part of the worst case, so
429s and 503s are part of the run. Prints (last line) accepted, completed, lost_events,
duplicate_events, quota_overruns, cap_overruns, p95_event_latency_ms, http_429, http_503, http_5xx.

    .venv/bin/python bench/load.py [--students 100] [--window 60] [--latency 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import threading
import time
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from _stack import BIN, BenchStack

TERMINAL = {"completed", "failed", "cancelled"}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--window", type=float, default=60.0, help="seconds over which the starts are spread")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per scripted LLM call")
    parser.add_argument("--cap-share", type=float, default=0.2, help="the daily cap admits this share of the worst cases at once")
    args = parser.parse_args()

    worst = Decimal("0.10")
    cap = (worst * int(args.students * args.cap_share)).quantize(Decimal("0.01"))
    common = {"UEDU_DR_QUOTA_STUDENT": "1", "UEDU_DR_WORST_CASE_USD": str(worst), "UEDU_DEEP_RESEARCH_DAILY_CAP_USD": str(cap),
              "UEDU_DR_RATE_START": "100/m", "ALLOWED_HOSTS": "127.0.0.1,localhost", "DEBUG": "false",
              "UEDU_DR_COUNTER_SEARCH": "off"}
    stack = BenchStack("load")
    try:
        import os

        os.environ.update(common)
        from django.conf import settings

        settings.UEDU_DR_QUOTA_STUDENT = 1
        llm_url = stack.scripted_llm(latency=args.latency)
        env = dict(common, OPENAI_BASE_URL=llm_url, OPENAI_API_KEY="bench")
        stack.worker(concurrency=160, **env)
        port = free_port()
        stack.spawn([str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "uedu_dr.asgi:application"], **env)
        base = f"http://127.0.0.1:{port}"
        _wait_http(base + "/healthz")

        users, channel_id = _students(args.students)
        result = asyncio.run(_run(base, users, channel_id, args))
        codes = result.pop("codes")
        committed = result.pop("committed")
        result.update(
            http_429=codes.count(429),
            http_503=codes.count(503),
            http_5xx=sum(1 for c in codes if c >= 500 and c != 503),  # 503 is the cap refusing, by design
            cap_overruns=sum(1 for value in committed if value > float(cap) + 1e-9),
            max_committed_usd=round(max(committed, default=0.0), 4),
        )
        result.update(_verify(result.pop("tasks"), result.pop("received"), cap))
        result.update({"bench": "load", "students": args.students, "window_s": args.window, "latency_s": args.latency,
                       "cap_usd": float(cap), "worst_case_usd": float(worst)})
        ordered = {k: result[k] for k in ("bench", "students", "accepted", "completed", "lost_events", "duplicate_events",
                                          "quota_overruns", "cap_overruns", "p95_event_latency_ms", "http_429", "http_503",
                                          "http_5xx", "window_s", "latency_s", "max_committed_usd", "cap_usd")}
        print(json.dumps(ordered))
    finally:
        stack.close()


def _wait_http(url: str, timeout: float = 60) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except Exception:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not answer")


def _students(n: int):
    from django.contrib.auth import get_user_model
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from channels_app.models import Channel, Membership

    User = get_user_model()
    teacher = User.objects.create_user("bench-teacher")
    channel = Channel.objects.create(slug="bench-course", name="Bench course", owner=teacher, deep_research_enabled=True)
    users = []
    for i in range(n):
        user = User.objects.create_user(f"bench-student-{i:03d}")
        Membership.objects.create(user=user, channel=channel, role=Membership.Role.STUDENT)
        client = Client()
        client.force_login(user)
        users.append({"id": user.pk, "token": Token.objects.create(user=user).key, "session": client.cookies["sessionid"].value})
    return users, channel.pk


async def _run(base: str, users: list[dict], channel_id: int, args) -> dict:
    import httpx
    import websockets

    codes: list[int] = []
    tasks: list[str] = []
    received: dict[str, list[tuple[int, float, str]]] = {}
    committed: list[float] = []
    stop = threading.Event()
    threading.Thread(target=_watch_cap, args=(committed, stop), daemon=True).start()

    async def stream(user: dict, task_uuid: str) -> None:
        url = base.replace("http://", "ws://") + f"/ws/deep_research/{task_uuid}/?last_seq=0"
        got = received.setdefault(task_uuid, [])
        last = 0
        for _ in range(5):  # reconnect with the last seq if the socket drops
            try:
                async with websockets.connect(url.replace("last_seq=0", f"last_seq={last}"), open_timeout=20,
                                              additional_headers={"Cookie": f"sessionid={user['session']}", "Origin": base}) as ws:
                    async for raw in ws:
                        event = json.loads(raw)
                        if event.get("seq") is not None:
                            got.append((event["seq"], time.time(), event["ts"]))
                            last = event["seq"]
                        if event["type"] in TERMINAL:
                            return
            except (OSError, websockets.ConnectionClosed):
                await asyncio.sleep(0.5)

    async def student(user: dict, delay: float, client: httpx.AsyncClient, streams: list) -> None:
        await asyncio.sleep(delay)
        for attempt in range(2):  # the second attempt is over the quota of one
            response = await client.post(f"{base}/api/deep_research/start", headers={"Authorization": f"Token {user['token']}",
                                         "Accept": "application/json"},
                                         json={"question": f"請比較學習分析與布魯姆分類法（第 {attempt + 1} 次）", "channel_id": channel_id})
            codes.append(response.status_code)
            if response.status_code == 201:
                uuid = response.json()["task_uuid"]
                tasks.append(uuid)
                streams.append(asyncio.create_task(stream(user, uuid)))
            await asyncio.sleep(random.uniform(0.5, 2.0))

    random.seed(7)
    streams: list = []
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await asyncio.gather(*(student(u, random.uniform(0, args.window), client, streams) for u in users))
    await asyncio.gather(*streams)
    stop.set()
    return {"codes": codes, "tasks": tasks, "received": received, "committed": committed}


def _watch_cap(samples: list[float], stop: threading.Event) -> None:
    """Sample spent + reserved while the load runs: the cap must hold at every moment."""
    from django.db import connection

    from quotas.services import cost_status

    while not stop.is_set():
        status = cost_status()
        samples.append(float(status.committed))
        time.sleep(0.2)
    connection.close()


def _verify(tasks: list[str], received: dict, cap: Decimal) -> dict:
    from django.db.models import Count

    from quotas.models import UsageEntry
    from research.models import ResearchEvent, ResearchTask

    deadline = time.monotonic() + 300
    while ResearchTask.objects.filter(status__in=["queued", "running"]).exists() and time.monotonic() < deadline:
        time.sleep(1)
    statuses = dict(ResearchTask.objects.values_list("status").annotate(n=Count("id")))
    lost = duplicates = 0
    latencies = []
    for uuid in tasks:
        stored = list(ResearchEvent.objects.filter(task__task_uuid=uuid).order_by("seq").values_list("seq", flat=True))
        got = [seq for seq, _, _ in received.get(uuid, [])]
        lost += len(set(stored) - set(got))
        duplicates += len(got) - len(set(got))
        for _, at, ts in received.get(uuid, []):
            latencies.append((at - datetime.fromisoformat(ts).timestamp()) * 1000)
    charges = UsageEntry.objects.filter(kind="charge").values("user").annotate(n=Count("id"))
    quota_overruns = sum(max(0, row["n"] - 1) for row in charges)
    latencies.sort()
    return {
        "accepted": len(tasks),
        "completed": statuses.get("completed", 0),
        "lost_events": lost,
        "duplicate_events": duplicates,
        "quota_overruns": quota_overruns,
        "p95_event_latency_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1) if latencies else None,
        "p50_event_latency_ms": round(statistics.median(latencies), 1) if latencies else None,
    }


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
