"""What the student decides around a research, in a real browser: the clarifying card before an
under-specified question starts, the plan review in the progress card (edit, remove, add, continue)
and the budgets the planner's complexity sets."""

from __future__ import annotations

import re
import threading

import pytest
from playwright.sync_api import Page, expect

from research.models import ResearchTask
from tests.e2e.conftest import shot
from tests.support.stack import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VAGUE = "最近的學習分析研究有哪些重要發現？"
COMPLETE = "2020 到 2024 年學習分析研究有哪些重要發現？"
COMPLEX = "請比較學習分析與布魯姆分類法在課程設計中的角色"


def hold(llm, role: str) -> threading.Event:
    """The scripted LLM's `role` calls wait until the returned event is set: after the plan is
    continued, the research stays in its evidence phase until the test has looked at the card."""
    release = threading.Event()

    def held(body):
        release.wait(30)
        return llm._default(role, body, None)

    llm.on(role, held)
    return release


def ask_deep_research(page: Page, personas, question: str) -> None:
    page.goto(f"/channels/{personas.channel.slug}/")
    expect(page.locator("#send")).to_be_enabled()
    page.click("#dr-toggle")
    page.fill("#message", question)
    page.click("#send")


def test_an_under_specified_question_is_clarified_first_and_a_complete_one_starts_at_once(
    open_as, personas, llm
):
    page = open_as(personas.student)
    ask_deep_research(page, personas, VAGUE)
    card = page.locator("#clarify")
    expect(card).to_be_visible()
    expect(card).to_contain_text("開始研究前，再確認一兩個細節")
    field = card.get_by_label("時間範圍")  # labelled by the page, whatever language the model asked in
    expect(field).to_have_value("2021-2026")  # its suggested default, pre-filled
    assert not ResearchTask.objects.exists()  # nothing starts before the student answers
    shot(page, "chat-clarify-card")

    field.fill("2019-2024")
    card.get_by_role("button", name="以這些設定開始").click()
    expect(card).to_be_hidden()
    expect(page.locator(".turn-research")).to_have_count(1)
    task = ResearchTask.objects.get(user=personas.student)
    assert (task.user_question, task.context_json) == (VAGUE, {"time_range": "2019-2024"})
    expect(page.locator("#message")).to_have_value("")

    page.click("#dr-toggle")
    page.fill("#message", COMPLETE)
    page.click("#send")
    expect(page.locator(".turn-research")).to_have_count(2)
    expect(card).to_be_hidden()
    second = ResearchTask.objects.exclude(pk=task.pk).get(user=personas.student)
    assert (second.user_question, second.context_json) == (COMPLETE, {})
    assert len(llm.calls("context")) == 2  # both questions were checked; only the first needed a detail


def test_start_anyway_starts_without_a_context(open_as, personas, llm):
    page = open_as(personas.student)
    ask_deep_research(page, personas, VAGUE)
    page.locator("#clarify").get_by_role("button", name="直接開始").click()
    expect(page.locator(".turn-research")).to_have_count(1)
    assert ResearchTask.objects.get(user=personas.student).context_json == {}


