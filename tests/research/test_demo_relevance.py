"""The real-model bench's question on the demo course, against a server that knows nothing of
the prompts and only fills the JSON schemas it is sent (Scenario(mode="schema_filler")): the
research completes with three facts, of which at least three (English) and two (zh-Hant) answer
the question by the bench's own hand-made list (tests/support/demo_relevance.py), and the result
page shows them. The same
question on Gemma 3 270M: bench/real_model.py."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from channels_app.models import Channel
from materials import retrieval
from research.services import lifecycle, runner
from tests.support.demo_relevance import QUESTIONS, relevant_facts, relevant_span
from tests.support.scripted_llm import Scenario, ScriptedLLM

pytestmark = pytest.mark.slow


WANTED = {"en": 3, "zh-hant": 2}


@pytest.mark.parametrize("lang", ["en", "zh-hant"])
def test_a_server_that_only_fills_schemas_gives_three_facts_that_answer_the_question(
    client, transactional_db, settings, django_capture_on_commit_callbacks, lang
):
    settings.DEBUG = True  # the demo accounts have known passwords: loaded only with DEBUG on
    call_command("load_demo_data", verbosity=0)
    with connection.cursor() as cursor:
        # The lexical side weighs terms by the platform's statistics, cached per process for
        # minutes: read them for the demo course alone, not for what earlier tests indexed.
        cursor.execute("ANALYZE channels_app_materialchunk")
        retrieval.reload_term_statistics(cursor)
    channel = Channel.objects.get(slug="demo-course")
    student = get_user_model().objects.get(username="student1")
    server = ScriptedLLM(Scenario(mode="schema_filler")).start()  # a server of its own (no tool calls)
    settings.OPENAI_BASE_URL = server.url
    try:
        with django_capture_on_commit_callbacks(execute=False):
            task, _ = lifecycle.task_start(
                user=student, channel=channel, question=QUESTIONS[lang], queue=False
            )
            runner.execute_task(task.pk)
    finally:
        server.stop()
    task.refresh_from_db()
    assert task.status == "completed", task.error
    report = task.report_json
    relevant = relevant_facts(report)
    # zh-Hant: three facts, two of them on the hand-made list. The ranking puts the slide's
    # sentence on classifying students' questions (學生提問, 教師觀察) above the handout's sentences on
    # reading a dashboard's indicators; measured with the demo course's own term statistics
    # (docs/models.md). Gemma 3 270M, which chooses two of its three, meets three in both languages.
    assert len(report["facts"]) >= 3
    assert len(relevant) >= WANTED[lang], [s["text"] for s in report["spans"]]
    assert {f["selected_by"] for f in report["facts"]} == {"search_ranking"}
    assert "selected_by_search_ranking" in {x["code"] for x in report["limitations"]}

    client.force_login(student)
    client.cookies["django_language"] = lang
    response = client.get(f"/deep_research/task/{task.task_uuid}")
    assert response.status_code == 200
    page = re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", response.content.decode())))
    texts = {s["id"]: s["text"] for s in report["spans"]}
    shown = [texts[i] for f in relevant for i in f["spans"] if relevant_span(texts[i])]
    assert sum(1 for t in shown if re.sub(r"\s+", "", t) in page) >= WANTED[lang]
