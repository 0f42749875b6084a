"""A citation opens the exact words it stands for: on the demo course, a research over
the course materials runs through a Celery worker; on its result page a citation marker opens
its entry with the quote highlighted inside its passage, and "open the material at this place"
shows the material's page with the same words marked. Server-rendered, under the strict CSP.

With UEDU_WRITE_SCREENSHOTS=1 the picture replaces docs/citation-quote.png; otherwise it goes to
test-artifacts/ like every other screenshot."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from research.models import ResearchTask
from tests.e2e.test_readme_screenshots import demo, picture  # noqa: F401 (the demo course fixture)
from tests.support.scripted_llm import Scenario, candidates_in, selection

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

    def selector(body):
        """A faithful selection: one span from inside each passage (its second when it has more than
        two), so the span sits among the words around it."""
        by_source: dict[str, list[str]] = {}
        for span_id, text in candidates_in(body):
            if len(text.strip()) >= 12:
                by_source.setdefault(span_id.split(".")[0], []).append(span_id)
        chosen = []
        for ids in by_source.values():
            ids.sort(key=lambda i: int(i.split(".")[1]))
            chosen.append(ids[1] if len(ids) > 2 else ids[0])
        return selection(chosen[:4])

    llm.on("action", action)
    llm.on("selector", selector)

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
    # each fact of this source is marked in its passage; the citation's quote is the first one
    mark = entry.locator("mark.cite-quote").first
    expect(mark).to_have_text(first["quote"])
    passage = mark.locator("xpath=ancestor::blockquote[1]")
    assert len(passage.inner_text()) > len(first["quote"])  # the quote sits inside its passage
    entry.scroll_into_view_if_needed()
    entry.screenshot(path=str(picture("citation-quote")))

    entry.locator("a.cite-open").first.click()  # the first passage's, where the first quote is
    marked = page.locator("mark.quoted")
    expect(marked).to_be_visible()
    assert " ".join(first["quote"].split()) in " ".join(marked.inner_text().split())
    assert "/materials/" in page.url and "#p" in page.url
