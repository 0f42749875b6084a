"""The result page draws its charts from the report's verified figures (research/charts.py), as
inline SVG with each bar a link to its citation, worded in the reader's language; a result
without figure claims shows no chart. Runs a research on the test database with the real runner
and the scripted model (the figures: tests/research/test_report.py's two-company comparison; the
same on the real tools and in a browser: tests/e2e/test_print_and_charts.py)."""

from __future__ import annotations

import re

import pytest

from research.presentation import citation_anchor
from research.services import lifecycle, runner
from tests.research.test_report import compared  # noqa: F401 (the finished comparison fixture)
from tests.support.corpus_tools import corpus_registry
from tests.support.scripted_llm import Scenario


@pytest.mark.parametrize(
    "language, words",
    [
        (
            "en",
            ["Figures in charts", "Bar chart of revenue in USD billion: 2 verified figures", ", source ["],
        ),
        ("zh-hant", ["以圖表呈現的數字", "revenue（USD billion）長條圖：2 個已驗證的數字", "，來源 ["]),
    ],
)
def test_a_result_with_figures_shows_an_svg_chart_whose_bars_link_to_their_citations(
    client,
    personas,
    compared,  # noqa: F811
    language,
    words,
):
    client.force_login(personas.student)
    client.cookies["django_language"] = language
    html = client.get(f"/deep_research/task/{compared.task_uuid}").content.decode()
    assert html.count('<svg class="chart"') == 1
    for word in words:
        assert word in html, word
    anchor = citation_anchor(compared)
    by_title = {c["title"]: c["number"] for c in compared.citations_json}
    marks = re.findall(r'<a class="chart-mark" href="#([^"]+)" data-claim="\d+" aria-label="([^"]+)"', html)
    assert sorted(marks) == sorted(
        [
            (
                f"{anchor}-{by_title['NVDA — Revenue — SEC Form 10-Q']}",
                marks_label(
                    "NVIDIA · Q3 FY2025", "35.08", by_title["NVDA — Revenue — SEC Form 10-Q"], language
                ),
            ),
            (
                f"{anchor}-{by_title['AAPL — Revenue — SEC Form 10-Q']}",
                marks_label(
                    "Apple · FY2024Q4", "94.93", by_title["AAPL — Revenue — SEC Form 10-Q"], language
                ),
            ),
        ]
    )
    for href, _label in marks:  # every mark's target is on the page
        assert f'id="{href}"' in html
    assert (
        "95.93" not in html.split('class="report-charts"')[1].split("</section>")[0]
    )  # the cell off its filing


def marks_label(label: str, value: str, number: int, language: str) -> str:
    if language == "en":
        return f"{label}: {value} USD billion, source [{number}]"
    return f"{label}：{value} USD billion，來源 [{number}]"


def test_a_result_without_figure_claims_shows_no_chart(
    client, transactional_db, personas, llm, django_capture_on_commit_callbacks
):
    llm.reset(Scenario(complexity="simple"))
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student,
            channel=personas.channel,
            question="學習分析與布魯姆分類法的關係",
            queue=False,
        )
        runner.execute_task(task.pk, registry=corpus_registry())
    task.refresh_from_db()
    assert task.status == "completed", task.error
    assert task.citations_json and not any(
        c.get("kind") == "figure" for f in task.report_json["findings"] for c in f["claims"]
    )
    client.force_login(personas.student)
    html = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    assert "report-charts" not in html and "chart-mark" not in html
    assert 'class="print-references"' in html  # the print view's references are there all the same
