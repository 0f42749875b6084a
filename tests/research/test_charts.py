"""Charts of verified figures (research/charts.py): what may be drawn is decided by code from the
report's figure claims and the engine's verification records, and nothing else feeds a chart."""

from __future__ import annotations

from research.charts import figure_charts, format_value, stored_charts


def figure(claim_id, entity, period, value, *, metric="revenue", unit="USD billion", citations=(1,)):
    return {
        "id": claim_id,
        "text": f"{entity} {metric} in {period} was {value} {unit}",
        "kind": "figure",
        "entity": entity,
        "metric": metric,
        "period": period,
        "value": value,
        "unit": unit,
        "citations": list(citations),
        "confidence": 0.9,
    }


def report_of(*claims, conflicts=()):
    return {
        "findings": [{"heading": "", "text": "", "citations": [], "claims": list(claims)}],
        "conflicts": list(conflicts),
    }


def verified(*ids, verdict="supported"):
    return [{"id": i, "verdict": verdict, "reason": "", "flagged": False} for i in ids]


def drawn(charts):
    return [[(m.claim_id, m.full_label, m.value_text, m.citations) for m in c.marks] for c in charts]


def test_verified_figures_sharing_a_metric_across_entities_make_one_chart_each_mark_citing_its_source():
    report = report_of(
        figure(1, "NVIDIA", "Q3 FY2025", 35.08, citations=[2]),
        figure(2, "Apple", "FY2024Q4", 94.93, citations=[1]),
    )
    charts = figure_charts(report, verified(1, 2), {1, 2})
    assert [(c.metric, c.unit) for c in charts] == [("revenue", "USD billion")]
    assert drawn(charts) == [[(1, "NVIDIA · Q3 FY2025", "35.08", [2]), (2, "Apple · FY2024Q4", "94.93", [1])]]
    nvidia, apple = charts[0].marks
    assert float(apple.width) > float(nvidia.width) > 0  # bars to scale, from zero
    assert nvidia.x == apple.x == charts[0].zero_x


def test_one_entity_over_periods_is_a_chart_too_and_one_figure_alone_is_none():
    periods = report_of(
        figure(1, "EDS101", "2023", 84, metric="enrolment", unit="students"),
        figure(2, "EDS101", "2024", 112, metric="enrolment", unit="students"),
    )
    assert drawn(figure_charts(periods, verified(1, 2), {1})) == [
        [(1, "EDS101 · 2023", "84", [1]), (2, "EDS101 · 2024", "112", [1])]
    ]
    alone = report_of(figure(1, "EDS101", "2023", 84))
    assert figure_charts(alone, verified(1), {1}) == []


def test_an_unverified_failed_flagged_or_unrecorded_figure_is_never_drawn():
    claims = [figure(i, f"Company {i}", "2024", 10.0 * i) for i in range(1, 7)]
    records = [
        {"id": 1, "verdict": "supported", "reason": "", "flagged": False},
        {"id": 2, "verdict": "partial", "reason": "", "flagged": False},
        {"id": 3, "verdict": "unsupported", "reason": "", "flagged": False},
        {"id": 4, "verdict": "supported", "reason": "figure_not_in_source", "flagged": False},
        {"id": 5, "verdict": "supported", "reason": "", "flagged": True},
        # 6: no verification record at all
    ]
    charts = figure_charts(report_of(*claims), records, {1})
    assert [m.claim_id for m in charts[0].marks] == [1, 2]
    # a report stored without verification records draws nothing (fail closed)
    assert figure_charts(report_of(*claims), [], {1}) == []
    assert stored_charts(report_of(*claims), {}, [{"number": 1}]) == []