def test_the_student_edits_the_plan_and_the_research_follows_the_edited_plan(open_as, personas, llm):
    personas.channel.plan_review = "required"
    personas.channel.save()
    release = hold(llm, "action")
    page = open_as(personas.student)
    ask_deep_research(page, personas, COMPLEX)

    card = page.locator(".dr-card")
    review = card.locator("[data-role=review]")
    expect(review).to_be_visible()
    expect(card.locator("[data-role=phase]")).to_have_text("正在等你審閱研究計畫…")
    expect(review.locator("[data-role=review-intro]")).to_have_text(
        "研究正在等你：修改、刪除或新增子問題（最多 6 個），然後繼續。"
    )
    expect(review.locator("[data-role=countdown]")).to_have_text(re.compile(r"^\d+:\d\d 後依原計畫繼續$"))
    inputs = review.locator("[data-role=review-list] input")
    expect(inputs).to_have_count(3)
    proposed = [inputs.nth(i).input_value() for i in range(3)]
    assert all(q.startswith(COMPLEX) for q in proposed)
    # the budget of a moderate plan: 6 rounds and 10 tool calls (agent.engine.types.DEFAULT_BUDGETS)
    expect(card.locator("[data-role=max-steps]")).to_have_text("6")
    expect(card.locator("[data-role=max-tool-calls]")).to_have_text("10")
    expect(card.locator("[data-role=tool-budget]")).to_be_visible()
    expect(card.locator("[data-role=complexity]")).to_have_text("中等")

    # The teacher watching the same research sees the plan wait, without the controls.
    task = ResearchTask.objects.get(user=personas.student)
    teacher = open_as(personas.teacher)
    teacher.goto(f"/deep_research/task/{task.task_uuid}")
    teacher_card = teacher.locator(".dr-card")
    expect(teacher_card.locator("[data-role=phase]")).to_have_text("正在等學生審閱研究計畫…")
    expect(teacher_card.locator("[data-role=review-intro]")).to_have_text(
        "啟動這項研究的學生現在可以修改它的計畫。"
    )
    expect(teacher_card.locator("[data-role=review-form]")).to_have_count(0)

    review.locator("[data-role=review-list] li").nth(1).get_by_role("button", name="刪除").click()
    expect(inputs).to_have_count(2)
    review.get_by_role("button", name="＋ 新增子問題").click()
    expect(inputs).to_have_count(3)
    expect(inputs.nth(2)).to_be_focused()
    inputs.nth(2).fill("布魯姆分類法的六個層次如何對應學習分析指標？")
    inputs.nth(0).fill(proposed[0] + "（以大學課程為例）")
    shot(page, "chat-plan-review")
    review.get_by_role("button", name="繼續研究").click()

    edited = [proposed[0] + "（以大學課程為例）", proposed[2], "布魯姆分類法的六個層次如何對應學習分析指標？"]
    expect(review).to_be_hidden()
    expect(card.locator("[data-role=plan-note]")).to_have_text("依修改後的計畫進行研究。")
    expect(card.locator("[data-role=subquestions] li")).to_have_text(edited)
    expect(teacher_card.locator("[data-role=subquestions] li")).to_have_text(edited)  # live for every viewer
    release.set()
    expect(page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')).to_be_visible()
    task.refresh_from_db()
    assert task.status == "completed"
    assert [sq["question"] for sq in task.plan_json["sub_questions"]] == edited
    assert (
        task.plan_edits_json["original"] == proposed
        and task.plan_edits_json["by"] == personas.student.username
    )

    teacher.reload()
    expect(teacher.locator(".plan .plan-edits summary")).to_have_text("研究前已修改計畫。原本提出的計畫：")


def test_the_plan_review_refuses_an_empty_plan_and_continuing_unchanged_keeps_the_proposal(
    open_as, personas, llm
):
    # "required" waits five minutes (UEDU_DR_PLAN_REVIEW_SECONDS): no race with the clock under load.
    personas.channel.plan_review = "required"
    personas.channel.save()
    release = hold(llm, "action")
    page = open_as(personas.student)
    ask_deep_research(page, personas, COMPLEX)
    review = page.locator(".dr-card [data-role=review]")
    inputs = review.locator("[data-role=review-list] input")
    expect(inputs).to_have_count(3)
    for i in range(3):
        inputs.nth(i).fill("   ")
    review.get_by_role("button", name="繼續研究").click()
    expect(review.locator("[data-role=review-error]")).to_have_text("請至少保留一個子問題。")
    task = ResearchTask.objects.get(user=personas.student)
    assert task.plan_confirmed_at is None  # nothing was sent

    page.reload()  # the card rebuilds the review from the stored events: the proposal is back
    review = page.locator(".dr-card [data-role=review]")
    expect(review.locator("[data-role=review-list] input")).to_have_count(3)
    review.get_by_role("button", name="繼續研究").click()
    expect(page.locator(".dr-card [data-role=plan-note]")).to_have_text("依原計畫進行研究。")
    release.set()
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).status == "completed", timeout=30, message="the research"
    )
    task.refresh_from_db()
    assert task.plan_edits_json == {} and len(task.plan_json["sub_questions"]) == 3
