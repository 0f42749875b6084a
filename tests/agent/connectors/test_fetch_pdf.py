"""fetch_url reads PDFs (pypdf) within the same size and time limits as web pages, one citable
source per page; a research cites the page it used."""

from __future__ import annotations

import json
import time

from agent.engine import Limits, LLMClient, LLMConfig, NullSink, ResearchInput, UsageMeter, run_research
from agent.tools import REGISTRY
from tests.agent.connectors.conftest import WEB_CTX, call
from tests.support.documents import pdf_bytes
from tests.support.fake_http import Reply
from tests.support.scripted_llm import candidates_in

PAGES = [
    "Spaced repetition in university courses\nA study of three universities.",
    "Students who reviewed at growing intervals\nremembered 30 percent more after a month.",
    "The effect held in mathematics, biology\nand language courses.",
]


def pdf_reply(data: bytes, content_type: str = "application/pdf") -> Reply:
    return Reply(headers={"Content-Type": content_type}, body=data)


def test_fetch_url_reads_a_pdf_page_by_page_each_page_citable(site, loopback_allowed):
    site.route("/papers/spacing.pdf", pdf_reply(pdf_bytes(PAGES)))

    fetched = call("fetch_url", url=f"{site.url}/papers/spacing.pdf")

    assert fetched.ok, fetched.error
    assert [s.locator for s in fetched.sources] == [
        "spacing.pdf p. 1",
        "spacing.pdf p. 2",
        "spacing.pdf p. 3",
    ]
    assert [s.url for s in fetched.sources] == [f"{site.url}/papers/spacing.pdf#page={n}" for n in (1, 2, 3)]
    assert "remembered 30 percent more" in fetched.sources[1].text
    assert "remembered" not in fetched.sources[0].text
    assert all(
        s.tier == "web" and s.source_tool == "fetch_url" and s.meta["content_type"] == "application/pdf"
        for s in fetched.sources
    )
    assert fetched.data["pages"] == 3 and fetched.data["pages_read"] == [1, 3]


def test_a_pdf_sent_as_a_generic_binary_is_read_when_it_is_one(site, loopback_allowed):
    site.route("/dl/report.pdf", pdf_reply(pdf_bytes(PAGES), "application/octet-stream"))
    site.route("/dl/report.bin", pdf_reply(pdf_bytes(PAGES), "application/octet-stream"))
    site.route("/dl/fake.pdf", pdf_reply(b"<html>not a pdf</html>" * 10))

    assert [s.locator for s in call("fetch_url", url=f"{site.url}/dl/report.pdf").sources][
        0
    ] == "report.pdf p. 1"
    assert "does not read" in call("fetch_url", url=f"{site.url}/dl/report.bin").error
    assert "is not a PDF document" in call("fetch_url", url=f"{site.url}/dl/fake.pdf").error


def test_a_long_pdf_is_read_in_windows_of_pages(site, loopback_allowed):
    site.route(
        "/long.pdf", pdf_reply(pdf_bytes([f"Page number {n} of the long report." for n in range(1, 13)]))
    )

    first = call("fetch_url", url=f"{site.url}/long.pdf")
    later = call("fetch_url", url=f"{site.url}/long.pdf", first_page=9)

    assert [s.meta["page"] for s in first.sources] == list(range(1, 9)) and first.data["pages"] == 12
    assert [s.meta["page"] for s in later.sources] == [9, 10, 11, 12]
    assert "Page number 11" in later.sources[2].text
    assert call("fetch_url", url=f"{site.url}/long.pdf", first_page=13).error.endswith(
        "has 12 pages; page 13 is past the end"
    )


