"""The course's daily loop in a real browser, in both languages, on a desktop and a 390 x 844 phone:
the teacher's dashboard (and its CSV), the channel page's keyboard path (skip link, one tab stop
per turn), a research followed on a phone (the card and the answer brought into view, or the
"new answer" pill), the clarify card on a phone, and "ask a follow-up" from a result page. Every
page passes axe-core and fits the phone; conftest fails a test on any console error or error
response (the favicon's included)."""

from __future__ import annotations

import csv
import io
import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from channels_app.models import ChatLog, Material
from research import channel_dashboard as D
from research.models import ResearchTask
from research.services import material_coverage
from tests.e2e.conftest import LAPTOP, PHONE, shot
from tests.e2e.test_accessibility import assert_no_sideways_scrolling
from tests.e2e.test_chat_page import COMPLEX, hold
from tests.support.axe import assert_accessible
from tests.support.chat_history import seed_history
from tests.support.research_fixtures import stored_research
from tests.support.typed_reports import WEB_TOOL, ReportBuilder

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOCS = Path(__file__).resolve().parents[2] / "docs"
LANGUAGES = {"zh": "zh-TW", "en": "en-US"}


def _course(personas) -> dict:
    """A week of researches in the channel: answered by the slides or only by the web, a limit hit,
    a failure, Bloom levels, a conflict nobody reviewed; their coverage recorded."""
    slides = Material.objects.create(
        channel=personas.channel, original_name="week1-slides.pdf", kind="pdf", size_bytes=1, sha256="a" * 64
    )
    rows = [
        (
            "比較學習分析與布魯姆分類法",
            ["學習分析的定義是什麼？", "布魯姆分類法有哪些層次？"],
            [True, False],
            "analyze",
            0,
        ),
        ("什麼是形成性評量？", ["形成性評量的定義是什麼？"], [False], "understand", 1),
        (
            "形成性評量如何用在課堂？",
            ["什麼是形成性評量？", "課堂上如何實施形成性評量？"],
            [False, True],
            "apply",
            2,
        ),
        (
            "How do dashboards support learning?",
            ["What is a learning analytics dashboard?"],
            [False],
            "evaluate",
            3,
        ),
    ]
    tasks = []
    for n, (question, subs, by_slides, bloom, days_ago) in enumerate(rows):
        report = ReportBuilder(question, subs, language="en" if question.isascii() else "zh")
        for part, slide in enumerate(by_slides):
            source = (
                report.material(personas.channel.slug, slides.pk, part + 3)
                if slide
                else report.source(WEB_TOOL)
            )
            report.fact(part, source)
        user = personas.student if n % 2 == 0 else personas.other_student
        task = stored_research(
            user, personas.channel, question=question, limit_hit="max_steps" if n == 2 else ""
        )
        ResearchTask.objects.filter(pk=task.pk).update(
            report_json=report.json(),
            created_at=timezone.now() - timedelta(days=days_ago),
            needs_review=n == 0,
        )
        ChatLog.objects.filter(deep_research_task=task, kind="request").update(bloom_level=bloom)
        tasks.append(task)
    stored_research(personas.student, personas.channel, status="failed", question="一個失敗的研究")
    material_coverage.sweep()
    return {"tasks": tasks, "slides": slides}


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_teacher_reads_the_dashboard_and_its_csv_on_a_desktop_and_a_phone(open_as, personas, language):
    course = _course(personas)
    words = {
        "zh": {
            "link": "儀表板",
            "completed": "5 項已結束的研究中有 4 項完成（80 %）",
            "gaps": "教材沒有回答的內容",
            "month": "最近 30 天",
            "ai": "AI 擬的子問題",
        },
        "en": {
            "link": "Dashboard",
            "completed": "4 of 5 finished researches (80 %)",
            "gaps": "What the materials fail to answer",
            "month": "Last 30 days",
            "ai": "AI's sub-question",
        },
    }[language]
    for viewport in (LAPTOP, PHONE):
        teacher = open_as(personas.teacher, viewport=viewport, locale=LANGUAGES[language])
        teacher.goto(f"/channels/{personas.channel.slug}/")
        teacher.get_by_role("link", name=words["link"], exact=True).click()
        expect(teacher.locator("[data-figure=completed]")).to_have_text(words["completed"])
        gaps = teacher.locator("#gaps")
        expect(gaps.locator("h2")).to_have_text(words["gaps"])
        # The topic asked in two researches, in the AI's words and marked so, with both researches linked.
        top = gaps.locator(".gap-topic").first
        expect(top.locator(".gap-topic-text")).to_have_text(
            "什麼是形成性評量？"
        )  # the oldest wording names it
        expect(top.locator(".by-model-label")).to_have_text(words["ai"])
        expect(top.locator(".gap-examples a")).to_have_count(2)
        expect(teacher.locator(".trend-chart svg polyline")).to_have_count(3)
        expect(teacher.locator(".dashboard-questions tbody tr")).to_have_count(5)
        expect(teacher.locator(".dashboard-questions")).to_contain_text("s_alice")  # the owner sees names
        expect(
            teacher.locator(f'#conflicts a[href$="{course["tasks"][0].task_uuid}#conflicts"]')
        ).to_have_count(1)
        expect(teacher.locator("#materials")).to_contain_text("week1-slides.pdf")
        assert_accessible(teacher, f"the dashboard ({language}, {viewport['width']} px)")
        if viewport is PHONE:
            assert_no_sideways_scrolling(teacher)
            shot(teacher, f"phone-dashboard-{language}", full_page=True)
        else:
            shot(teacher, f"dashboard-{language}", full_page=True)
            if language == "en" and os.environ.get("UEDU_WRITE_SCREENSHOTS"):
                teacher.screenshot(path=str(DOCS / "dashboard.png"), full_page=True)

        teacher.get_by_role("link", name=words["month"]).click()
        expect(teacher.get_by_role("link", name=words["month"])).to_have_attribute("aria-current", "page")
        teacher.locator(".bloom-filter a").nth(3).click()  # the third level: apply
        expect(teacher.locator(".dashboard-questions tbody tr")).to_have_count(1)

    with teacher.expect_download() as download:
        teacher.locator("#questions a[download]").click()
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8-sig"))))
    assert len(rows) == 2 and rows[1][2] == "形成性評量如何用在課堂？"

    super_ta = open_as(personas.super_ta, viewport=PHONE, locale=LANGUAGES[language])
    super_ta.goto(f"/deep_research/channel/{personas.channel.slug}/dashboard")
    expect(super_ta.locator(".dashboard-questions tbody tr").first).to_be_visible()
    expect(super_ta.locator(".dashboard-questions")).not_to_contain_text("s_alice")
    expect(super_ta.locator(".dashboard-questions")).to_contain_text(
        D.student_label(personas.channel, personas.student.pk)
    )
    assert_no_sideways_scrolling(super_ta)

    student = open_as(personas.student, locale=LANGUAGES[language])
    student.watch.expect_status(404, "/dashboard")
    assert student.goto(f"/deep_research/channel/{personas.channel.slug}/dashboard").status == 404


