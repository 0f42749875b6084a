"""The teacher's dashboard of a channel with a term of researches: 5,000 by default, spread over the
term's days, rendered through the whole Django stack against the real PostgreSQL.

    .venv/bin/python bench/dashboard.py [--researches 5000] [--renders 20]

Starts the embedded PostgreSQL (a scratch database) and Valkey, runs Django in this process with
DEBUG off, and writes one course channel: 40 students, 12 material files, and the researches
(82 % completed, 8 % of them at a limit, 6 % failed, 4 % cancelled; Bloom levels; each completed
one a typed report of three sub-questions in Chinese or English drawn from 120 wordings of 40
course topics, each sub-question answered by a material's page or only by the web). The
material coverage of every completed research is then recorded as the product records it
(research.services.material_coverage.record, with the local embedding model), each timed: the
work a worker does once per research.

Then renders the dashboard for 7 days, 30 days and the term, as the channel's teacher (names) and
as a Super TA (pseudonyms), and downloads both CSVs of the term, `--renders` times each,
interleaved so the shared machine's load falls on all alike. Prints the figures side by side and
one JSON line; exits non-zero when the term's page or a CSV takes more than 1.5 s at p95, or when
the page's queries grow with the period.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import timedelta

from _stack import BenchStack, uptime

P95_TARGET_S = 1.5

TOPICS_ZH = [
    "學習分析",
    "布魯姆分類法",
    "形成性評量",
    "總結性評量",
    "翻轉教室",
    "合作學習",
    "鷹架理論",
    "近側發展區",
    "後設認知",
    "自我調整學習",
    "建構主義",
    "行為主義",
    "認知負荷",
    "多元智能",
    "差異化教學",
    "專題導向學習",
    "同儕評量",
    "學習動機",
    "數位素養",
    "開放教育資源",
]
TOPICS_EN = [
    "learning analytics",
    "Bloom's taxonomy",
    "formative assessment",
    "summative assessment",
    "the flipped classroom",
    "cooperative learning",
    "scaffolding",
    "the zone of proximal development",
    "metacognition",
    "self-regulated learning",
    "constructivism",
    "behaviourism",
    "cognitive load",
    "multiple intelligences",
    "differentiated instruction",
    "project-based learning",
    "peer assessment",
    "learning motivation",
    "digital literacy",
    "open educational resources",
]
FORMS_ZH = ["{t}的定義是什麼？", "{t}在課堂上如何應用？", "{t}有哪些研究證據？"]
FORMS_EN = ["What is {t}?", "How is {t} applied in class?", "What evidence supports {t}?"]


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--researches", type=int, default=5000, help="researches in the term")
    parser.add_argument("--renders", type=int, default=20, help="timed renders of each page and CSV")
    parser.add_argument("--seed", type=int, default=45)
    args = parser.parse_args()

    os.environ.update(DEBUG="false", ALLOWED_HOSTS="testserver")
    stack = BenchStack("dashboard")
    try:
        from datetime import date

        from django.contrib.auth import get_user_model
        from django.db import connection
        from django.db.models import F
        from django.test import Client
        from django.test.utils import CaptureQueriesContext
        from django.utils import timezone

        from channels_app.models import Channel, ChatLog, Material, Membership, SuperTaNda
        from research import channel_dashboard as D
        from research.models import MaterialGap, ResearchTask
        from research.services import material_coverage
        from tests.support.typed_reports import WEB_TOOL, ReportBuilder

        rng = random.Random(args.seed)
        User = get_user_model()
        teacher = User.objects.create_user("bench-teacher")
        channel = Channel.objects.create(
            slug="bench-course", name="Bench course", owner=teacher, deep_research_enabled=True
        )
        super_ta = User.objects.create_user("bench-super-ta")
        Membership.objects.create(user=super_ta, channel=channel, role=Membership.Role.SUPER_TA)
        SuperTaNda.objects.create(user=super_ta, channel=channel, signed_on=date(2026, 1, 1))
        students = [User.objects.create_user(f"bench-student-{n}") for n in range(40)]
        Membership.objects.bulk_create(
            Membership(user=s, channel=channel, role=Membership.Role.STUDENT) for s in students
        )
        materials = [
            Material.objects.create(
                channel=channel,
                original_name=f"week{n + 1}.pdf",
                kind="pdf",
                size_bytes=1,
                sha256=f"{n:064d}",
                status="ready",
            )
            for n in range(12)
        ]

        # ------------------------------------------------------------------ the term's researches
        term = D.period("term")
        days = term.days
        statuses = ["completed"] * 82 + ["failed"] * 6 + ["cancelled"] * 4 + ["completed"] * 8
        blooms = [level for level, _ in ChatLog.Bloom.choices] + [""]
        built = time.perf_counter()
        tasks, day_of = [], []
        for n in range(args.researches):
            status = statuses[n % len(statuses)]
            english = rng.random() < 0.3
            topics, forms = (TOPICS_EN, FORMS_EN) if english else (TOPICS_ZH, FORMS_ZH)
            subs = [rng.choice(forms).format(t=rng.choice(topics)) for _ in range(3)]
            question = ("Compare " if english else "比較") + subs[0]
            report = ReportBuilder(question, subs, language="en" if english else "zh")
            for part in range(3):
                if rng.random() < 0.55:
                    material = rng.choice(materials)
                    report.fact(part, report.material(channel.slug, material.pk, rng.randint(1, 20)))
                else:
                    report.fact(part, report.source(WEB_TOOL, url=f"https://example.org/{n}/{part}"))
            completed = status == "completed"
            tasks.append(
                ResearchTask(
                    user=rng.choice(students),
                    channel=channel,
                    user_question=question,
                    trigger_mode="forced",
                    status=status,
                    report_json=report.json() if completed else {},
                    final_answer="answer" if completed else "",
                    limit_hit="max_steps" if completed and n % 12 == 0 else "",
                    cost_usd="0.0125",
                    tokens_used=3000,
                    duration_seconds=40.0,
                    needs_review=completed and n % 25 == 0,
                    finished_at=timezone.now(),
                )
            )
            day_of.append(days[rng.randrange(len(days))])
        tasks = ResearchTask.objects.bulk_create(tasks, batch_size=500)
        ChatLog.objects.bulk_create(
            (
                ChatLog(
                    channel=channel,
                    user_id=t.user_id,
                    kind=ChatLog.Kind.REQUEST,
                    type=ChatLog.Type.DEEP_RESEARCH,
                    content=t.user_question,
                    deep_research_task=t,
                    bloom_level=rng.choice(blooms),
                )
                for t in tasks
            ),
            batch_size=1000,
        )
        by_day: dict = {}
        for task, day in zip(tasks, day_of):
            by_day.setdefault(day, []).append(task.pk)
        for day, ids in by_day.items():
            at = timezone.make_aware(
                timezone.datetime.combine(day, timezone.datetime.min.time())
            ) + timedelta(hours=rng.randint(8, 22))
            ResearchTask.objects.filter(pk__in=ids).update(
                created_at=at, finished_at=at + timedelta(minutes=2)
            )
        build_s = time.perf_counter() - built

        # ------------------------------------------------------------------ recorded as the worker does
        record_times = []
        for task_id in list(material_coverage.missing()):
            began = time.perf_counter()
            material_coverage.record(task_id)
            record_times.append(time.perf_counter() - began)
        gaps = MaterialGap.objects.filter(channel=channel).count()
        topics = MaterialGap.objects.filter(channel=channel, topic_id=F("pk")).count()

        # ------------------------------------------------------------------ the page and the CSV
        clients = {"teacher": Client(), "super_ta": Client()}
        clients["teacher"].force_login(teacher)
        clients["super_ta"].force_login(super_ta)
        base = f"/deep_research/channel/{channel.slug}/dashboard"
        cases = {
            "page_7": ("teacher", f"{base}?period=7"),
            "page_30": ("teacher", f"{base}?period=30"),
            "page_term": ("teacher", f"{base}?period=term"),
            "page_term_super_ta": ("super_ta", f"{base}?period=term"),
            "page_term_bloom": ("teacher", f"{base}?period=term&bloom=analyze&page=3"),
            "csv_term": ("teacher", f"{base}.csv?period=term"),
            "csv_term_topics": ("teacher", f"{base}.csv?period=term&table=topics"),
        }

        def fetch(who: str, url: str) -> tuple[float, int, int]:
            began = time.perf_counter()
            response = clients[who].get(url)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            elapsed = time.perf_counter() - began
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}")
            return elapsed, len(body), body.count(b"\n")

        figures = {}
        for name, (who, url) in cases.items():
            fetch(who, url)  # the template cache, the session's first use
            with CaptureQueriesContext(connection) as queries:
                _, size, lines = fetch(who, url)
            figures[name] = {"queries": len(queries), "bytes": size, "lines": lines, "times": []}
        for _ in range(args.renders):
            for name, (who, url) in cases.items():
                figures[name]["times"].append(fetch(who, url)[0])

        print(f"{'':>20} {'p95 ms':>9} {'median ms':>10} {'queries':>8} {'bytes':>9}", file=sys.stderr)
        for name, f in figures.items():
            times = sorted(f["times"])
            print(
                f"{name:>20} {p95(times) * 1000:>9.1f} {times[len(times) // 2] * 1000:>10.1f} "
                f"{f['queries']:>8} {f['bytes']:>9}",
                file=sys.stderr,
            )
        result = {
            "bench": "dashboard",
            "researches": args.researches,
            "term_days": len(days),
            "completed": ResearchTask.objects.filter(channel=channel, status="completed").count(),
            "gaps": gaps,
            "topics": topics,
            "build_s": round(build_s, 1),
            "record_p95_ms": round(p95(record_times) * 1000, 1),
            "record_median_ms": round(sorted(record_times)[len(record_times) // 2] * 1000, 1),
            **{f"{name}_p95_ms": round(p95(f["times"]) * 1000, 1) for name, f in figures.items()},
            **{f"{name}_queries": f["queries"] for name, f in figures.items() if name.startswith("page")},
            "csv_term_rows": figures["csv_term"]["lines"] - 1,
            "renders": args.renders,
            "uptime": uptime(),
        }
        failures = [
            f"{name} p95 {result[f'{name}_p95_ms']} ms > {P95_TARGET_S * 1000:.0f} ms"
            for name in ("page_term", "page_term_super_ta", "csv_term", "csv_term_topics")
            if result[f"{name}_p95_ms"] > P95_TARGET_S * 1000
        ]
        if len({result[f"{p}_queries"] for p in ("page_7", "page_30", "page_term")}) != 1:
            failures.append("the page's queries differ between periods")
        result["ok"] = not failures
        if failures:
            print("targets missed: " + ", ".join(failures), file=sys.stderr)
        print(json.dumps(result))
        return 1 if failures else 0
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(main())
