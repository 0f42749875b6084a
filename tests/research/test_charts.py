"""Charts of a report's values (research/charts.py): what may be drawn is decided by code from the
typed report, and only values code parsed from the spans of the facts it shows (or computed from
them) ever feed a chart; bars are labelled by source and year, titles are the page's words."""

from __future__ import annotations

import dataclasses

from django.utils import translation

from agent.engine import report_types as R
from agent.engine.report_legacy import from_v1
from research.charts import report_charts
from tests.support import report_examples as X


def drawn(charts):
    return [[(m.key, m.full_label, m.value_text, m.number, m.computed) for m in c.marks] for c in charts]


def test_values_with_their_years_make_one_chart_per_kind_and_unit_labelled_by_source_and_year():
    with translation.override("en"):
        charts = report_charts(X.english_report())
    assert [(c.kind, c.unit, c.title) for c in charts] == [("number", "", "Numbers stated in the sources")]
    assert drawn(charts) == [
        [
            ("v1", "Online course enrolment, 2019–2021 · 2019", "120,000", 1, False),
            ("v2", "Online course enrolment, 2019–2021 · 2021", "310,000", 1, False),
            ("v3", "Online learning boom · 2021", "350,000", 4, False),  # the other side of a conflict
        ]
    ]  # "45 studies" has no year: no bar
    low, high, other = charts[0].marks
    assert float(other.width) > float(high.width) > float(low.width) > 0  # to scale, from zero
    assert low.x == high.x == charts[0].zero_x


def test_percentages_are_charted_apart_and_titled_in_the_readers_language():
    with translation.override("zh-hant"):
        (chart,) = report_charts(X.chinese_report())
    assert (chart.kind, chart.unit, chart.title, chart.unit_label) == (
        "percent",
        "%",
        "來源中記載的百分比",
        "%",
    )
    assert [(m.full_label, m.value_text) for m in chart.marks] == [
        ("大專校院生成式AI使用調查 · 2023", "45"),
        ("大專校院生成式AI使用調查 · 2024", "72"),
        ("Generative AI among Taiwanese students · 2024", "68"),
    ]


def test_a_superseded_fact_a_flagged_source_a_hidden_fact_and_a_year_never_make_a_bar():
    report = X.english_report()
    report.fact(2).superseded = True  # the web page's 350,000 lost its conflict
    assert [m.key for m in report_charts(report)[0].marks] == ["v1", "v2"]
    report = X.english_report()
    report.source(4).flagged = True
    assert [m.key for m in report_charts(report)[0].marks] == ["v1", "v2"]
    report = X.english_report()
    report.sections[0].facts = [1]  # fact 2 is no longer shown
    assert [m.key for m in report_charts(report)[0].marks] == ["v1", "v2"]
    report = X.english_report()
    report.values.append(R.Value(id=9, span="11.3", kind="year", value=2021, text="2021", start=3, end=7))
    report.fact(1).values.append(9)
    assert all(m.key != "v9" for m in report_charts(report)[0].marks)


def test_computed_values_are_drawn_apart_and_labelled_computed():
    report = X.english_report()
    second = R.Computed(id=2, kind="growth", inputs=[1, 3], value=191.67, unit="%")
    report.computed.append(second)
    with translation.override("en"):
        charts = report_charts(report)
    computed = next(c for c in charts if c.computed)
    assert computed.title == "Growth computed from the values in the sources"
    assert drawn([computed]) == [
        [("c1", "growth · 2019→2021", "158.33", 1, True), ("c2", "growth · 2019→2021", "191.67", 1, True)]
    ]
    # a computation from a value no bar may show is not drawn either
    report.fact(2).superseded = True
    assert [m.key for c in report_charts(report) if c.computed for m in c.marks] == []


def test_one_value_alone_and_a_report_without_values_draw_nothing():
    report = X.english_report()
    report.sections = [dataclasses.replace(report.sections[0], facts=[2])]
    assert report_charts(report) == []
    assert report_charts(X.nothing_verified_report()) == []


def test_a_1x_report_is_charted_from_the_values_parsed_from_its_quotes():
    with translation.override("en"):
        (chart,) = report_charts(from_v1(X.v1_report()))
    assert (chart.kind, chart.unit, chart.title) == (
        "currency",
        "USD",
        "Amounts of money stated in the sources",
    )
    assert [(m.full_label, m.value_text, m.number) for m in chart.marks] == [
        ("NVDA — Revenue — SEC Form 10-Q · 2025", "35,082,000,000", 2),
        ("AAPL — Revenue — SEC Form 10-Q · 2024", "94,930,000,000", 1),
    ]
