"""get_financials: quarterly figures from SEC EDGAR XBRL filings (tier "structured"), each cited
to the filing it came from (form, accession number, filing date, link to the filing index)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from agent.connectors import edgar
from agent.connectors.http import ExternalServiceError
from agent.engine.types import Source, ToolResult

from . import REGISTRY
from .registry import ToolContext


def _half_up(value: Decimal, places: str = "0.01") -> Decimal:
    """Rounded as a reader rounds (half away from zero), on the decimal value the filing states:
    3,215,000,000 / 1e9 is 3.215 exactly in decimal but 3.2149… as a binary float, which format()
    would round down to 3.21."""
    return value.quantize(Decimal(places), rounding=ROUND_HALF_UP)


def _amount(value: float, unit: str) -> str:
    exact = Decimal(repr(value))
    if unit == "USD/shares":
        return f"USD {_half_up(exact)} per share"
    words = next(
        (
            f" (≈ USD {_half_up(exact / size):,} {name})"
            for size, name in ((10**9, "billion"), (10**6, "million"))
            if abs(exact) >= size
        ),
        "",
    )
    return f"USD {_half_up(exact, '1'):,}{words}"


def _provenance(filings: list[edgar.Filing]) -> str:
    return "; ".join(f"Form {f.form}, accession {f.accession}, filed {f.filed}" for f in filings)


def _figure_source(report: edgar.Financials, figure: edgar.Figure) -> Source:
    how = f" Derived as the {figure.derived}." if figure.derived else ""
    text = (
        f"{report.company} ({report.ticker}), {figure.label} for {report.period} "
        f"({figure.start} to {figure.end}): {_amount(figure.value, figure.unit)}.{how} "
        f"Source: SEC EDGAR XBRL us-gaap:{figure.concept}; {_provenance(figure.filings)}."
    )
    first = figure.filings[0]
    return Source(
        title=f"{report.company} ({report.ticker}) — {figure.label}, {report.period} — SEC Form {first.form}",
        snippet=text[:300],
        text=text,
        tier="structured",
        url=first.url,
        locator=f"accession {first.accession} · us-gaap:{figure.concept}",
        meta={
            "external": True,
            "provider": "sec-edgar",
            "ticker": report.ticker,
            "cik": report.cik,
            "metric": figure.key,
            "value": figure.value,
            "unit": figure.unit,
            "period_start": figure.start,
            "period_end": figure.end,
            "derived": figure.derived,
            "filings": [vars(f) for f in figure.filings],
        },
    )


def _margin_source(report: edgar.Financials, key: str, margin: dict) -> Source:
    numerator, revenue = report.figures[margin["numerator"]], report.figures["revenue"]
    filings = list({f.accession: f for f in numerator.filings + revenue.filings}.values())
    text = (
        f"{report.company} ({report.ticker}), {margin['label']} for {report.period}: {margin['value']:.1%} "
        f"= {numerator.label} {_amount(numerator.value, numerator.unit)} / {revenue.label} {_amount(revenue.value, revenue.unit)}. "
        f"Computed by Uedu from SEC filings: {_provenance(filings)}."
    )
    return Source(
        title=f"{report.company} ({report.ticker}) — {margin['label']}, {report.period} (computed from SEC filings)",
        snippet=text[:300],
        text=text,
        tier="structured",
        url=filings[0].url,
        locator=f"accession {filings[0].accession} · {margin['formula']}",
        meta={
            "external": True,
            "provider": "sec-edgar",
            "ticker": report.ticker,
            "metric": key,
            "value": margin["value"],
            "computed": margin["formula"],
            "filings": [vars(f) for f in filings],
        },
    )


@REGISTRY.tool(tier="structured", search=False, exact_figures=True)
def get_financials(ctx: ToolContext, ticker: str, quarter: str) -> ToolResult:
    """Authoritative quarterly financials of a US-listed company from its SEC filings (XBRL):
    revenue, gross profit, operating income, net income, diluted and basic EPS, and margins, each
    with the filing it came from. Prefer it to web pages for these figures.

    Args:
        ticker: the stock ticker, e.g. AAPL or NVDA
        quarter: the company's fiscal quarter like 2025Q2 (also FY2025Q2, Q2 2025), a calendar quarter like CY2025Q2, or latest
    """
    try:
        report = edgar.quarterly_financials(ticker, quarter)
    except (ValueError, ExternalServiceError) as exc:
        return ToolResult(error=str(exc))
    sources = [_figure_source(report, f) for f in report.figures.values()]
    sources += [_margin_source(report, key, m) for key, m in report.margins.items()]
    return ToolResult(
        sources=sources,
        data={
            "company": report.company,
            "ticker": report.ticker,
            "cik": report.cik,
            "period": report.period,
            "period_start": report.start,
            "period_end": report.end,
            "figures": {
                key: {
                    "value": f.value,
                    "unit": f.unit,
                    "concept": f"us-gaap:{f.concept}",
                    "start": f.start,
                    "end": f.end,
                    "derived": f.derived,
                    "filings": [vars(x) for x in f.filings],
                }
                for key, f in report.figures.items()
            },
            "margins": {
                key: {"value": round(m["value"], 6), "formula": m["formula"]}
                for key, m in report.margins.items()
            },
            "not_reported": report.missing,
        },
    )
