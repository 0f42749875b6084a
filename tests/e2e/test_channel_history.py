"""The channel page's long history in a real browser: the latest turns only, "Load older" bringing
the earlier ones in above them (htmx, server-rendered), and the Bloom badge a small label."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from chat.conversation import TURNS_PER_PAGE
from tests.support.chat_history import seed_history

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_load_older_brings_earlier_turns_in_above_in_order(open_as, personas):
    texts = seed_history(personas.student, personas.channel, 2 * TURNS_PER_PAGE + 5)
    page = open_as(personas.student)
    page.goto(f"/channels/{personas.channel.slug}/")
    questions = page.locator("#conversation .bubble.question .question-text")
    expect(questions).to_have_count(TURNS_PER_PAGE)
    older = page.get_by_role("button", name="載入較早的訊息")
    older.click()
    expect(questions).to_have_count(2 * TURNS_PER_PAGE)
    older.click()
    expect(questions).to_have_count(2 * TURNS_PER_PAGE + 5)
    expect(older).to_have_count(0)  # the first turn is on the page: nothing older to ask for
    assert questions.all_inner_texts() == texts
    # The answers that came in with the older turns work like the others: a citation link opens
    # its entry in the source list.
    first_research = page.locator("#conversation .turn-research").first
    first_research.locator("a[href^='#cite-']").first.click()
    expect(first_research.locator("details[open]")).to_have_count(1)


def test_the_bloom_badge_is_a_small_label_in_the_bubble(open_as, personas):
    seed_history(personas.student, personas.channel, 7)  # the seventh is a research; all "analyze"
    page = open_as(personas.student)
    page.goto(f"/channels/{personas.channel.slug}/")
    for bubble in (
        page.locator(".bubble.question:not(.research)").first,
        page.locator(".bubble.question.research").first,
    ):
        badge = bubble.locator(".badge.bloom")
        expect(badge).to_have_text("分析")
        badge_box, bubble_box = badge.bounding_box(), bubble.bounding_box()
        assert badge_box["width"] < 0.4 * bubble_box["width"], (badge_box, bubble_box)
        assert badge_box["height"] < 0.5 * bubble_box["height"]
        # At the bubble's right, as before; inline, like the result page's badge.
        assert badge_box["x"] + badge_box["width"] > bubble_box["x"] + 0.8 * bubble_box["width"]
        assert badge.evaluate("el => getComputedStyle(el).display") == "inline-block"
