"""Accessibility and phones, in a real browser on the live stack (docs/accessibility.md).

axe-core's WCAG 2.2 A/AA rules on every page a student, a teacher and a platform admin use around
a research run with the scripted model; the progress card's one polite live region; every main
control reached with Tab (its focus outline drawn) and used with Enter or Space; and the channel
page, the progress card and the result page at 390 x 844: no sideways scrolling, tables that
scroll in their own box, and 44 x 44 px tap targets."""

from __future__ import annotations

import threading

import pytest
from playwright.sync_api import Page, expect

from research.models import ResearchTask
from tests.e2e.conftest import PHONE, shot
from tests.e2e.test_chat_page import COMPLEX, hold
from tests.support.axe import assert_accessible
from tests.support.research_fixtures import stored_research
from tests.support.scripted_llm import candidates_in, selection

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Django's admin stylesheet forms.css @imports widgets.css; axe reads imported sheets by adding
# <style> elements, which the site's strict CSP (style-src 'self') refuses, and the test's CSP
# watch would fail. The admin is checked without axe's CSSOM preload, which only the
# css-orientation-lock rule needs; the site's own pages keep it.
ADMIN = {"preload": False}


def faithful(llm) -> threading.Event:
    """A research over the (fake) scholarly index, held at its first action until the returned
    event is set; the selection points at spans of the passages found: the report, its citations
    with their spans, the ledger and the metrics all reach the result page."""
    release = threading.Event()

    def action(body):
        release.wait(30)
        if any(m["role"] == "assistant" for m in body["messages"]):
            return {"content": "DONE"}
        return {"tool_calls": [{"name": "search_external_papers", "arguments": {"query": "learning"}}]}

    def selector(body):  # the first four spans it is shown, the sources' own words
        return selection([i for i, text in candidates_in(body) if len(text.strip()) >= 12][:4])

    llm.on("action", action)
    llm.on("selector", selector)
    return release


