"""get_financials against a fake SEC EDGAR: the right fact for the quarter, each with its filing."""

from __future__ import annotations

import pytest

from agent.connectors.edgar import Period, parse_quarter
from tests.agent.connectors.conftest import call
from tests.support import fake_edgar

ARCHIVE = "https://www.sec.gov/Archives/edgar/data/1234567"


def _by_metric(result) -> dict:
    return {s.meta["metric"]: s for s in result.sources}


def test_fiscal_quarter_figures_come_with_the_filing_they_were_reported_in(edgar):
    result = call("get_financials", ticker="acme", quarter="2025Q2")

    assert result.ok, result.error
    figures = result.data["figures"]
    # The quarter itself: not last year's comparative (13,507M), not the six-month sum, not the S-1.
    assert figures["revenue"]["value"] == 30_040e6
    assert figures["net_income"]["value"] == 16_599e6
    assert figures["eps_diluted"]["value"] == 0.67
    assert (figures["revenue"]["start"], figures["revenue"]["end"]) == ("2024-04-29", "2024-07-28")
    assert figures["revenue"]["filings"] == [
        {
            "accession": "0001234567-24-000020",
            "form": "10-Q",
            "filed": "2024-08-28",
            "url": f"{ARCHIVE}/000123456724000020/0001234567-24-000020-index.htm",
        }
    ]
    assert result.data["period"] == "fiscal 2025 Q2" and result.data["company"] == "ACME DEVICES INC"

    revenue = _by_metric(result)["revenue"]
    assert revenue.tier == "structured" and revenue.source_tool == "get_financials"
    assert revenue.url == f"{ARCHIVE}/000123456724000020/0001234567-24-000020-index.htm"
    assert revenue.locator == "accession 0001234567-24-000020 · us-gaap:Revenues"
    assert (
        "USD 30,040,000,000" in revenue.snippet
        and "Form 10-Q, accession 0001234567-24-000020, filed 2024-08-28" in revenue.snippet
    )


def test_margins_are_computed_from_the_quarters_figures_and_cite_the_filing(edgar):
    result = call("get_financials", ticker="ACME", quarter="FY2025 Q2")
    margins = result.data["margins"]
    assert margins["gross_margin"]["value"] == pytest.approx(22_574 / 30_040, abs=1e-6)
    assert margins["net_margin"]["value"] == pytest.approx(16_599 / 30_040, abs=1e-6)
    net_margin = _by_metric(result)["net_margin"]
    assert "55.3% = Net income" in net_margin.snippet
    assert net_margin.meta["filings"][0]["accession"] == "0001234567-24-000020"


def test_a_fourth_quarter_is_derived_from_the_annual_and_nine_month_filings(edgar):
    result = call("get_financials", ticker="ACME", quarter="2025Q4")

    assert result.ok, result.error
    revenue = result.data["figures"]["revenue"]
    assert revenue["value"] == 39_331e6
    assert (revenue["start"], revenue["end"]) == ("2024-10-28", "2025-01-26")
    assert [f["form"] for f in revenue["filings"]] == ["10-K", "10-Q"]
    assert "minus nine-month" in revenue["derived"]
    # A per-share figure cannot be derived by subtraction: it is reported as missing, not invented.
    assert "eps_diluted" in result.data["not_reported"]


def test_a_calendar_quarter_uses_secs_calendar_frames(edgar):
    result = call("get_financials", ticker="ACME", quarter="CY2024Q2")
    assert result.data["period"] == "calendar 2024 Q2"
    assert result.data["figures"]["revenue"]["value"] == 30_040e6


def test_latest_is_the_most_recently_filed_quarter(edgar):
    result = call("get_financials", ticker="ACME", quarter="latest")
    assert result.data["period"] == "fiscal 2026 Q1"
    assert (
        result.data["figures"]["revenue"]["value"] == 44_062e6
    )  # not the comparative 26,044M in the same 10-Q


def test_an_unknown_ticker_is_a_clear_error(edgar):
    result = call("get_financials", ticker="ZZZZ", quarter="2025Q2")
    assert result.error == "unknown ticker 'ZZZZ': SEC's list of reporting companies has no such ticker"


def test_a_quarter_without_filings_names_the_latest_available(edgar):
    result = call("get_financials", ticker="ACME", quarter="2031Q2")
    assert result.error == (
        "ACME (ACME DEVICES INC) reported no revenue or net income for fiscal 2031 Q2 in its 10-Q/10-K filings; "
        "the latest reported period is fiscal 2026 Q1"
    )


def test_a_company_without_xbrl_facts_is_a_clear_error(edgar):
    result = call("get_financials", ticker=fake_edgar.NO_XBRL_TICKER, quarter="2025Q2")
    assert (
        result.error
        == f"{fake_edgar.NO_XBRL_TICKER} files no XBRL financial data with SEC (no company facts for CIK {fake_edgar.NO_XBRL_CIK})"
    )


@pytest.mark.parametrize("quarter", ["2025Q5", "Q2", "second quarter", "2025-06-30", ""])
def test_a_quarter_in_an_unknown_format_is_refused_before_any_request(edgar, quarter):
    result = call("get_financials", ticker="ACME", quarter=quarter)
    assert "is not understood: use 2025Q2" in result.error
    assert edgar.requests == []


def test_without_a_user_agent_contact_it_is_not_configured_rather_than_blocked(edgar, settings):
    settings.EDGAR_USER_AGENT = ""
    result = call("get_financials", ticker="ACME", quarter="2025Q2")
    assert result.error.startswith("get_financials is not configured on this server")
    assert edgar.requests == []


def test_sec_is_sent_the_configured_user_agent_and_answers_are_cached(edgar):
    call("get_financials", ticker="ACME", quarter="2025Q2")
    call("get_financials", ticker="ACME", quarter="2025Q3")
    assert all(r.headers["user-agent"] == "Uedu tests ops@uedu.example" for r in edgar.requests)
    assert len(edgar.requests) == 2  # the ticker list and the company facts, once each


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("2025Q2", Period("fiscal", 2025, 2)),
        ("fy2025q2", Period("fiscal", 2025, 2)),
        ("2025-Q2", Period("fiscal", 2025, 2)),
        ("Q2 2025", Period("fiscal", 2025, 2)),
        ("Q2 FY2025", Period("fiscal", 2025, 2)),
        ("CY2025Q2", Period("calendar", 2025, 2)),
        ("cy 2025 q4", Period("calendar", 2025, 4)),
        ("Latest", Period("latest")),
    ],
)
def test_accepted_quarter_formats(text, period):
    assert parse_quarter(text) == period


@pytest.mark.parametrize(
    "value, unit, shown",
    [
        # 3.215 billion is 3.2149… as a binary float; a reader (and the evaluation's gold) rounds up.
        (3_215_000_000.0, "USD", "USD 3,215,000,000 (≈ USD 3.22 billion)"),
        (-3_215_000_000.0, "USD", "USD -3,215,000,000 (≈ USD -3.22 billion)"),
        (61_505_000.0, "USD", "USD 61,505,000 (≈ USD 61.51 million)"),
        (1.235, "USD/shares", "USD 1.24 per share"),
        (999.0, "USD", "USD 999"),
    ],
)
def test_a_figure_is_written_rounded_half_up_from_its_decimal_value(value, unit, shown):
    from agent.tools.structured import _amount

    assert _amount(value, unit) == shown