def test_a_figure_only_in_the_verification_record_and_not_in_the_report_is_never_drawn():
    """A verified claim the report does not state (left out, or its sentence removed) feeds no chart."""
    report = report_of(figure(1, "A", "2024", 5.0), figure(2, "B", "2024", 6.0))
    records = verified(1, 2, 3)  # 3 is verified but not in the findings
    charts = figure_charts(report, records, {1})
    assert [m.claim_id for m in charts[0].marks] == [1, 2]


def test_the_losing_side_of_a_settled_conflict_is_not_drawn():
    report = report_of(
        figure(1, "NVIDIA", "Q3 FY2025", 35.08, citations=[1]),
        figure(2, "NVIDIA", "Q3 FY2025", 32.5, citations=[2]),
        figure(3, "Apple", "FY2024Q4", 94.93, citations=[3]),
        conflicts=[
            {"status": "resolved", "prevailing_side": 0, "sides": [{"claim_ids": [1]}, {"claim_ids": [2]}]}
        ],
    )
    charts = figure_charts(report, verified(1, 2, 3), {1, 2, 3})
    assert [m.claim_id for m in charts[0].marks] == [1, 3]


def test_different_units_are_never_mixed_in_one_chart_and_metrics_group_apart():
    report = report_of(
        figure(1, "A", "2024", 5.0, unit="USD billion"),
        figure(2, "B", "2024", 700.0, unit="USD million"),
        figure(3, "C", "2024", 6.0, unit="usd  Billion"),  # same unit, other spelling
        figure(4, "A", "2024", 12.0, metric="gross margin", unit="%"),
        figure(5, "B", "2024", 15.0, metric="Gross  Margin", unit="%"),
        figure(6, "A", "2024", 3.0, metric="operating income", unit="USD billion"),  # alone in its metric
    )
    charts = figure_charts(report, verified(1, 2, 3, 4, 5, 6), {1})
    assert [(c.metric, c.unit, [m.claim_id for m in c.marks]) for c in charts] == [
        ("revenue", "USD billion", [1, 3]),
        ("gross margin", "%", [4, 5]),
    ]  # the USD million figure stands alone in its unit: no chart, and never rescaled into another


def test_marks_link_only_to_citations_the_page_lists():
    report = report_of(
        figure(1, "A", "2024", 5.0, citations=[7, 2]),  # 7 is not in the page's list
        figure(2, "B", "2024", 6.0, citations=[9]),  # cites nothing the page lists: not drawn
        figure(3, "C", "2024", 4.0, citations=[1]),
    )
    charts = figure_charts(report, verified(1, 2, 3), {1, 2})
    assert [(m.claim_id, m.citations) for m in charts[0].marks] == [(1, [2]), (3, [1])]


def test_two_sources_stating_the_same_figure_are_one_mark_with_both_citations():
    report = report_of(
        figure(1, "A", "2024", 5.0, citations=[1]),
        figure(2, "A", "2024", 5.0, citations=[2]),
        figure(3, "B", "2024", 6.0, citations=[3]),
    )
    charts = figure_charts(report, verified(1, 2, 3), {1, 2, 3})
    assert [(m.claim_id, m.citations) for m in charts[0].marks] == [(1, [1, 2]), (3, [3])]


def test_values_that_are_not_numbers_are_not_drawn_and_negative_values_extend_left_of_zero():
    report = report_of(
        figure(1, "A", "2024", "5"),
        figure(2, "B", "2024", True),
        figure(3, "C", "2024", float("nan")),
        figure(4, "D", "2024", -2.0, metric="net income"),
        figure(5, "E", "2024", 4.0, metric="net income"),
    )
    charts = figure_charts(report, verified(1, 2, 3, 4, 5), {1})
    assert [(c.metric, [m.claim_id for m in c.marks]) for c in charts] == [("net income", [4, 5])]
    loss, profit = charts[0].marks
    assert float(loss.x) < float(charts[0].zero_x) == float(profit.x)
    assert (
        format_value(1234567.0) == "1,234,567"
        and format_value(35.08) == "35.08"
        and format_value(-0.0) == "0"
    )
