"""Evidence quality and readers' feedback in a real browser: the ledger of a research whose
interpretation the checks keep out, a conflicted research in the teacher's review queue with a Super TA's
note the student then reads, and a student's feedback the teacher finds on the feedback page."""

from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import Page, expect

from research.models import AnswerFeedback, ResearchTask
from tests.e2e.conftest import shot
from tests.support.research_fixtures import stored_research
from tests.support.scripted_llm import FACT_LINE, Scenario, interpret_from_facts, observations_of

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The demo catalogue answers this question with citable courses and research clusters.
COMPLEX = "比較教育資料科學課程與研究群的主題"


@pytest.fixture
def catalogue(transactional_db):
    from django.apps import apps

    apps.get_app_config("catalogue").load_demo_data(open(os.devnull, "w"))


def start_research(page: Page, personas, question: str = COMPLEX) -> None:
    page.goto(f"/channels/{personas.channel.slug}/")
    expect(page.locator("#send")).to_be_enabled()
    page.click("#dr-toggle")
    page.fill("#message", question)
    page.click("#send")


def _embellishing_interpreter(body):
    """Every reasoning item names someone its facts never mention: code shows none of them."""
    facts = [int(i) for i, _ in FACT_LINE.findall(observations_of(body))]
    reply = interpret_from_facts(body)
    if facts and "items" in reply:
        reply["items"] = [
            {"kind": "reasoning", "text": f"Professor Quillanby designed course {n}", "facts": [f]}
            for n, f in enumerate(facts[:3], start=1)
        ]
    return {"content": json.dumps(reply, ensure_ascii=False)}


def test_the_ledger_sets_apart_what_the_report_did_not_show(open_as, personas, llm, catalogue):
    llm.on("interpreter", _embellishing_interpreter)
    page = open_as(personas.student)
    start_research(page, personas)
    answer = page.locator(".dr-answer")
    expect(answer).to_be_visible()
    task = ResearchTask.objects.get(user=personas.student)
    assert task.status == "completed"
    rows = list(task.claims.order_by("index"))
    facts = [r for r in rows if r.kind == "fact"]
    dropped = [r for r in rows if r.kind == "reasoning"]
    assert facts and all(r.action == "kept" and r.verdict == "supported" for r in facts)
    assert dropped and all(
        r.action == "dropped" and r.text == "" and r.reason.startswith("novel_") for r in dropped
    )
    expect(answer).not_to_contain_text("Quillanby")
    # the answer lists what it did not show by kind and reason, never with the words the model wrote
    not_shown = answer.locator(".report-not-shown li")
    expect(not_shown).to_have_count(len(task.report_json["not_shown"]))
    reasoning = [n for n in task.report_json["not_shown"] if n["kind"] == "reasoning"]
    assert len(reasoning) == len(dropped)
    expect(answer.locator(".report-not-shown")).not_to_contain_text("Quillanby")
    answer.get_by_role("link", name="結果頁").click()
    expect(page.locator("main")).not_to_contain_text("Quillanby")
    shot(page, "result-claim-ledger")