# --------------------------------------------------------------------------- the channel page by keyboard


TURNS = 13


@pytest.mark.parametrize(("language", "viewport"), [("zh", LAPTOP), ("zh", PHONE), ("en", PHONE)])
def test_the_message_box_is_one_skip_or_one_tab_per_turn_away(open_as, personas, language, viewport):
    seed_history(personas.student, personas.channel, TURNS)
    page = open_as(personas.student, viewport=viewport, locale=LANGUAGES[language])
    page.goto(f"/channels/{personas.channel.slug}/")
    expect(page.locator("#conversation > .turn[tabindex='0']")).to_have_count(TURNS)
    assert_accessible(page, f"the channel page with {TURNS} turns")
    if viewport is PHONE:
        assert_no_sideways_scrolling(page)
        page.goto("/deep_research/my")
        assert_no_sideways_scrolling(page)
        assert_accessible(page, "the history on a phone")
        page.goto(f"/channels/{personas.channel.slug}/")

    # The first Tab reaches the skip link; Enter puts the focus in the message box.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "message"

    # From the top of the page, the message box is the header's stops plus one per turn away.
    page.reload()
    presses = 0
    while page.evaluate("document.activeElement.id") != "message":
        page.keyboard.press("Tab")
        presses += 1
        assert presses <= TURNS + 12, f"{presses} Tab presses and the message box is still not reached"
    assert presses >= TURNS  # each turn is passed once

    # A turn is entered with Enter, its controls are then in the order; Escape leaves it.
    research = page.locator("#conversation > .turn-research").last
    research.focus()
    page.keyboard.press("Enter")
    inside = page.evaluate(
        "document.activeElement.closest('.turn') !== null && !document.activeElement.classList.contains('turn')"
    )
    assert inside
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('.turn-research') !== null")
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.classList.contains('turn')")


