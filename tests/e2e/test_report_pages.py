"""The report of spans in a real browser (Chromium on the live stack), over the fixture reports of
tests/support/report_examples.py, in both languages: on a 390 x 844 phone nothing is wider than
the screen and conflicts stack, and a nothing-verified result page fits too and retries with the
web on; on a laptop a conflict's sides stand side by side; a fact's [N]
opens its source with the span highlighted inside its passage; every AI block shows its label;
axe-core finds nothing; printed, the AI's blocks keep their frame and the references are there."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from channels_app.models import Channel
from research.models import ResearchTask
from tests.e2e.conftest import LAPTOP, PHONE, shot
from tests.e2e.test_accessibility import assert_no_sideways_scrolling
from tests.support import report_examples as X
from tests.support.axe import assert_accessible

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CASES = [("en", "en-GB", X.english_report), ("zh", "zh-TW", X.chinese_report)]


@pytest.mark.parametrize("lang, locale, report", CASES)
def test_the_report_fits_a_phone_passes_axe_and_opens_a_fact_in_its_passage(
    open_as, personas, lang, locale, report
):
    task = X.stored_report(personas.student, personas.channel, report())
    page = open_as(personas.student, viewport=PHONE, locale=locale)
    page.goto(f"/deep_research/task/{task.task_uuid}")
    facts = page.locator(".report-facts")
    expect(facts).to_be_visible()
    assert_no_sideways_scrolling(page)
    label = "Written by the AI — not the sources' words" if lang == "en" else "AI 撰寫（非來源原文）"
    blocks = page.locator('[data-by="model"]')
    assert blocks.count() >= 4
    for n in range(blocks.count()):
        if blocks.nth(n).is_visible():
            expect(blocks.nth(n).locator(".by-model-label")).to_contain_text(label)
    # conflicts stack on a phone: the second side below the first
    sides = page.locator(".conflict-side")
    first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    assert second["y"] >= first["y"] + first["height"] - 1
    assert_accessible(page, f"the result page of a report ({lang}, phone)")
    shot(page, f"report-phone-{lang}", full_page=True)

    # a fact's [N] opens its source's entry, the span highlighted inside the passage read
    fact = page.locator(".report-section .fact").first
    span = fact.locator(".span").first.inner_text()
    fact.locator("a.cite").click()
    entry = page.locator(f"#{fact.locator('a.cite').get_attribute('href')[1:]}")
    expect(entry.locator("details")).to_have_attribute("open", "")
    marks = entry.locator("mark.cite-quote")
    assert span in [marks.nth(i).inner_text() for i in range(marks.count())]
    passage = entry.locator("blockquote.cite-passage").first.inner_text()
    assert len(passage) > len(marks.first.inner_text())  # the span sits inside its passage


def test_a_conflicts_sides_stand_side_by_side_on_a_laptop_and_the_print_keeps_the_ais_frames(
    open_as, personas
):
    task = X.stored_report(personas.student, personas.channel, X.english_report())
    page = open_as(personas.student, viewport=LAPTOP, locale="en-GB")
    page.goto(f"/deep_research/task/{task.task_uuid}")
    sides = page.locator(".conflict-side")
    first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
    assert abs(first["y"] - second["y"]) < 2 and second["x"] > first["x"]
    assert_accessible(page, "the result page of a report (laptop)")
    page.emulate_media(media="print")
    expect(page.locator(".print-references")).to_be_visible()
    expect(page.locator(".feedback")).to_be_hidden()
    expect(page.locator('.report-interpretation [data-by="model"] .by-model-label')).to_be_visible()
    quoted = page.locator(".print-reference .ref-quote")
    assert "In 2019, 120,000 students enrolled" in " ".join(quoted.all_inner_texts())


def test_nothing_verified_on_a_phone_links_its_sources_and_offers_questions(open_as, personas):
    task = X.stored_report(personas.student, personas.channel, X.nothing_verified_report("zh"))
    page = open_as(personas.student, viewport=PHONE)
    page.goto(f"/channels/{personas.channel.slug}/")
    answer = page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')
    expect(answer.locator(".report-nothing")).to_be_visible()
    assert_no_sideways_scrolling(page)
    expect(answer.locator(".consulted a")).to_have_count(2)
    expect(answer.locator('.suggestions[data-by="model"] li')).to_have_count(2)
    assert_accessible(page, "a nothing-verified answer in the chat (phone)")


@pytest.mark.parametrize("lang, locale", [("en", "en-GB"), ("zh", "zh-TW")])
def test_a_nothing_verified_result_page_fits_a_phone_and_retries_with_the_web_on(
    open_as, personas, lang, locale
):
    """The research ran without the web; the channel allows it now: the owner's result page says
    why, links the sources, shows the AI's questions and the retry form, whose button starts the
    new research with the web on and brings the student back to the chat."""
    task = X.stored_report(personas.student, personas.channel, X.nothing_verified_report(lang))
    ResearchTask.objects.filter(pk=task.pk).update(web_tools=False)
    Channel.objects.filter(pk=personas.channel.pk).update(web_tools_enabled=True)
    retry = {"en": "Retry with the web on", "zh": "開啟網路搜尋後重試"}[lang]
    page = open_as(personas.student, viewport=PHONE, locale=locale)
    page.goto(f"/deep_research/task/{task.task_uuid}")
    nothing = page.locator(".report-nothing")
    expect(nothing).to_be_visible()
    expect(nothing.locator(".consulted a")).to_have_count(2)
    expect(nothing.locator(".nothing-why li").first).to_be_visible()
    expect(nothing.locator('.suggestions[data-by="model"] li')).to_have_count(2)
    button = nothing.get_by_role("button", name=retry)
    expect(button).to_be_visible()
    assert_no_sideways_scrolling(page)
    assert_accessible(page, f"a nothing-verified result page ({lang}, phone)")
    shot(page, f"nothing-verified-phone-{lang}", full_page=True)

    button.click()
    page.wait_for_url(re.compile(rf".*/channels/{personas.channel.slug}/$"))
    new = ResearchTask.objects.exclude(pk=task.pk).get(user=personas.student)
    assert new.web_tools is True and new.user_question == task.user_question
    assert_no_sideways_scrolling(page)
    # the history lists both, and fits the phone too
    page.goto("/deep_research/my")
    expect(page.locator(".history-row")).to_have_count(2)
    assert_no_sideways_scrolling(page)