def test_every_page_around_a_research_passes_axe_core(open_as, personas, llm):
    release = faithful(llm)
    page = open_as(personas.student)
    page.goto(f"/channels/{personas.channel.slug}/")
    expect(page.locator("#dr-toggle")).to_be_visible()
    assert_accessible(page, "the channel page, empty")

    page.click("#dr-toggle")
    page.fill("#message", COMPLEX)
    page.click("#send")
    card = page.locator(".dr-card")
    expect(card.locator("[data-role=subquestions] li")).to_have_count(3)
    assert_accessible(page, "the channel page with a running research's progress card")
    release.set()

    task = ResearchTask.objects.get(user=personas.student)
    expect(page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')).to_be_visible()
    task.refresh_from_db()
    assert task.status == "completed"
    assert_accessible(page, "the channel page with the answer")

    result = f"/deep_research/task/{task.task_uuid}"
    page.goto(result)
    expect(page.locator("#ledger .claim")).not_to_have_count(0)
    expect(page.locator(".dr-answer .citation mark.cite-quote")).not_to_have_count(0)
    assert_accessible(page, "the result page, as its student")
    page.goto("/deep_research/my")
    expect(page.locator(".history-row")).to_have_count(1)
    assert_accessible(page, "the student's history")

    teacher = open_as(personas.teacher)
    teacher.goto(f"/channels/{personas.channel.slug}/settings/")
    expect(teacher.locator("#id_deep_research_enabled")).to_be_checked()
    assert_accessible(teacher, "the channel settings")
    teacher.watch.expect_status(400, "/settings/")  # the refused value comes back with its message
    teacher.locator("#id_auto_suggest_threshold").fill("1.5")
    teacher.locator("form.settings button[type=submit]").click()
    expect(teacher.locator(".field.has-error .error")).to_be_visible()
    assert_accessible(teacher, "the channel settings with an error")
    teacher.goto(result)
    expect(teacher.locator("#feedback")).to_be_visible()  # the reviewer's parts of the page
    assert_accessible(teacher, "the result page, as the channel's teacher")

    admin = open_as(personas.admin)
    admin.goto("/admin/research/researchtask/")
    expect(admin.locator("#result_list tbody tr")).to_have_count(1)
    assert_accessible(admin, "the admin's research list", options=ADMIN)
    admin.goto(f"/admin/research/researchtask/{task.pk}/change/")
    expect(admin.locator("#content h1")).to_be_visible()
    assert_accessible(admin, "the admin's research page", options=ADMIN)


# --------------------------------------------------------------------------- keyboard and phone

FOCUS_STATE = """(selector) => {
    const el = document.activeElement, style = getComputedStyle(el);
    return {matches: el.matches(selector), outline: style.outlineStyle, width: style.outlineWidth,
            name: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '')};
}"""


def tab_to(page: Page, selector: str, *, limit: int = 60) -> None:
    """Press Tab until the focused element matches `selector`; every control passed on the way
    shows the site's focus outline (a solid line, never none)."""
    passed = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        state = page.evaluate(FOCUS_STATE, selector)
        assert state["outline"] == "solid" and state["width"] != "0px", f"no visible focus on {state}"
        passed.append(state["name"])
        if state["matches"]:
            return
    raise AssertionError(f"{selector} not reached by Tab; focus went through {passed}")


def assert_no_sideways_scrolling(page: Page) -> None:
    width = page.evaluate(
        "({scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth})"
    )
    if width["scroll"] > width["client"]:  # name what sticks out, so the failure says where to look
        wide = page.evaluate(
            """() => [...document.querySelectorAll('body *')]
                .filter(el => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
                .slice(0, 5).map(el => el.outerHTML.slice(0, 100))"""
        )
        raise AssertionError(f"wider than the screen: {width}, {wide}")


def assert_tap_targets(page: Page, *selectors: str) -> None:
    """Each visible element of each selector is at least 44 x 44 CSS px."""
    for selector in selectors:
        targets = page.locator(selector)
        expect(targets.first).to_be_visible()
        for n in range(targets.count()):
            if not targets.nth(n).is_visible():
                continue
            box = targets.nth(n).bounding_box()
            assert box["width"] >= 44 and box["height"] >= 44, (selector, n, box)


def test_a_research_is_started_followed_and_cancelled_by_keyboard_on_a_phone(open_as, personas, llm):
    planned, acted = hold(llm, "planner"), hold(llm, "action")
    page = open_as(personas.student, viewport=PHONE)
    page.goto(f"/channels/{personas.channel.slug}/")
    expect(page.locator("#dr-toggle")).to_be_visible()
    assert_tap_targets(page, "#dr-toggle", "#send", "nav button", ".lang select")

    tab_to(page, "#message")
    page.keyboard.type(COMPLEX)
    tab_to(page, "#dr-toggle")
    page.keyboard.press("Space")
    expect(page.locator("#dr-toggle")).to_have_attribute("aria-pressed", "true")
    tab_to(page, "#send")
    page.keyboard.press("Enter")

    card = page.locator(".dr-card")
    expect(card).to_have_count(1)
    # One polite live region in the card, its phase; the meters, clock and tool list stay silent.
    live = card.locator("[aria-live]:not([aria-live=off])")
    expect(live).to_have_count(1)
    expect(live).to_have_attribute("data-role", "phase")
    expect(live).to_have_attribute("aria-live", "polite")
    live.evaluate(
        """region => {
            window.announced = [region.textContent];
            new MutationObserver(() => window.announced.push(region.textContent))
                .observe(region, {childList: true, characterData: true, subtree: true});
        }"""
    )
    planned.set()
    expect(card.locator("[data-role=subquestions] li")).to_have_count(3)
    expect(live).to_have_text("正在蒐集證據（第 1 輪）…")
    assert_no_sideways_scrolling(page)
    assert_tap_targets(page, ".dr-card [data-action=cancel]", ".dr-card-foot a")
    shot(page, "phone-progress-card")

    tab_to(page, ".dr-card [data-action=cancel]")
    page.keyboard.press("Enter")
    expect(live).to_have_text("正在取消…")
    announced = page.evaluate("window.announced")
    assert len(set(announced)) >= 3 and announced[-1] == "正在取消…", announced
    acted.set()
    expect(page.locator(".dr-status.status-cancelled")).to_be_visible()
    assert ResearchTask.objects.get(user=personas.student).status == "cancelled"


WIDE_TABLE = (
    "## Answer\n\nLearning analytics studies learner data [1].\n\n"
    "| Course | Week 1 engagement | Week 2 engagement | Week 3 engagement | Week 4 engagement | Source |\n"
    "|---|---|---|---|---|---|\n"
    "| EDS101 Introduction to learning analytics | 0.82 | 0.79 | 0.77 | 0.74 | Learning analytics overview [1] |\n"
    "| EDS102 Retrieval-augmented generation in class | 0.64 | 0.66 | 0.69 | 0.71 | Retrieval-augmented generation [2] |\n"
)


def test_the_answer_and_the_result_page_fit_a_phone_and_work_by_keyboard(open_as, personas, llm):
    task = stored_research(personas.student, personas.channel, answer=WIDE_TABLE)
    page = open_as(personas.student, viewport=PHONE)

    page.goto(f"/channels/{personas.channel.slug}/")
    answer = page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    expect(answer.locator("table")).to_be_visible()
    assert_no_sideways_scrolling(page)
    table = answer.locator(".md table")
    assert table.evaluate("t => t.scrollWidth > t.clientWidth && getComputedStyle(t).overflowX === 'auto'")
    assert_tap_targets(
        page, ".dr-answer .feedback-bar button", "[data-action=acknowledge]", ".dr-answer .bubble-head a"
    )
    shot(page, "phone-channel-answer")

    page.goto(f"/deep_research/task/{task.task_uuid}")
    expect(page.locator(".dr-answer table")).to_be_visible()
    assert_no_sideways_scrolling(page)
    assert page.locator(".dr-answer .md table").evaluate("t => t.scrollWidth > t.clientWidth")
    assert_tap_targets(
        page,
        "[data-action=copy-link]",
        ".result-actions a.button",
        ".feedback-bar button",
        ".citation summary",
    )
    shot(page, "phone-result", full_page=True)

    # The result page's controls by keyboard: copy the link, open a citation, rate the answer.
    tab_to(page, "[data-action=copy-link]")
    page.keyboard.press("Enter")
    expect(page.locator("[data-role=copy-status]")).to_have_text("已複製連結。")
    tab_to(page, ".citation summary")
    page.keyboard.press("Enter")
    expect(page.locator(".citation details").first).to_have_attribute("open", "")
    tab_to(page, ".feedback-bar button[name=useful]")
    page.keyboard.press("Space")
    expect(page.locator("[data-role=feedback-status]")).to_have_text("謝謝你的回饋。")
    assert task.feedback.get().useful is True
