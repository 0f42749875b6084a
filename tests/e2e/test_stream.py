"""The browser's live path on its own (static/js/stream.js) against the real stream (daphne, the
Channels consumer, Valkey, PostgreSQL): the socket is cut again and again while events keep
coming, and every event still arrives exactly once, in order; with WebSockets blocked
altogether, the HTTP catch-up alone delivers them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from agent.engine.events import ActionThinking, Cancelled
from research.models import ResearchTask
from research.services import events, lifecycle
from tests.e2e.test_chat_page import cuttable_sockets

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def waiting_research(personas, live):
    """A research left queued (no worker takes it): the test writes its events itself, and ends
    it if the test did not (the live stack waits for every research to end)."""
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="串流測試", queue=False
    )
    yield task
    if ResearchTask.objects.filter(pk=task.pk, status="queued").exists():
        end(task)


def emit(task: ResearchTask, count: int) -> None:
    for _ in range(count):
        events.record_event(task.pk, task.task_uuid, ActionThinking(round=1, purpose="evidence"))


def end(task: ResearchTask) -> None:
    ResearchTask.objects.filter(pk=task.pk).update(status="cancelled")
    events.record_event(task.pk, task.task_uuid, Cancelled(response_log_id=None, stop_reason="cancelled"))


def follow(page: Page, task: ResearchTask) -> None:
    """Open a second client of the module on the result page, recording what it delivers."""
    page.evaluate(
        """([uuid, eventsUrl]) => {
            window.seen = []; window.states = [];
            window.UeduStream.open({uuid, eventsUrl, onEvent: e => window.seen.push(e.seq), onState: s => window.states.push(s)});
        }""",
        [str(task.task_uuid), f"/api/deep_research/task/{task.task_uuid}/events"],
    )


def seen(page: Page) -> list[int]:
    return page.evaluate("window.seen")


def stored_seqs(task: ResearchTask) -> list[int]:
    return list(task.events.order_by("seq").values_list("seq", flat=True))


def test_cut_sockets_lose_and_repeat_no_event(open_as, personas, llm, waiting_research):
    task = waiting_research
    page = open_as(personas.student)
    sockets = cuttable_sockets(page)
    page.goto(f"/deep_research/task/{task.task_uuid}")
    card = page.locator(f'.dr-card[data-task="{task.task_uuid}"]')
    expect(card).to_have_attribute("data-connected", "true")
    follow(page, task)
    page.wait_for_function("() => window.states.length === 1")

    for cut in range(3):
        emit(task, 4)  # live
        page.wait_for_function(f"() => window.seen.length === {len(stored_seqs(task))}")
        opened = len(sockets)
        for close in sockets[-2:]:  # both clients of the page lose their socket
            close()
        emit(task, 3)  # while both are down: caught up over HTTP, or replayed after last_seq
        page.wait_for_function(f"() => window.states.filter(s => s).length === {cut + 2}")
        expect(card.locator("[data-role=connection]")).to_be_hidden()
        assert len(sockets) >= opened + 2  # each reopened its socket

    emit(task, 2)
    end(task)
    expected = stored_seqs(task)
    page.wait_for_function(f"() => window.seen.length >= {len(expected)}")
    page.wait_for_timeout(500)  # room for a duplicate to show up, if there were one
    assert seen(page) == expected == list(range(1, len(expected) + 1))
    # The card, a client like any other, ended with the research and shows its outcome.
    expect(page.locator(".dr-status.status-cancelled")).to_be_visible()
    expect(card).to_have_count(0)


def test_with_websockets_blocked_the_http_catch_up_delivers_every_event(
    open_as, personas, llm, waiting_research
):
    task = waiting_research
    page = open_as(personas.student)
    page.route_web_socket(
        re.compile(r"/ws/deep_research/"), lambda ws: ws.close()
    )  # a proxy that refuses them
    page.goto(f"/deep_research/task/{task.task_uuid}")
    card = page.locator(f'.dr-card[data-task="{task.task_uuid}"]')
    emit(task, 3)
    expect(card).to_have_attribute("data-last-seq", str(stored_seqs(task)[-1]), timeout=20_000)
    expect(card.locator("[data-role=phase]")).to_have_text(re.compile("第 1 輪"))
    end(task)
    expect(page.locator(".dr-status.status-cancelled")).to_be_visible(timeout=30_000)