# --------------------------------------------------------------------------- a research on a phone


STEP_METER = """meter => {
    window.meters = [];
    const record = () => window.meters.push(meter.hidden ? '' : meter.textContent.replace(/\\s+/g, ' ').trim());
    record();
    new MutationObserver(record).observe(meter, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def _in_view(page: Page, selector: str) -> bool:
    return page.evaluate(
        """selector => {
            const el = document.querySelector(selector), box = el.getBoundingClientRect();
            const bottom = document.getElementById('composer').getBoundingClientRect().top;
            return box.top >= 0 && box.top < bottom;
        }""",
        selector,
    )


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_research_on_a_phone_shows_its_card_then_its_answer_or_the_pill(open_as, personas, llm, language):
    seed_history(personas.student, personas.channel, 8)
    acted = hold(llm, "action")
    page = open_as(personas.student, viewport=PHONE, locale=LANGUAGES[language])
    page.goto(f"/channels/{personas.channel.slug}/")
    page.click("#dr-toggle")
    page.fill("#message", COMPLEX)
    page.click("#send")
    card = page.locator(".dr-card")
    expect(card.locator("[data-role=subquestions] li")).to_have_count(3)
    card.locator("[data-role=steps-meter]").evaluate(STEP_METER)
    assert _in_view(page, ".dr-card"), "the progress card is hidden under the composer"
    assert_no_sideways_scrolling(page)
    acted.set()
    task = ResearchTask.objects.get(user=personas.student, user_question=COMPLEX)
    answer = f'.dr-answer[data-task="{task.task_uuid}"]'
    expect(page.locator(answer)).to_be_visible()
    assert _in_view(page, answer), "the answer is hidden under the composer"
    # The step meter showed the research's own budget from its first appearance, never the hard limit.
    meters = [m for m in page.evaluate("window.meters || []") if m]
    assert meters and all("/ 30" not in m for m in meters), meters
    shot(page, f"phone-answer-in-view-{language}")

    # A second research: the reader scrolls up while it runs, and the answer is offered by the pill.
    acted = hold(llm, "action")
    page.click("#dr-toggle")
    page.fill("#message", COMPLEX + "？")
    page.click("#send")
    expect(page.locator(".dr-card [data-role=subquestions] li")).to_have_count(3)
    page.evaluate("window.scrollTo(0, 0)")
    acted.set()
    pill = page.locator("#new-answer")
    expect(pill).to_be_visible()
    expect(pill).to_have_text("新的回答 ↓" if language == "zh" else "New answer ↓")
    assert_accessible(page, "the channel page with the new-answer pill")
    pill.click()
    expect(pill).to_be_hidden()
    second = ResearchTask.objects.get(user_question=COMPLEX + "？")
    assert _in_view(page, f'.dr-answer[data-task="{second.task_uuid}"]')

    # The result page words its duration in the reader's language, in tenths under ten seconds.
    page.goto(f"/deep_research/task/{task.task_uuid}")
    duration = page.locator("[data-role=duration]").inner_text()
    assert duration.endswith(" 秒" if language == "zh" else " s") and not duration.startswith("0 ")


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_clarify_card_fits_a_phone_with_one_labelled_field_per_question(open_as, personas, llm, language):
    four = {  # the schema allows four; a weak model repeats one and asks in English
        "needs_clarification": True,
        "questions": [
            {"key": "time_range", "question": "Student's question:", "default": "2021-2026"},
            {"key": "time_range", "question": "Student's question:", "default": "2024"},
            {
                "key": "entities",
                "question": "Which programmes should be compared?",
                "default": "台大, 清大, 成大",
            },
            {"key": "metrics", "question": "Which figures?", "default": "enrolment, dropout rate"},
        ],
    }
    llm.on("context", lambda body: {"content": json.dumps(four, ensure_ascii=False)})
    page = open_as(personas.student, viewport=PHONE, locale=LANGUAGES[language])
    page.goto(f"/channels/{personas.channel.slug}/")
    page.click("#dr-toggle")
    page.fill("#message", "最近幾間大學的學習成效比較")
    page.click("#send")
    clarify = page.locator("#clarify")
    expect(clarify).to_be_visible()
    labels = clarify.locator(".clarify-field").all_inner_texts()
    assert labels == (
        ["時間範圍", "比較對象", "指標數據"]
        if language == "zh"
        else ["Time range", "Entities compared", "Figures"]
    ), labels
    assert "Student's question" not in clarify.inner_text()
    start = clarify.locator("[data-action=start-with-context]")
    box, height = start.bounding_box(), page.viewport_size["height"]
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, (box, height)
    composer = page.locator("#composer").bounding_box()
    assert composer["height"] <= height, composer
    assert_no_sideways_scrolling(page)
    assert_accessible(page, "the clarify card on a phone")
    shot(page, f"phone-clarify-{language}")


# --------------------------------------------------------------------------- follow-up


@pytest.mark.parametrize(("language", "viewport"), [("zh", LAPTOP), ("en", PHONE)])
def test_ask_a_follow_up_from_the_result_page(open_as, personas, llm, language, viewport):
    old = stored_research(
        personas.student,
        personas.channel,
        question="什麼是形成性評量？",
        answer="## Answer\n\nFormative assessment guides teaching while it happens [1].\n",
    )
    seed_history(personas.student, personas.channel, 22)  # the research is older than the conversation sent
    page = open_as(personas.student, viewport=viewport, locale=LANGUAGES[language])
    page.goto(f"/deep_research/task/{old.task_uuid}")
    page.get_by_role("link", name="追問" if language == "zh" else "Ask a follow-up").click()
    chip = page.locator("#follow-up")
    expect(chip).to_contain_text("什麼是形成性評量？")
    if viewport is PHONE:
        assert_no_sideways_scrolling(page)
    assert_accessible(page, "the channel page with a follow-up attached")
    page.fill("#message", "它和總結性評量有什麼不同？")
    page.click("#send")
    expect(page.locator(".chat-answer").last).to_contain_text("Scripted answer to")
    sent = llm.calls("chat")[-1]["messages"]
    assert any("Formative assessment guides teaching" in m["content"] for m in sent)
    chip.get_by_role("button").click()
    expect(chip).to_have_count(0)


# --------------------------------------------------------------------------- a decision closes the review


@pytest.mark.parametrize(("language", "viewport"), [("zh", LAPTOP), ("en", PHONE)])
def test_a_decision_is_explained_beside_its_field_and_closes_the_review(
    open_as, personas, language, viewport
):
    from tests.web.test_review_closing import conflicted

    task = conflicted(personas)
    result = f"/deep_research/task/{task.task_uuid}"
    teacher = open_as(personas.teacher, viewport=viewport, locale=LANGUAGES[language])
    teacher.goto("/deep_research/review")
    expect(teacher.locator(".queue-row")).to_have_count(1)
    teacher.goto(result)
    form = teacher.locator(".decision-form").first
    form.locator("input[name=choice]").first.check()
    form.locator("button[type=submit]").click()  # no reason: refused
    # Back on the result page (its own address), at the form, the message beside the reason.
    teacher.wait_for_url(f"**{result}#decide-*")
    error = teacher.locator(".decision-form .error")
    expect(error).to_have_text(
        "請說明裁定的理由。" if language == "zh" else "Please give a reason for the decision."
    )
    expect(error).to_be_in_viewport()
    assert form.locator("textarea[name=reason]").get_attribute("aria-invalid") == "true"
    assert_accessible(teacher, "the result page with a refused decision")
    # (The result page's phone layout comes with its typed report: not measured here.)
    form = teacher.locator(".decision-form").first
    form.locator("input[name=choice]").first.check()
    form.locator("textarea[name=reason]").fill("The filing is the primary source.")
    form.locator("button[type=submit]").click()
    expect(teacher.locator(".message.success")).to_be_visible()
    teacher.goto("/deep_research/review")
    expect(teacher.locator(".queue-row")).to_have_count(0)  # decided: reviewed
    task.refresh_from_db()
    assert task.conflicts_decided_at is not None and task.conflict_decisions.count() == 1
    # The student's page shows the decision beside the conflict's two sides.
    teacher.goto(result)
    conflict = teacher.locator("#conflicts")
    expect(conflict.locator(".conflict-decision-reason").first).to_have_text(
        "The filing is the primary source."
    )
    expect(conflict.locator(".conflict-side")).to_have_count(2)
    assert_no_sideways_scrolling(teacher)
    if language == "zh" and os.environ.get("UEDU_WRITE_SCREENSHOTS"):
        conflict.screenshot(path=str(DOCS / "decided-conflict.png"))
