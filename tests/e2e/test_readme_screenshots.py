"""The README's screenshots, taken from a research a student could run on the demo course: the
demo materials and catalogue searched by the real tools through a Celery worker, the progress
card mid-research, the answer with its citations, and the result page's facts grouped by
sub-question; and the whole result page in both languages, on a laptop and a phone.

The scripted LLM plans realistic sub-questions and selects spans of the demo materials and of
each catalogue tool's sources, so every fact shown is the demo data's own words.
With UEDU_WRITE_SCREENSHOTS=1 the pictures replace docs/chat-progress.png, docs/chat-answer.png,
docs/result-facts.png and docs/phone-result.png (the result page on a 390 x 844 phone); otherwise
they go to test-artifacts/ like every other screenshot."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from channels_app.models import Channel
from research.models import ResearchTask
from tests.e2e.conftest import ARTIFACTS, PHONE
from tests.e2e.test_chat_page import hold
from tests.support.factories import PASSWORD
from tests.support.scripted_llm import Scenario, candidates_in, selection, sub_question_of

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOCS = Path(__file__).resolve().parents[2] / "docs"
QUESTION = (
    "請整合課程教材與課程目錄，說明布魯姆分類法（Bloom's taxonomy）與檢索增強生成（RAG）在本課程中的角色"
)
# In the question's own words: a sub-question that adds a figure or a name the question lacks is
# not shown (the plan is the AI's, checked like the rest of its words).
SUB_QUESTIONS = [
    "本課程教材如何介紹布魯姆分類法（Bloom's taxonomy）？",
    "本課程教材如何說明檢索增強生成（RAG）？",
    "課程目錄中哪些課程與團隊論文涵蓋 Bloom's taxonomy 與 RAG？",
]
TOPICS = [("Bloom", "布魯姆"), ("Retrieval-augmented", "檢索增強生成", "RAG")]


def quotable(text: str, title: str) -> str:
    """The first statement of a passage that reads as a sentence (slides and handouts also hold
    titles, questions and arrows, and break lines mid-thought; catalogue entries start with their
    name)."""
    pieces = [
        re.sub(r"^(Description|Abstract|Summary): ", "", p.strip(" ·-–"))
        for p in re.split(r"[\n。！？!?⚠]|(?<=\.)\s", text)
    ]
    sentences = (
        p
        for p in pieces
        if 20 <= len(p) <= 120
        and "→" not in p
        and p not in title
        and "[DEMO]" not in p
        and not re.match(r"^[A-Z][A-Za-z ]*: ", p)
    )  # the entry's fields (University: …, Venue: …)
    return next(sentences, pieces[0][:120]).rstrip(".")


def picture(name: str) -> Path:
    folder = DOCS if os.environ.get("UEDU_WRITE_SCREENSHOTS") == "1" else ARTIFACTS
    folder.mkdir(exist_ok=True)
    return folder / f"{name}.png"


@pytest.fixture
def demo(settings, transactional_db):
    settings.DEBUG = True  # the demo loader refuses known passwords with DEBUG off
    call_command("load_demo_data", verbosity=0)
    student = get_user_model().objects.get(username="student1")
    student.set_password(PASSWORD)  # open_as logs in with the tests' password
    student.save()
    return Channel.objects.get(slug="demo-course"), student


def test_the_readme_screenshots_show_a_research_over_the_demo_course(open_as, demo, llm):
    channel, student = demo
    llm.reset(Scenario())

    def action(body):
        """One round of the calls a model would make: the materials, the course, the team's papers."""
        if any(m["role"] == "assistant" for m in body["messages"]):
            return {"content": "DONE"}
        return {
            "tool_calls": [
                {
                    "name": "search_channel_materials",
                    "arguments": {"query": "布魯姆分類法 Bloom 檢索增強生成 RAG 引用"},
                },
                {"name": "get_course_overview", "arguments": {"course": "EDS101"}},
                {"name": "list_uedu_team_papers", "arguments": {"query": "Bloom"}},
            ]
        }

    def planner(body):
        plan = json.loads(llm._default("planner", body, None)["content"])
        for sub, text in zip(plan["sub_questions"], SUB_QUESTIONS):
            sub["question"] = text
        return {"content": json.dumps(plan, ensure_ascii=False)}

    def selector(body):
        """For each of the first two sub-questions, the materials' spans on its topic; for the
        catalogue's, one span of each catalogue entry and team paper."""
        titles = {
            match[0]: match[1]
            for match in re.findall(r'<source id="(\d+)"[^>]*title="([^"]*)"', body["messages"][1]["content"])
        }
        asked = sub_question_of(body)
        topic = next((words for n, words in enumerate(TOPICS) if asked == SUB_QUESTIONS[n]), None)
        materials, others, seen = [], [], set()
        for span_id, text in candidates_in(body):
            title = titles.get(span_id.split(".")[0], "")
            if len(text.strip()) < 12:
                continue
            if title.startswith("EDS101_"):
                if topic and any(word in text for word in topic):
                    materials.append(span_id)
            elif title not in seen:
                seen.add(title)
                others.append(span_id)
        return selection(materials[:3] if topic else others[:4])

    llm.on("action", action)
    llm.on("planner", planner)
    llm.on("selector", selector)
    reflected = hold(llm, "reflection")  # the card stays up, its tool calls done, for the picture

    page = open_as(student)
    page.goto(f"/channels/{channel.slug}/")
    page.click("#dr-toggle")
    page.fill("#message", QUESTION)
    page.click("#send")
    card = page.locator(".dr-card")
    expect(card.locator("[data-role=subquestions] li")).to_have_count(3, timeout=60_000)
    expect(card.locator("[data-role=step-list] li.status-ok")).to_have_count(3, timeout=60_000)
    page.screenshot(path=str(picture("chat-progress")))
    reflected.set()

    task = ResearchTask.objects.get(user=student)
    answer = page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    expect(answer).to_be_visible(timeout=90_000)
    task.refresh_from_db()
    assert task.status == "completed" and len(task.citations_json) >= 3
    assert {c["source_tool"] for c in task.citations_json} == {
        "search_channel_materials",
        "get_course_overview",
        "list_uedu_team_papers",
    }
    answer.locator('.answer-body a[href$="-1"]').first.click()  # one citation opened, as a reader would
    expect(answer.locator(".citation details").first).to_have_attribute("open", "")
    page.set_viewport_size({"width": 1280, "height": 1500})  # the whole answer above the composer
    answer.screenshot(path=str(picture("chat-answer")))

    page.set_viewport_size({"width": 1280, "height": 860})
    page.goto(f"/deep_research/task/{task.task_uuid}")
    facts = page.locator(".result-page .report-facts")
    expect(facts.locator(".report-section")).not_to_have_count(0)  # grouped by sub-question
    # every fact on the ledger is a span the model pointed at and code kept; what was not shown
    # is listed apart, never with the model's words
    rows = list(task.claims.filter(kind="fact"))
    assert rows and all(r.action == "kept" and r.verdict == "supported" for r in rows)
    facts.screenshot(path=str(picture("result-facts")))

    # The whole page in both languages, on a laptop and on a phone, for a reader's eye (always
    # in test-artifacts/): nothing wider than the screen (tests/e2e/test_accessibility.py).
    english = open_as(student, locale="en-US")
    for lang, reader in (("zh", page), ("en", english)):
        for size, viewport in (("desktop", {"width": 1280, "height": 860}), ("phone", PHONE)):
            reader.set_viewport_size(viewport)
            reader.goto(f"/deep_research/task/{task.task_uuid}")
            expect(reader.locator(".result-page .dr-answer")).to_be_visible()
            assert reader.evaluate(
                "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
            ), (lang, size)
            reader.screenshot(path=str(ARTIFACTS / f"result-page-{lang}-{size}.png"), full_page=True)
            if lang == "zh" and size == "phone":
                reader.screenshot(path=str(picture("phone-result")))
