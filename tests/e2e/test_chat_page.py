"""The chat page in a real browser: Deep Research from the magnifier and from the auto-suggestion,
live progress over the WebSocket, the answer in place of the card, cancelling, the quota, the
Bloom badge, and a reload that shows the same conversation."""

from __future__ import annotations

import json
import re
import threading

import pytest
from django.db import transaction
from playwright.sync_api import Page, expect

from channels_app.models import ChatLog
from quotas import services as quotas
from research.models import ResearchTask
from tests.e2e.conftest import PHONE, shot
from tests.support.research_fixtures import gated_registry, start_here
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.slow]

COMPLEX = "請比較學習分析與布魯姆分類法在課程設計中的角色"


def chat(page: Page, personas) -> None:
    page.goto(f"/channels/{personas.channel.slug}/")
    expect(page.locator("#send")).to_be_enabled()


def conversation_snapshot(page: Page) -> dict:
    """The conversation as rendered: its text (open or closed), where its links go, its bubbles.
    Taken once every Bloom badge has settled: a question's badge is asked for every 4 s until the
    classifier (its own Celery task) has answered, so a research that ends sooner would be
    compared with a reload that already has the badge."""
    expect(page.locator("#conversation span.bloom-slot[hx-get]")).to_have_count(0, timeout=20_000)
    return page.evaluate(
        """() => {
            const root = document.getElementById('conversation');
            return {
              text: root.textContent.replace(/\\s+/g, ' ').trim(),
              links: [...root.querySelectorAll('a')].map(a => a.getAttribute('href')),
              bubbles: [...root.querySelectorAll('.bubble, .dr-card')].map(b => b.className),
            };
        }"""
    )


def assert_citation_links_resolve(page: Page, task: ResearchTask) -> None:
    """Every [N] in the answer points at an entry of its citation list, and the list is the
    report's sources that a fact rests on (the others are listed as consulted)."""
    answer = page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    cited = [s for s in task.report_json["sources"] if s["cited"]]
    expect(answer.locator(".citation")).to_have_count(len(cited))
    for href in answer.locator('.answer-body a[href^="#cite-"]').evaluate_all(
        "links => links.map(a => a.getAttribute('href'))"
    ):
        expect(answer.locator(href)).to_have_count(1)


# --------------------------------------------------------------------------- forced research, live


def cuttable_sockets(page: Page) -> list:
    """The page's research WebSockets pass through the test, which can cut one as a network would
    (both sides closed): cut the last one with sockets[-1]()."""
    routes = []

    def through(route):
        server = route.connect_to_server()
        routes.append(lambda: (server.close(), route.close()))

    page.route_web_socket(re.compile(r"/ws/deep_research/"), through)
    return routes


def hold(llm, role: str) -> threading.Event:
    """The scripted LLM's `role` calls wait until the returned event is set, then answer as usual:
    the test decides how long a research stays in that phase."""
    release = threading.Event()

    def held(body):
        release.wait(30)
        return llm._default(role, body, None)

    llm.on(role, held)
    return release


