"""The result page printed and charted: on the demo course, with the course's enrolment
figures uploaded as a PDF material, a student's research runs through a Celery worker with the
scripted model over the real materials search. Its result page

- draws a bar chart from the values read from the facts' spans only, each bar labelled by its
  source and year and a link that opens its source with the span highlighted;
- prints (Chromium's PDF, print media) as a clean document in English and in Traditional Chinese:
  the question, the facts and the chart, the AI's interpretation in its labelled frame, and the
  numbered references with each source's title, location and quoted spans, read back from the
  PDF with pypdf; no button, navigation, form or feedback box.

With UEDU_WRITE_SCREENSHOTS=1 the pictures replace docs/result-print.png and docs/result-chart.png;
otherwise they go to test-artifacts/ like every other screenshot."""

from __future__ import annotations

import io
import json
import re
import unicodedata

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect
from pypdf import PdfReader

from channels_app.materials import index_material, material_upload
from channels_app.models import Material
from research.models import ResearchTask
from tests.e2e.test_readme_screenshots import demo, picture  # noqa: F401 (the demo course fixture)
from tests.support.documents import pdf_bytes
from tests.support.scripted_llm import (
    FACT_LINE,
    Scenario,
    candidates_in,
    interpret_from_facts,
    observations_of,
    selection,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "比較 EDS101 在 2023 到 2025 年的修課人數變化，並整合課程教材說明學習分析的角色"
ENROLMENT = {"2023": 84, "2024": 112, "2025": 139}
STATS_PAGES = [
    "EDS101 course statistics\n"
    + "\n".join(f"EDS101 enrolment in {year} was {n} students." for year, n in ENROLMENT.items()),
    "EDS101 課程統計說明\n修課人數以每學年第一學期加退選截止日的名單計算。",
]
FIGURE = re.compile(r"EDS101 enrolment in (\d{4}) was (\d+) students\.")


def upload_statistics(channel) -> Material:
    """The teacher's statistics handout, uploaded and indexed like the demo materials."""
    material, _ = material_upload(
        channel=channel,
        user=channel.owner,
        uploaded_file=SimpleUploadedFile("EDS101_修課統計.pdf", pdf_bytes(STATS_PAGES)),
        enqueue=False,
    )
    material = index_material(material.pk) or material
    assert material.status == Material.Status.READY, material.status
    return material


def script(llm) -> None:
    llm.reset(Scenario(complexity="simple", sub_questions=2, asks_for_judgement=True))

    def action(body):
        if any(m["role"] == "assistant" for m in body["messages"]):
            return {"content": "DONE"}
        return {
            "tool_calls": [
                {
                    "name": "search_channel_materials",
                    "arguments": {"query": "EDS101 enrolment students 修課人數"},
                },
                {"name": "search_channel_materials", "arguments": {"query": "學習分析 learning analytics"}},
            ]
        }

    def selector(body):
        """A faithful selection: every enrolment line, and the first span of every other source."""
        spans = candidates_in(body)
        figures = [i for i, text in spans if FIGURE.search(text)]
        firsts: dict[str, str] = {}
        for span_id, text in spans:
            if not FIGURE.search(text) and 16 <= len(text.strip()) <= 160:
                firsts.setdefault(span_id.split(".")[0], span_id)
        return selection(figures + list(firsts.values()))

    def interpreter(body):
        """An assumption about the figures, in their own words, besides the usual items."""
        reply = interpret_from_facts(body)
        figures = [int(i) for i, text in FACT_LINE.findall(observations_of(body)) if FIGURE.search(text)]
        if figures and "items" in reply:
            reply["items"].append(
                {"kind": "assumption", "text": "EDS101 enrolment was counted the same way.", "facts": figures}
            )
        return {"content": json.dumps(reply, ensure_ascii=False)}

    llm.on("action", action)
    llm.on("selector", selector)
    llm.on("interpreter", interpreter)


def flat(text: str) -> str:
    """Text without whitespace (a PDF breaks lines, and spaces CJK, where the layout did), NFKC:
    the CJK font's ToUnicode map gives some characters as their Kangxi radical ("⽐" U+2F50 for
    "比" U+6BD4), which NFKC folds back."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def printed_text(page) -> str:
    page.emulate_media(media="print")
    pdf = page.pdf(format="A4", print_background=False)
    page.emulate_media(media="screen")
    return flat("\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages))


def test_the_result_page_charts_verified_figures_and_prints_a_clean_document_in_both_languages(
    open_as,
    demo,  # noqa: F811
    llm,
):
    channel, student = demo
    upload_statistics(channel)
    script(llm)

    page = open_as(student)
    page.goto(f"/channels/{channel.slug}/")
    page.click("#dr-toggle")
    page.fill("#message", QUESTION)
    page.click("#send")
    expect(page.locator(".dr-answer")).to_be_visible(timeout=90_000)
    task = ResearchTask.objects.get(user=student)
    assert task.status == "completed", task.error
    counted = [(v["year"], v["value"]) for v in task.report_json["values"] if v["kind"] == "number"]
    assert sorted(counted) == sorted((int(year), float(n)) for year, n in ENROLMENT.items())
    quoted = [c for c in task.citations_json if c.get("quote")]
    assert len(quoted) >= 2

    # On screen: one chart of the values read, a bar per year, each labelled by its source and
    # year and linked to it; what code computed from them (the growth) is a chart of its own,
    # marked as computed.
    page.goto(f"/deep_research/task/{task.task_uuid}")
    chart = page.locator(".report-charts figure.figure-chart:not(.computed) svg.chart")
    expect(chart).to_have_count(1)
    computed = page.locator(".report-charts figure.figure-chart.computed")
    expect(computed).to_have_count(len(task.report_json["computed"]) and 1)
    if task.report_json["computed"]:
        expect(computed.locator("figcaption .badge.computed")).to_have_count(1)
    marks = chart.locator("a.chart-mark")
    expect(marks).to_have_count(len(ENROLMENT))
    labels = [marks.nth(i).get_attribute("aria-label") for i in range(len(ENROLMENT))]
    stats = next(c for c in task.citations_json if c["title"].startswith("EDS101_修課統計"))
    for year, n in ENROLMENT.items():
        assert any(label.startswith(f"{stats['title']} · {year}：{n} [") for label in labels), labels
    href = marks.first.get_attribute("href")
    assert href.endswith(f"-{stats['number']}")
    marks.first.locator("rect").click()  # a bar opens its source, the spans highlighted
    entry = page.locator(f".citation[id='{href[1:]}']")
    expect(entry.locator("details")).to_have_attribute("open", "")
    quoted = entry.locator("mark.cite-quote").all_inner_texts()
    # each year's span is highlighted (the first holds the file's title line before it: code cuts
    # a line without a full stop into the sentence it heads)
    assert len(quoted) == len(ENROLMENT)
    for (year, n), mark in zip(ENROLMENT.items(), quoted, strict=True):
        assert mark.endswith(f"EDS101 enrolment in {year} was {n} students."), quoted
    page.locator(".report-charts").screenshot(path=str(picture("result-chart")))

    # The button prints (the dialog itself is the browser's: stand in for it).
    button = page.locator("[data-action='print']")
    expect(button).to_have_text("列印／另存為 PDF")
    page.evaluate("window.print = function () { document.body.dataset.printed = 'yes'; }")
    button.click()
    expect(page.locator("body")).to_have_attribute("data-printed", "yes")

    # On paper, in Traditional Chinese.
    page.emulate_media(media="print")
    expect(page.locator(".print-references")).to_be_visible()
    expect(page.locator(".topbar")).to_be_hidden()
    expect(page.locator(".dr-answer .citations")).to_be_hidden()
    # facts, the AI's blocks and figures are not cut by a page break
    kept_whole = page.evaluate(
        """() => {
        const style = (selector) => getComputedStyle(document.querySelector(selector)).breakInside;
        return [style('.fact'), style('[data-by="model"]'), style('.figure-chart')];
        }"""
    )
    assert kept_whole == ["avoid", "avoid", "avoid"]
    page.set_viewport_size({"width": 900, "height": 1400})
    page.screenshot(path=str(picture("result-print")))
    page.set_viewport_size({"width": 1280, "height": 860})
    zh = printed_text(page)
    english = open_as(student, locale="en-US")
    english.goto(f"/deep_research/task/{task.task_uuid}")
    expect(english.locator("[data-action='print']")).to_have_text("Print / Save as PDF")
    en = printed_text(english)

    for text, words, chrome in (
        (
            zh,
            ["參考文獻", "來源中的事實", "AI 的詮釋", "AI 撰寫（非來源原文）", "以圖表呈現的數值", "位置："],
            [
                "列印／另存為PDF",
                "下載Markdown",
                "複製連結",
                "登出",
                "我的研究",
                "這個答案有幫助嗎",
                "研究步驟",
                "主張帳冊",
                "事實帳冊",
            ],
        ),
        (
            en,
            [
                "References",
                "Facts from the sources",
                "The AI’s interpretation",
                "Written by the AI — not the sources' words",
                "Valuesincharts",
                "Location:",
            ],
            [
                "Print/SaveasPDF",
                "DownloadMarkdown",
                "Copylink",
                "Logout",
                "Myresearch",
                "Wasthisansweruseful",
                "Researchsteps",
                "Claimledger",
                "Factledger",
            ],
        ),
    ):
        assert flat(QUESTION) in text
        for word in words:
            assert flat(word) in text, word
        for word in chrome:
            assert flat(word) not in text, word
        assert flat("EDS101 enrolment was counted the same way.") in text  # the AI's assumption, in its frame
        for n in ENROLMENT.values():
            assert f"{n}[" in text  # the chart's values, with their sources
        cited = {s["number"] for s in task.report_json["sources"] if s["cited"]}
        for citation in [c for c in task.citations_json if c["number"] in cited]:
            # every reference a fact rests on: number, title, quote
            assert f"[{citation['number']}]" + flat(citation["title"]) in text, citation["title"]
            if citation.get("quote"):
                assert flat(citation["quote"]) in text, citation["quote"]
        assert flat("EDS101_修課統計.pdf p. 1") in text  # where the figures' quotes are
        assert (
            flat(f"{page.url.split('/deep_research')[0]}/channels/demo-course/materials/") in text
        )  # full links
        items = [i["text"] for i in task.report_json["interpretation"]["items"]]
        assert items and all(flat(t) in text for t in items)  # the AI's interpretation, printed