def test_a_conflicted_research_reaches_the_review_queue_and_the_student_reads_the_super_tas_note(
    open_as, personas, llm, catalogue
):
    llm.reset(Scenario(contradict=True))  # the selection marks two spans of two sources as contradicting
    student = open_as(personas.student)
    start_research(student, personas)
    # the conflict the selection marked is shown as its sources' spans, marked as the AI's finding
    expect(student.locator(".dr-answer .conflicts")).to_contain_text("AI 標記為互相矛盾")
    task = ResearchTask.objects.get(user=personas.student)
    assert task.needs_review is True
    assert [c["found_by"] for c in task.report_json["conflicts"] if c["status"] == "unresolved"] == ["model"]

    teacher = open_as(personas.teacher)
    teacher.get_by_role("link", name="待審閱清單").click()
    row = teacher.locator(".queue-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(COMPLEX)
    expect(row.locator(".conflict-count")).to_have_text("1 項未決衝突")
    expect(row.locator(".awaiting-review")).to_have_text("等待審閱")
    shot(teacher, "review-queue")

    super_ta = open_as(personas.super_ta)
    super_ta.get_by_role("link", name="待審閱清單").click()
    super_ta.locator(".queue-row a").click()
    review = super_ta.locator("#review")
    expect(review).to_contain_text("尚未有人審閱")
    super_ta.watch.expect_status(400, "/review")
    review.get_by_role("button", name="儲存備註").click()  # empty first: explained, nothing stored
    expect(review.locator(".error")).to_have_text("請輸入備註。")
    assert ResearchTask.objects.get(pk=task.pk).review_note == ""
    note = "兩篇研究對「成績」的定義不同，請以課程第 3 週的講義為準。"
    review.locator("textarea[name=note]").fill(note)  # the conflict-decision forms have their own
    review.get_by_role("button", name="儲存備註").click()
    expect(super_ta.locator(".message.success")).to_have_text("已儲存審閱者備註。")
    expect(super_ta.locator("#review .review-status")).to_contain_text("最近由 sta_a 於")
    task.refresh_from_db()
    assert (task.review_note, task.reviewed_by_id) == (note, personas.super_ta.pk)

    teacher.reload()
    expect(teacher.locator(".queue-row")).to_have_count(0)  # reviewed: out of the queue

    student.goto(f"/deep_research/task/{task.task_uuid}")
    shown = student.locator(".dr-answer .review-note")
    expect(shown.locator(".review-note-text")).to_have_text(note)
    expect(shown.locator(".review-note-by")).to_contain_text("sta_a，")
    expect(student.locator("#review")).to_have_count(0)  # the student reads the note, never the form
    expect(student.get_by_role("link", name="待審閱清單")).to_have_count(0)
    shown.scroll_into_view_if_needed()
    shot(student, "result-reviewer-note")
    student.goto(f"/channels/{personas.channel.slug}/")
    expect(student.locator(".dr-answer .review-note-text")).to_have_text(
        note
    )  # also in the chat's answer bubble


def test_a_student_reports_an_answer_and_a_citation_and_the_teacher_sees_both(open_as, personas, llm):
    task = stored_research(personas.student, personas.channel, question="學習分析如何支持課程設計？")
    student = open_as(personas.student)
    student.goto(f"/channels/{personas.channel.slug}/")
    answer = student.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    box = answer.locator(".feedback")
    box.get_by_role("button", name="沒有幫助").click()
    form = box.locator("form.feedback-form")
    expect(form).to_be_visible()
    expect(form).to_contain_text("抱歉沒有幫上忙。哪裡有問題？")
    form.locator("select[name=reason]").select_option(label="事實錯誤")
    form.locator("textarea[name=note]").fill("第二句的年份不對。")
    shot(student, "answer-feedback-form")
    form.get_by_role("button", name="送出").click()
    expect(box.locator("[data-role=feedback-status]")).to_have_text("謝謝你的回饋。")
    expect(form).to_be_hidden()
    expect(box.get_by_role("button", name="沒有幫助")).to_be_disabled()

    citation = answer.locator(f"#cite-{task.task_uuid.hex[:12]}-2")
    citation.locator("summary").click()
    citation.get_by_role("button", name="這個來源沒有這樣說").click()
    expect(citation.locator(".reported")).to_have_text("已回報，謝謝。")
    rows = list(
        AnswerFeedback.objects.filter(task=task)
        .order_by("pk")
        .values_list("useful", "reason", "citation_number", "note")
    )
    assert rows == [(False, "wrong_fact", None, "第二句的年份不對。"), (None, "source_does_not_say", 2, "")]

    # A reload shows what the student already said: they cannot rate or report [2] a second time.
    student.reload()
    expect(box.get_by_role("button", name="沒有幫助")).to_be_disabled()
    expect(box.get_by_role("button", name="沒有幫助")).to_have_class(re.compile(r"\bchosen\b"))
    expect(box.get_by_role("button", name="有幫助", exact=True)).to_be_disabled()
    expect(box.locator("[data-role=feedback-status]")).to_have_text("謝謝你的回饋。")
    citation.locator("summary").click()
    expect(citation.locator(".reported")).to_have_text("已回報，謝謝。")
    expect(citation.get_by_role("button", name="這個來源沒有這樣說")).to_have_count(0)
    expect(
        answer.locator(f"#cite-{task.task_uuid.hex[:12]}-1").get_by_role(
            "button", name="這個來源沒有這樣說", include_hidden=True
        )
    ).to_have_count(1)

    teacher = open_as(personas.teacher)
    teacher.get_by_role("link", name="答案回饋").click()
    listed = teacher.locator(".feedback-page .feedback-row")
    expect(listed).to_have_count(2)
    expect(listed.nth(0)).to_contain_text("這個來源沒有這樣說")
    expect(listed.nth(0).locator(".feedback-citation")).to_have_text("引用 [2]")
    expect(listed.nth(1).locator(".badge.useful-no")).to_have_text("沒有幫助")
    expect(listed.nth(1)).to_contain_text("事實錯誤")
    expect(listed.nth(1).locator(".feedback-note")).to_have_text("第二句的年份不對。")
    expect(listed.nth(1)).to_contain_text("s_alice")
    shot(teacher, "feedback-page")
    listed.nth(0).locator(".feedback-citation").click()  # straight to the reported source
    expect(teacher.locator(f"#cite-{task.task_uuid.hex[:12]}-2 details")).to_have_attribute("open", "")
    expect(teacher.locator("#feedback .feedback-row")).to_have_count(2)


def test_the_teacher_switches_plan_review_and_the_web_domain_lists(open_as, personas, llm):
    from channels_app.models import Channel

    teacher = open_as(personas.teacher)
    teacher.goto(f"/channels/{personas.channel.slug}/settings/")
    teacher.locator("#id_plan_review").select_option("required")
    teacher.watch.expect_status(400, "/settings/")  # a URL is no domain: refused, nothing lost
    teacher.locator("#id_web_allowed_domains").fill("edu.tw\nhttps://papers.example/list")
    teacher.locator("#id_web_denied_domains").fill("spam.example")
    teacher.get_by_role("button", name="儲存").click()
    expect(teacher.locator(".field.has-error .error")).to_contain_text(
        "不是網域名稱：https://papers.example/list"
    )
    channel = Channel.objects.get(pk=personas.channel.pk)
    assert (channel.plan_review, channel.web_allowed_domains, channel.web_denied_domains) == ("off", "", "")
    expect(teacher.locator("#id_web_denied_domains")).to_have_value("spam.example")  # nothing typed is lost

    teacher.locator("#id_web_allowed_domains").fill("edu.tw\nPapers.Example")
    teacher.get_by_role("button", name="儲存").click()
    expect(teacher.locator(".message.success")).to_have_text("設定已儲存。")
    channel.refresh_from_db()
    assert (channel.plan_review, channel.allowed_domains, channel.denied_domains) == (
        "required",
        ("edu.tw", "papers.example"),
        ("spam.example",),
    )
    expect(teacher.locator("#id_plan_review")).to_have_value("required")
    shot(teacher, "settings-plan-review-domains", full_page=True)


def test_a_feedback_click_that_never_reaches_the_server_says_so_and_can_be_sent_again(open_as, personas, llm):
    task = stored_research(personas.student, personas.channel)
    student = open_as(personas.student)
    student.goto(f"/channels/{personas.channel.slug}/")
    answer = student.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    useful = answer.get_by_role("button", name="有幫助", exact=True)
    student.route("**/feedback_box", lambda route: route.abort())  # the network drops the request
    useful.click()
    expect(answer.locator("[data-htmx-error]")).to_have_text(
        "無法連線到伺服器。你輸入的內容仍在輸入框中，請再試一次。"
    )
    expect(useful).to_be_enabled()
    assert not AnswerFeedback.objects.exists()

    student.unroute("**/feedback_box")
    useful.click()
    expect(answer.locator("[data-role=feedback-status]")).to_have_text("謝謝你的回饋。")
    expect(answer.locator("[data-htmx-error]")).to_have_count(0)  # the old message went with the retry
    assert list(AnswerFeedback.objects.values_list("useful", flat=True)) == [True]
    # The only errors on the page are the ones this test caused: the aborted request and htmx's reports of it.
    caused = (
        "net::ERR_FAILED",
        "htmx:sendError",
        "htmx:afterRequest",
        "the server responded with a status of",
    )
    unexplained = [e for e in student.watch.errors if not any(c in e for c in caused)]
    assert not unexplained, student.watch.errors
    student.watch.errors.clear()
