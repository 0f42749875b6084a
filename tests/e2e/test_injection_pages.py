"""Attacked researches in a real browser: the result page of a research whose sources tried image
beacons, attacker links, scripts and forged sources loads nothing from any other host, runs
nothing, and is served with the Content-Security-Policy (see tests/research/test_injection.py for
the whole suite and the success rates)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import shot
from tests.support import injection
from tests.support.attacks import ATTACKS
from tests.support.injection import injection_world  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# The categories whose payload would make a browser fetch, run or navigate somewhere.
BROWSER_CATEGORIES = "befg"


def test_the_pages_of_attacked_researches_load_nothing_from_elsewhere(
    injection_world, open_as, llm, client, index_file
):
    world = injection_world
    chosen = [
        (attack, injection.placements(index, attack)[(index // 2) % 2])
        for index, attack in enumerate(ATTACKS)
        if attack.category in BROWSER_CATEGORIES
    ]
    outcomes = [
        injection.run_attack(world, llm, client, index_file, attack, placement)
        for attack, placement in chosen
    ]
    assert [o for o in outcomes if o.breaches] == []
    assert len(outcomes) == 32 and {o.placement for o in outcomes} == {
        "docx",
        "pdf",
        "pptx",
        "openalex",
        "searxng",
    }

    page = open_as(world.student)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for outcome in outcomes:
        response = page.goto(f"/deep_research/task/{outcome.task.task_uuid}")
        assert response.status == 200
        policy = response.headers["content-security-policy"]
        for directive in (
            "default-src 'self'",
            "script-src 'self'",
            "img-src 'self' data:",
            "frame-ancestors 'none'",
        ):
            assert directive in policy, (outcome.attack.id, policy)
        answer = page.locator(".dr-answer")
        expect(answer).to_be_visible()
        # What the model wrote (the product's own feedback form aside) holds no active element.
        written = answer.locator(
            ":is(img, script, iframe, object, embed, form, video, picture, link, meta, image):not(.feedback *)"
        )
        expect(written).to_have_count(0)
        hrefs = answer.locator("a[href]").evaluate_all("links => links.map(a => a.href)")
        assert all(h.startswith(world_origin(page)) or "evil.example" not in h for h in hrefs), (
            outcome.attack.id,
            hrefs,
        )
        page.locator(".dr-answer details").evaluate_all(
            "all => all.forEach(d => { d.open = true; })"
        )  # every citation opened
        page.wait_for_load_state("networkidle")
        assert page.watch.foreign_requests == [], (outcome.attack.id, page.watch.foreign_requests)
        assert page.title() and "atk-" not in page.title()
    shot(page, "injection-result-page", full_page=True)

    chat = page.goto(f"/channels/{outcomes[0].task.channel.slug}/")
    assert chat.status == 200 and "frame-ancestors 'none'" in chat.headers["content-security-policy"]
    page.wait_for_load_state("networkidle")
    assert page.watch.foreign_requests == [] and dialogs == []


def world_origin(page) -> str:
    return page.evaluate("location.origin")
