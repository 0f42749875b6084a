"""The result page draws its charts from the report's values (research/charts.py), as inline SVG
with each bar a link to the source its value was read from, titled and labelled in the reader's
language; a result without values to chart shows no chart. Over fixture reports, and over a
research run with the real runner and the scripted model (the same in a browser:
tests/e2e/test_print_and_charts.py)."""

from __future__ import annotations

import re

import pytest

from research.presentation import citation_anchor
from tests.research.test_report import compared  # noqa: F401 (the finished comparison fixture)
from tests.support import report_examples as X

MARK = re.compile(r'<a class="chart-mark" href="#([^"]+)" data-mark="[vc]\d+" aria-label="([^"]+)"')


@pytest.mark.parametrize(
    "language, report, words, label",
    [
        (
            "en",
            X.english_report,
            [
                "Values in charts",
                "Numbers stated in the sources",
                "Bar chart, Numbers stated in the sources: 3 values",
            ],
            "Online learning boom · 2021: 350,000 [4]",
        ),
        (
            "zh-hant",
            X.chinese_report,
            ["以圖表呈現的數值", "來源中記載的百分比", "長條圖，來源中記載的百分比：3 個數值"],
            "Generative AI among Taiwanese students · 2024：68% [2]",
        ),
    ],
)
def test_a_result_with_values_shows_an_svg_chart_whose_bars_link_to_their_sources(
    client, personas, language, report, words, label
):
    task = X.stored_report(personas.student, personas.channel, report())
    client.force_login(personas.student)
    client.cookies["django_language"] = language
    html = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    assert html.count('<svg class="chart"') == 1
    for word in words:
        assert word in html, word
    marks = MARK.findall(html)
    assert len(marks) == 3 and label in [aria for _href, aria in marks]
    for href, _label in marks:  # every bar's target is on the page
        assert href.startswith(citation_anchor(task)) and f'id="{href}"' in html


def test_a_result_without_values_to_chart_shows_no_chart(client, personas):
    report = X.english_report()
    report.values, report.computed = [], []
    for fact in report.facts:
        fact.values = []
    task = X.stored_report(personas.student, personas.channel, report)
    client.force_login(personas.student)
    html = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    assert "report-charts" not in html and "chart-mark" not in html
    assert 'class="print-references"' in html  # the print view's references are there all the same


def test_a_real_research_charts_the_figures_its_sources_state(client, personas, compared):  # noqa: F811
    client.force_login(personas.student)
    client.cookies["django_language"] = "en"
    html = client.get(f"/deep_research/task/{compared.task_uuid}").content.decode()
    assert html.count('<svg class="chart"') == 1 and "Amounts of money stated in the sources" in html
    marks = MARK.findall(html)
    assert len(marks) == 2
    for href, _label in marks:
        assert f'id="{href}"' in html
    assert (
        "95.93" not in html.split('class="report-charts"')[1].split("</section>")[0]
    )  # the cell off its filing