def test_a_forced_research_shows_progress_then_its_answer_and_a_reload_shows_the_same(open_as, personas, llm):
    release = hold(llm, "action")
    page = open_as(personas.student)
    chat(page, personas)
    expect(page.locator("#dr-quota")).to_have_text("今日剩餘 20／20 次")

    toggle = page.locator("#dr-toggle")
    expect(toggle).to_be_visible()
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    page.fill("#message", COMPLEX)
    page.click("#send")

    card = page.locator(".dr-card")
    expect(card).to_have_count(1)
    expect(page.locator(".bubble.question.research").last).to_contain_text(COMPLEX)
    expect(card.locator("[data-role=subquestions] li")).to_have_count(
        3
    )  # the scripted planner's sub-questions
    expect(card.locator("[data-role=steps]")).to_have_text("1")  # steps used, of the limit
    # the budget of a moderate plan (agent.engine.types.DEFAULT_BUDGETS), within the hard limit of 30
    expect(card.locator("[data-role=max-steps]")).to_have_text("6")
    expect(card.locator("[data-role=tokens]")).not_to_have_text("0")
    expect(card.locator("[data-role=elapsed]")).to_have_text(re.compile(r"^\d+:\d\d$"))
    shot(page, "chat-progress-card")
    release.set()

    task = ResearchTask.objects.get(user=personas.student)
    assert task.trigger_mode == "forced"
    answer = page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    expect(answer).to_be_visible()
    expect(card).to_have_count(0)  # replaced in place
    expect(answer).to_contain_text("本答案由 AI 整合多個資料來源，請自行核對引用內容；不可直接用於作業繳交")
    expect(page.locator("#dr-quota")).to_have_text("今日剩餘 19／20 次")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    task.refresh_from_db()
    assert task.status == "completed"
    assert_citation_links_resolve(page, task)

    live_view = conversation_snapshot(page)
    page.reload()
    expect(page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')).to_be_visible()
    assert conversation_snapshot(page) == live_view


def test_the_student_watches_tool_calls_arrive_and_follows_a_citation(open_as, personas, llm, monkeypatch):
    """A research over a known corpus, run by the real runner in this process (tools wait for a
    gate): the page opened mid-research catches up from the stored events, then follows live."""
    gate = threading.Event()
    reflected = hold(llm, "reflection")  # keeps the card up after the tool calls, until the test has looked
    interpreting = hold(llm, "interpreter")
    task, here = start_here(
        monkeypatch, gated_registry(gate), user=personas.student, channel=personas.channel, question=COMPLEX
    )
    page = open_as(personas.student)
    sockets = cuttable_sockets(page)
    wait_for(lambda: task.steps.filter(status="running").count() == 2, message="both tool calls to start")
    chat(page, personas)

    card = page.locator(f'.dr-card[data-task="{task.task_uuid}"]')
    steps = card.locator("[data-role=step-list] li")
    expect(steps).to_have_count(2)
    expect(steps.nth(0)).to_contain_text("search_channel_materials")
    expect(steps.nth(0).locator(".step-status")).to_have_text("執行中")
    expect(card.locator("[data-role=tool-calls]")).to_have_text("2")
    expect(card.locator("[data-role=phase]")).to_have_text("正在呼叫工具…")
    shot(page, "chat-progress-tools")

    # The connection drops; what happens meanwhile is caught up once the card reconnects on its own.
    expect(card).to_have_attribute("data-connected", "true")
    sockets[-1]()
    expect(card.locator("[data-role=connection]")).to_have_text("連線中斷，正在重新連線…")
    gate.set()
    expect(steps.nth(1).locator(".step-status")).to_have_text("完成")
    expect(steps).to_have_count(2)  # resumed after its last seq: nothing shown twice
    expect(steps.nth(1).locator(".step-duration")).to_have_text(re.compile(r"^\d+\.\d s$"))
    expect(card.locator("[data-role=connection]")).to_be_hidden()
    reflected.set()
    # The phase claims_verified declares (agent/engine/events.py), in the reader's language, with
    # the event's own label as the phase line's tooltip.
    phase = card.locator("[data-role=phase]")
    expect(phase).to_have_text("正在權衡證據；AI 正在詮釋事實…")
    expect(card).to_have_attribute("data-phase", "interpreting")
    expect(phase).to_have_attribute("title", "已比較數字並找出衝突")
    interpreting.set()
    here.join()
    task.refresh_from_db()
    assert task.status == "completed" and len(task.citations_json) >= 2

    answer = page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    expect(answer).to_be_visible()
    assert_citation_links_resolve(page, task)
    first = task.citations_json[0]
    answer.locator('.answer-body a[href$="-1"]').first.click()
    entry = answer.locator(".citation").first
    expect(entry.locator("details")).to_have_attribute("open", "")
    expect(entry).to_be_in_viewport()
    assert page.evaluate("location.hash") == f"#cite-{task.task_uuid.hex[:12]}-1"
    expect(entry.locator("a.cite-link")).to_have_attribute("href", first["url"])
    expect(entry).to_contain_text(first["title"])
    expect(entry).to_contain_text(first["source_tool"])
    expect(entry.locator(".badge")).to_have_text("Uedu" if first["origin"] == "internal" else "外部")
    expect(answer.locator(".badge.origin-external")).not_to_have_count(
        0
    )  # the scholarly source is labelled external
    shot(page, "chat-answer")

    answer.locator("[data-action=acknowledge]").click()
    expect(answer.locator(".ack-done")).to_have_text("你已確認此聲明。")
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).disclaimer_acknowledged_at is not None,
        message="the acknowledgement",
    )

    live_view = conversation_snapshot(page)
    page.reload()
    expect(page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')).to_be_visible()
    assert conversation_snapshot(page) == live_view


def test_cancelling_midway_shows_a_calm_message(open_as, personas, llm):
    release = hold(llm, "action")
    page = open_as(personas.student)
    chat(page, personas)
    page.click("#dr-toggle")
    page.fill("#message", COMPLEX)
    page.click("#send")
    card = page.locator(".dr-card")
    expect(card.locator("[data-role=subquestions] li")).to_have_count(3)
    card.locator("[data-action=cancel]").click()
    wait_for(
        lambda: ResearchTask.objects.filter(user=personas.student, cancel_requested=True).exists(),
        message="the cancel",
    )
    release.set()  # the engine stops at its next check

    status = page.locator(".dr-status.status-cancelled")
    expect(status).to_contain_text("這項研究已取消")
    expect(card).to_have_count(0)
    task = ResearchTask.objects.get(user=personas.student)
    assert task.status == "cancelled"
    shot(page, "chat-cancelled")
    page.reload()
    expect(page.locator(".dr-status.status-cancelled")).to_contain_text("這項研究已取消")


# --------------------------------------------------------------------------- the auto suggestion


def test_a_complex_question_gets_the_suggestion_card_and_upgrading_starts_an_auto_research(
    open_as, personas, llm
):
    page = open_as(personas.student)
    chat(page, personas)
    page.fill("#message", COMPLEX)
    page.click("#send")
    card = page.locator("#suggestion")
    expect(card).to_be_visible()
    expect(card).to_contain_text("這個問題適合用 Deep Research 深度研究")
    expect(card.locator(".reasons li")).to_have_text(["scripted: needs several sources"])
    assert (
        not ResearchTask.objects.exists() and not ChatLog.objects.exists()
    )  # nothing starts without the click
    shot(page, "chat-suggestion")

    card.locator("[data-action=upgrade]").click()
    expect(card).to_be_hidden()
    expect(page.locator(".turn-research")).to_have_count(1)
    task = ResearchTask.objects.get(user=personas.student)
    assert (task.trigger_mode, task.user_question) == ("auto", COMPLEX)


def test_keeping_normal_chat_sends_the_question_to_the_assistant(open_as, personas, llm):
    page = open_as(personas.student)
    chat(page, personas)
    page.fill("#message", COMPLEX)
    page.click("#send")
    page.locator("#suggestion [data-action=keep]").click()
    answer = page.locator(".chat-answer")
    expect(answer).to_contain_text("Scripted answer to:")
    expect(page.locator("#message")).to_have_value("")
    assert not ResearchTask.objects.exists()
    assert list(ChatLog.objects.values_list("kind", "type")) == [("request", "chat"), ("response", "chat")]


def test_a_simple_question_gets_no_suggestion_and_a_normal_answer(open_as, personas, llm):
    page = open_as(personas.student)
    chat(page, personas)
    page.fill("#message", "what is 2+2")
    page.click("#send")
    expect(page.locator(".chat-answer")).to_contain_text("Scripted answer to: what is 2+2")
    expect(page.locator("#suggestion")).to_be_hidden()
    assert llm.calls("judge") and not ResearchTask.objects.exists()


# --------------------------------------------------------------------------- quota, errors, Bloom


def test_a_used_up_quota_is_explained_and_the_question_stays_in_the_box(open_as, personas, llm):
    with transaction.atomic():
        for n in range(20):
            quotas.charge(personas.student, f"earlier-{n}")
    page = open_as(personas.student)
    chat(page, personas)
    expect(page.locator("#dr-quota")).to_have_text("今日研究次數已用完")
    page.watch.expect_status(429, "/api/deep_research/start")
    page.click("#dr-toggle")
    page.fill("#message", COMPLEX)
    page.click("#send")
    alert = page.locator("#composer-alert")
    expect(alert).to_contain_text("你在過去 24 小時內已用完 20 次 Deep Research")
    expect(page.locator("#message")).to_have_value(COMPLEX)
    assert not ResearchTask.objects.exists()


def test_an_empty_message_gets_a_readable_error(open_as, personas, llm):
    page = open_as(personas.student)
    chat(page, personas)
    page.watch.expect_status(400, "/send")
    page.fill("#message", "   ")
    page.click("#send")
    expect(page.locator("#composer-alert")).to_have_text("請輸入問題。")
    assert not ChatLog.objects.exists()


def test_the_bloom_badge_appears_when_the_classification_arrives(open_as, personas, llm):
    # The real classifier job (a Celery task on the request row) answers after a while.
    llm.reset(Scenario(latency={"bloom": 2.0}))
    llm.on(
        "bloom",
        lambda body: {
            "content": json.dumps({"level": "remember", "confidence": 0.9, "rationale": "recall a fact"})
        },
    )
    page = open_as(personas.student)
    chat(page, personas)
    page.fill("#message", "what is 2+2")
    page.click("#send")
    expect(page.locator(".chat-answer")).to_be_visible()
    question = page.locator(".bubble.question").last
    expect(question.locator(".badge.bloom")).to_have_count(0)  # nothing while the level is unknown
    expect(question.locator(".badge.bloom")).to_have_text("記憶", timeout=15_000)
    assert ChatLog.objects.get(kind="request", user=personas.student).bloom_level == "remember"


def test_the_chat_page_fits_a_phone(open_as, personas, llm):
    page = open_as(personas.student, viewport=PHONE)
    chat(page, personas)
    page.fill("#message", "what is 2+2")
    page.click("#send")
    expect(page.locator(".chat-answer")).to_be_visible()
    expect(page.locator("#send")).to_be_in_viewport()
    expect(page.locator("#dr-toggle")).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot(page, "chat-phone")
