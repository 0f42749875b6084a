"""A citation opens the exact words it stands for (issue 31): on the demo course, a research over
the course materials runs through a Celery worker; on its result page a citation marker opens
its entry with the quote highlighted inside its passage, and "open the material at this place"
shows the material's page with the same words marked. Server-rendered, under the strict CSP.

With UEDU_WRITE_SCREENSHOTS=1 the picture replaces docs/citation-quote.png; otherwise it goes to
test-artifacts/ like every other screenshot."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from research.models import ResearchTask
from tests.e2e.test_readme_screenshots import demo, picture  # noqa: F401 (the demo course fixture)
from tests.support.scripted_llm import Scenario, claims_in, sources_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "請整合課程教材，說明布魯姆分類法在本課程中的角色"


def test_a_citation_opens_its_quote_highlighted_in_its_passage_and_the_material_at_that_place(
    open_as,
    demo,
    llm,  # noqa: F811
):
    channel, student = demo
    llm.reset(Scenario(complexity="simple", sub_questions=2))

    def action(body):
        if any(m["role"] == "assistant" for m in body["messages"]):
            return {"content": "DONE"}
        return {
            "tool_calls": [{"name": "search_channel_materials", "arguments": {"query": "布魯姆分類法 Bloom"}}]
        }

    def writer(body):
        """A faithful writer: each verified claim, verbatim, with its marker."""
        given = claims_in(body)[:4]
        lines = [f"- {c['text']} [{c['id']}]。" for c in given]
        reply = {"answer": "\n".join(lines), "citations": [], "conflicts": [], "counter_evidence": []}
        return {"content": json.dumps(reply, ensure_ascii=False)}

    def claims(body):
        """A faithful extractor that quotes one sentence from inside each passage (its second
        statement when it has one), so the quote sits among the words around it."""
        found = []
        for source_id, _title, text in sources_in(body):
            pieces = [p.strip() for p in re.split(r"(?<=[。！？.!?])\s*|\n", text) if len(p.strip()) >= 12]
            if not pieces:
                continue
            quote = pieces[1] if len(pieces) > 2 else pieces[0]
            found.append(
                {
                    "text": quote.rstrip("。."),
                    "kind": "fact",
                    "entity": "",
                    "metric": "",
                    "period": "",
                    "value": None,
                    "unit": "",
                    "source_ids": [source_id],
                    "quotes": [{"source_id": source_id, "text": quote}],
                    "confidence": 0.9,
                }
            )
        return {"content": json.dumps({"claims": found}, ensure_ascii=False)}

    llm.on("action", action)
    llm.on("claims", claims)
    llm.on("synthesizer", writer)

    page = open_as(student)
    page.goto(f"/channels/{channel.slug}/")
    page.click("#dr-toggle")
    page.fill("#message", QUESTION)
    page.click("#send")
    task = None
    answer = page.locator(".dr-answer")
    expect(answer).to_be_visible(timeout=90_000)
    task = ResearchTask.objects.get(user=student)
    assert task.status == "completed", task.error
    quoted = [c for c in task.citations_json if c.get("quote")]
    assert quoted, "no citation carries a quote"
    first = quoted[0]
    assert first["location"]["start"] > 0  # a span inside its passage, not its opening words

    page.goto(f"/deep_research/task/{task.task_uuid}")
    entry = page.locator(f".citation[id$='-{first['number']}']")
    page.locator(f'.answer-body a[href$="-{first["number"]}"]').first.click()  # as a reader would
    expect(entry.locator("details")).to_have_attribute("open", "")
    mark = entry.locator("mark.cite-quote")
    expect(mark).to_have_text(first["quote"])
    passage = entry.locator("blockquote.cite-passage")
    assert len(passage.inner_text()) > len(first["quote"])  # the quote sits inside its passage
    entry.scroll_into_view_if_needed()
    entry.screenshot(path=str(picture("citation-quote")))

    entry.locator("a.cite-open").click()
    marked = page.locator("mark.quoted")
    expect(marked).to_be_visible()
    assert " ".join(first["quote"].split()) in " ".join(marked.inner_text().split())
    assert "/materials/" in page.url and "#p" in page.url
