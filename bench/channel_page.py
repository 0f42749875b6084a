"""The channel page with a long history: one student with 20 past turns, one with 500, rendered
through the whole Django stack (middleware, session, templates) against the real PostgreSQL.

    .venv/bin/python bench/channel_page.py [--renders 60] [--small 20] [--large 500]

Starts the embedded PostgreSQL (a scratch database) and Valkey, runs Django in this process with
DEBUG off, writes the two histories (every seventh turn counting back from the latest a finished
Deep Research with its answer and sources, the others a chat question and its answer, so both
latest pages hold the same mix; tests/support/chat_history.py)
and renders each student's channel page `--renders` times through Django's test client, the two
interleaved so that the shared machine's load falls on both alike. Also renders the "Load older"
fragment for the oldest page of the long history (the deepest cursor).

Prints the figures side by side, then one JSON line. Exits non-zero unless the page at --large
turns renders in at most 1.5x the p95 time of the page at --small turns and with the same number
of queries (docs/ui.md: the page renders the latest chat.conversation.TURNS_PER_PAGE turns).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

from _stack import BenchStack, uptime

P95_RATIO_TARGET = 1.5


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--renders", type=int, default=60, help="timed renders of each page")
    parser.add_argument("--small", type=int, default=20, help="past turns of the first student")
    parser.add_argument("--large", type=int, default=500, help="past turns of the second student")
    args = parser.parse_args()

    # The page as deployed: DEBUG off (no per-query SQL log, no debug templates).
    os.environ.update(DEBUG="false", ALLOWED_HOSTS="testserver")
    stack = BenchStack("channel_page")
    try:
        from django.contrib.auth import get_user_model
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from channels_app.models import Channel, Membership
        from chat.conversation import TURNS_PER_PAGE
        from tests.support.chat_history import seed_history

        User = get_user_model()
        teacher = User.objects.create_user("bench-teacher")
        channel = Channel.objects.create(
            slug="bench-course", name="Bench course", owner=teacher, deep_research_enabled=True
        )
        clients = {}
        for turns in (args.small, args.large):
            student = User.objects.create_user(f"bench-student-{turns}")
            Membership.objects.create(user=student, channel=channel, role=Membership.Role.STUDENT)
            seed_history(student, channel, turns)
            client = Client()
            client.force_login(student)
            clients[turns] = client
        url = f"/channels/{channel.slug}/"

        def render(client, path=url) -> tuple[float, bytes]:
            began = time.perf_counter()
            response = client.get(path)
            elapsed = time.perf_counter() - began
            if response.status_code != 200:
                raise SystemExit(f"{path} answered {response.status_code}")
            return elapsed, response.content

        figures = {}
        for turns, client in clients.items():
            render(client)  # the session's first use and the template cache
            with CaptureQueriesContext(connection) as queries:
                _, page = render(client)
            figures[turns] = {
                "queries": len(queries),
                "html_bytes": len(page),
                "turns_shown": page.count(b'<li class="turn '),
                "times": [],
            }
        for _ in range(args.renders):
            for turns, client in clients.items():
                figures[turns]["times"].append(render(client)[0])

        # The deepest "Load older": follow the cursors to the oldest page of the long history.
        client, link, hops = clients[args.large], url, 0
        while True:
            found = re.search(rb'hx-get="(/channels/[^"]+/turns\?[^"]+)"', render(client, link)[1])
            if not found:
                break
            link, hops = found.group(1).decode().replace("&amp;", "&"), hops + 1
        with CaptureQueriesContext(connection) as queries:
            render(client, link)
        fragment_queries = len(queries)
        fragment_times = [render(client, link)[0] for _ in range(args.renders)]

        small, large = figures[args.small], figures[args.large]
        p95_small, p95_large = p95(small["times"]) * 1000, p95(large["times"]) * 1000
        print(f"{'past turns':>22} {args.small:>10} {args.large:>10}", file=sys.stderr)
        print(f"{'p95 render (ms)':>22} {p95_small:>10.1f} {p95_large:>10.1f}", file=sys.stderr)
        for key in ("html_bytes", "queries", "turns_shown"):
            print(f"{key:>22} {small[key]:>10} {large[key]:>10}", file=sys.stderr)
        result = {
            "bench": "channel_page",
            "turns_per_page": TURNS_PER_PAGE,
            "small_turns": args.small,
            "large_turns": args.large,
            "p95_ms_small": round(p95_small, 1),
            "p95_ms_large": round(p95_large, 1),
            "p95_ratio": round(p95_large / p95_small, 2),
            "median_ms_small": round(sorted(small["times"])[len(small["times"]) // 2] * 1000, 1),
            "median_ms_large": round(sorted(large["times"])[len(large["times"]) // 2] * 1000, 1),
            "html_bytes_small": small["html_bytes"],
            "html_bytes_large": large["html_bytes"],
            "queries_small": small["queries"],
            "queries_large": large["queries"],
            "turns_shown_small": small["turns_shown"],
            "turns_shown_large": large["turns_shown"],
            "load_older_pages": hops,
            "p95_ms_oldest_fragment": round(p95(fragment_times) * 1000, 1),
            "queries_oldest_fragment": fragment_queries,
            "renders": args.renders,
            "uptime": uptime(),
        }
        failures = []
        if result["p95_ratio"] > P95_RATIO_TARGET:
            failures.append(f"p95 at {args.large} turns > {P95_RATIO_TARGET}x p95 at {args.small}")
        if result["queries_large"] != result["queries_small"]:
            failures.append("query counts differ")
        result["ok"] = not failures
        if failures:
            print("targets missed: " + ", ".join(failures), file=sys.stderr)
        print(json.dumps(result))
        return 1 if failures else 0
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(main())
