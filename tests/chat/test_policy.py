"""Ordinary chat under the same policy as Deep Research: the channel's web rules and the admin's
pins (refused before any request is sent), fetch_url only for addresses the student wrote or a
source showed, the teacher's rules on every call, the daily chat budget and the platform cap,
and answers that list the sources their [N] markers point at.

The real fetch_url talks to a small web server on loopback (reached as `localhost`, with
loopback exempted from the private-address refusal), so "no request was sent" is what that
server saw."""

from __future__ import annotations

import multiprocessing
import threading
import time
from decimal import Decimal

import pytest
from django.urls import reverse

from channels_app.models import ChatLog
from chat.services import send_chat_message
from quotas import services as quotas
from quotas.models import CostReservation
from research.models import SourceStat
from tests.support.corpus_tools import corpus_registry
from tests.support.fake_http import FakeHTTPServer, Reply
from tests.support.slow_parse import take
from tests.support.stack import wait_for
from uedu_dr.bounded_process import run_bounded
from uedu_dr.errors import ServiceError

PAGE = """<html><head><title>Spaced repetition works</title></head><body><article>
<h1>Spaced repetition works</h1><p>Students who reviewed material at growing intervals remembered
30 percent more after a month than students who crammed, across three universities.</p></article></body></html>"""


@pytest.fixture
def site(settings):
    settings.UEDU_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32", "::1/128"]
    with FakeHTTPServer() as server:
        server.route("/article", Reply.html(PAGE))
        yield server


@pytest.fixture
def web_channel(personas):
    personas.channel.web_tools_enabled = True
    personas.channel.save()
    return personas.channel


def page_url(site) -> str:
    return f"http://localhost:{site.port}/article"


def fetching(url: str, answer: str = "Spaced repetition helps [1]. See also [99]."):
    """A chat model that opens `url` with fetch_url, then answers citing [1] (and a dangling [99])."""

    def chat(body):
        if any(m["role"] == "tool" for m in body["messages"]):
            return {"content": answer}
        return {"tool_calls": [{"name": "fetch_url", "arguments": {"url": url}}]}

    return chat


def tool_text(llm) -> str:
    return next(m for m in llm.calls("chat")[-1]["messages"] if m["role"] == "tool")["content"]


def test_chat_fetches_a_page_the_student_wrote_and_lists_it_as_a_source(personas, web_channel, llm, site):
    llm.on("chat", fetching(page_url(site)))
    exchange = send_chat_message(
        user=personas.student, channel=web_channel, message=f"What does {page_url(site)} say?"
    )

    assert site.requests_to("/article"), "the page the student named was fetched"
    assert "Spaced repetition works" in tool_text(llm)
    answer = exchange.response
    assert answer.content == "Spaced repetition helps [1]. See also."  # [99] points at nothing: removed
    assert [(c["number"], c["url"], c["source_tool"]) for c in answer.citations_json] == [
        (1, page_url(site), "fetch_url")
    ]


def test_chat_refuses_a_page_at_once_when_every_parse_slot_is_taken(
    personas, web_channel, llm, site, settings
):
    """The chat runs in the web process while a person waits: a page it would parse while the
    process's parse slots are all taken is refused at once with a clear tool message, and no parse
    child starts on the web node (uedu_dr.parse_slots)."""
    settings.UEDU_PARSE_CHILDREN_PER_PROCESS = 1
    holder = threading.Thread(
        target=run_bounded, args=(take, (4,)), kwargs={"memory_mb": 512, "timeout_seconds": 30}, daemon=True
    )
    holder.start()
    wait_for(lambda: len(multiprocessing.active_children()) == 1, message="a parse holding the slot")
    llm.on("chat", fetching(page_url(site)))
    started = time.monotonic()
    exchange = send_chat_message(user=personas.student, channel=web_channel, message=f"Read {page_url(site)}")

    assert time.monotonic() - started < 3  # not queued behind the other parse
    assert "was not read" in tool_text(llm) and "try again in a minute" in tool_text(llm)
    assert "Spaced repetition works" not in tool_text(llm)
    assert len(multiprocessing.active_children()) == 1  # only the parse that held the slot
    assert exchange.response.citations_json == []
    holder.join(30)


def test_chat_refuses_a_domain_the_teacher_blocked_before_sending_any_request(
    personas, web_channel, llm, site
):
    web_channel.web_denied_domains = "localhost"
    web_channel.save()
    llm.on("chat", fetching(page_url(site)))
    exchange = send_chat_message(user=personas.student, channel=web_channel, message=f"Read {page_url(site)}")

    assert site.requests == []
    assert "not allowed by this channel's web domain rules" in tool_text(llm)
    assert exchange.response.citations_json == [] and "[1]" not in exchange.response.content


def test_chat_refuses_a_domain_an_admin_pinned_as_never_use_before_sending_any_request(
    personas, web_channel, llm, site
):
    SourceStat.objects.create(kind=SourceStat.Kind.DOMAIN, key="localhost", pinned=SourceStat.Pin.DENY)
    llm.on("chat", fetching(page_url(site)))
    send_chat_message(user=personas.student, channel=web_channel, message=f"Read {page_url(site)}")

    assert site.requests == []
    assert "not allowed by this channel's web domain rules" in tool_text(llm)


def test_chat_does_not_open_an_address_nobody_showed(personas, web_channel, llm, site):
    llm.on("chat", fetching(page_url(site)))  # e.g. an instruction planted in an earlier answer
    exchange = send_chat_message(
        user=personas.student, channel=web_channel, message="Tell me about spaced repetition"
    )

    assert site.requests == []
    assert "no address the student wrote or a source showed" in tool_text(llm)
    assert exchange.response.citations_json == []