def test_a_pdf_over_the_size_limit_is_refused_declared_or_not(site, loopback_allowed, settings):
    data = pdf_bytes(PAGES * 4)
    settings.UEDU_FETCH_MAX_BYTES = len(data) - 100
    site.route("/big.pdf", pdf_reply(data))
    site.route(
        "/streamed.pdf",
        Reply(headers={"Content-Type": "application/pdf"}, chunks=iter([data[:1000], data[1000:]])),
    )

    assert call("fetch_url", url=f"{site.url}/big.pdf").error.endswith(
        f"above the {len(data) - 100:,}-byte limit"
    )
    assert (
        call("fetch_url", url=f"{site.url}/streamed.pdf").error
        == f"the PDF is larger than the {len(data) - 100:,}-byte limit"
    )


def test_a_pdf_whose_text_passes_the_limit_is_cut_and_marked(site, loopback_allowed, settings):
    settings.UEDU_FETCH_MAX_TEXT_CHARS = 80
    site.route("/spacing.pdf", pdf_reply(pdf_bytes(PAGES)))
    fetched = call("fetch_url", url=f"{site.url}/spacing.pdf")
    assert fetched.data["truncated"] is True and len(fetched.sources) == 2
    assert sum(len(s.text) for s in fetched.sources) <= 80


def test_a_damaged_or_locked_pdf_is_reported(site, loopback_allowed):
    site.route("/broken.pdf", pdf_reply(b"%PDF-1.4\n" + b"garbage" * 50))
    site.route("/locked.pdf", pdf_reply(pdf_bytes(PAGES, user_password="secret")))
    assert call("fetch_url", url=f"{site.url}/broken.pdf").error.startswith("the PDF could not be read")
    assert call("fetch_url", url=f"{site.url}/locked.pdf").error == "the PDF is password-protected"


def test_a_research_cites_the_pdf_page_it_used(site, loopback_allowed, llm):
    url = f"{site.url}/papers/spacing.pdf"
    site.route("/papers/spacing.pdf", pdf_reply(pdf_bytes(PAGES)))

    def act(body):
        if any(m["role"] == "assistant" for m in body["messages"]):
            return {"content": "DONE"}
        return {"tool_calls": [{"name": "fetch_url", "arguments": {"url": url}}]}

    def select(body):  # the selection points at the span that says "30 percent" (page 2)
        (span,) = [i for i, text in candidates_in(body) if "30 percent" in text]
        facts = [{"span_ids": [span], "hypothesis": 0, "stance": "none"}]
        return {"content": json.dumps({"facts": facts, "contradictions": []})}

    llm.on("action", act)
    llm.on("selector", select)
    config = LLMConfig(
        models={"default": "gpt-5.4-mini"}, base_url=llm.url, api_key="test", timeout=5, max_retries=0
    )
    result = run_research(
        ResearchInput(
            question=f"What does {url} find about spaced repetition?", channel_name="Demo", language="en"
        ),
        llm=LLMClient(config, UsageMeter()),
        tools=REGISTRY.bind(WEB_CTX),
        sink=NullSink(),
        is_cancelled=lambda: False,
        limits=Limits(),
    )

    assert result.outcome == "completed", result.error
    # the model's one fact (the search ranking adds its own beside it, to three, labelled so)
    (fact,) = [f for f in result.report["facts"] if f["selected_by"] == "model"]
    cited = [c for c in result.citations if c.number == fact["source"]]
    assert [(c.locator, c.url) for c in cited] == [("spacing.pdf p. 2", f"{url}#page=2")]
    assert "30 percent" in cited[0].quote and cited[0].number == 1


def test_a_slow_pdf_hits_the_same_time_limit(site, loopback_allowed, settings):
    settings.UEDU_FETCH_TIMEOUT_SECONDS = 0.5
    data = pdf_bytes(PAGES)

    def drip():
        for start in range(0, len(data), len(data) // 10 + 1):
            time.sleep(0.1)
            yield data[start : start + len(data) // 10 + 1]

    site.route("/slow.pdf", Reply(headers={"Content-Type": "application/pdf"}, chunks=drip()))
    started = time.monotonic()
    error = call("fetch_url", url=f"{site.url}/slow.pdf").error
    assert "took longer than 0.5 s" in error or "did not answer within the time limit" in error
    assert time.monotonic() - started < 1.5