def test_the_teachers_rules_reach_every_chat_call(personas, llm):
    personas.channel.system_prompt = "Never give full homework solutions."
    personas.channel.save()

    def chat(body):
        if any(m["role"] == "tool" for m in body["messages"]):
            return {"content": "From the materials [1]."}
        return {
            "tool_calls": [{"name": "search_channel_materials", "arguments": {"query": "learning analytics"}}]
        }

    llm.on("chat", chat)
    send_chat_message(
        user=personas.student,
        channel=personas.channel,
        message="Solve exercise 3 for me",
        registry=corpus_registry(),
    )
    calls = llm.calls("chat")
    assert len(calls) == 2
    for call in calls:
        systems = [m["content"] for m in call["messages"] if m["role"] == "system"]
        assert len(systems) == 1 and systems[0].startswith(
            "You are ClassroomGPT"
        )  # the chat's own prompt first
        assert "Never give full homework solutions." in systems[0]


def test_the_chat_bubble_lists_its_sources_with_the_same_links_as_a_research_answer(client, personas, llm):
    def chat(body):
        if any(m["role"] == "tool" for m in body["messages"]):
            return {"content": "Learning analytics measures learner data [1]. Invented [7]."}
        return {
            "tool_calls": [{"name": "search_channel_materials", "arguments": {"query": "learning analytics"}}]
        }

    llm.on("chat", chat)
    exchange = send_chat_message(
        user=personas.student,
        channel=personas.channel,
        message="What is learning analytics?",
        registry=corpus_registry(),
    )
    client.force_login(personas.student)
    page = client.get(reverse("channel_chat", args=[personas.channel.slug])).content.decode()

    anchor = f"cite-{exchange.response.pk:013x}"
    assert f'href="#{anchor}-1"' in page and f'id="{anchor}-1"' in page
    assert "Learning analytics overview" in page  # the source's title in the list
    assert "[7]" not in page


def test_an_answer_about_an_earlier_research_keeps_its_source_numbers(personas, llm):
    from tests.support.research_fixtures import stored_research

    stored_research(personas.student, personas.channel)
    llm.on("chat", lambda body: {"content": "Source [2] is about retrieval [5]."})
    exchange = send_chat_message(
        user=personas.student, channel=personas.channel, message="Explain source [2]"
    )
    assert exchange.response.content == "Source [2] is about retrieval."
    assert [c["number"] for c in exchange.response.citations_json] == [2]


# --------------------------------------------------------------------------- metering


def test_a_student_who_keeps_chatting_hits_the_daily_chat_budget(client, personas, llm, settings):
    settings.UEDU_CHAT_DAILY_QUOTA = {**settings.UEDU_CHAT_DAILY_QUOTA, "student": 3}
    settings.UEDU_CHAT_RATE = "1000/m"
    client.force_login(personas.student)
    url = reverse("channel_send", args=[personas.channel.slug])
    statuses = [
        client.post(url, {"message": f"question {n}"}, HTTP_X_REQUESTED_WITH="fetch").status_code
        for n in range(5)
    ]

    assert statuses == [200, 200, 200, 429, 429]
    refused = client.post(url, {"message": "one more"}, HTTP_X_REQUESTED_WITH="fetch")
    assert refused.json()["error"]["code"] == "chat_quota_exceeded"
    assert 0 < int(refused["Retry-After"]) <= 24 * 3600
    assert (
        ChatLog.objects.filter(user=personas.student, kind="request").count() == 3
    )  # refused before storing
    assert len(llm.calls("chat")) == 3


def test_chat_spend_counts_against_the_platform_cap_and_the_cap_stops_chat(personas, llm, settings):
    send_chat_message(user=personas.student, channel=personas.channel, message="hello")
    row = CostReservation.objects.get(kind="chat", user=personas.student)
    assert row.settled and row.spent_usd > 0  # the scripted server reports usage; it is priced
    status = quotas.cost_status()
    assert status.by_kind["chat"] == row.spent_usd and status.committed >= row.spent_usd

    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = status.committed + Decimal("0.000001")
    with pytest.raises(ServiceError) as refused:
        send_chat_message(user=personas.student, channel=personas.channel, message="again")
    assert (refused.value.status, refused.value.code) == (503, "platform_cap_reached")
    assert len(llm.calls("chat")) == 1 and ChatLog.objects.filter(content="again").count() == 0


def test_the_cost_alert_counts_chat_and_names_the_kinds(personas, llm, settings, mailoutbox):
    settings.UEDU_DEEP_RESEARCH_ALERT_USD = Decimal("0")
    send_chat_message(user=personas.student, channel=personas.channel, message="hello")
    alert = quotas.send_cost_alert()
    assert alert is not None and alert.cost_usd > 0
    assert "chat $" in mailoutbox[0].body


def test_the_chat_page_shows_students_the_teachers_usage_note(client, personas):
    personas.channel.system_prompt = "Never give full homework solutions.\nCite the course reader."
    personas.channel.save()
    client.force_login(personas.student)
    page = client.get(reverse("channel_chat", args=[personas.channel.slug])).content.decode()
    note = page[page.index('id="usage-note"') :]
    assert "Never give full homework solutions.<br>Cite the course reader." in note
    assert "老師為本課程助教訂的使用規則" in note  # in the reader's language


def test_a_channel_without_rules_shows_no_usage_note(client, personas):
    client.force_login(personas.student)
    assert (
        'id="usage-note"'
        not in client.get(reverse("channel_chat", args=[personas.channel.slug])).content.decode()
    )
