"""Quarterly figures from SEC EDGAR's XBRL company facts, each with the filing it came from.

Quarters. "2025Q2" (also "FY2025Q2", "2025-Q2", "Q2 2025", "FY2025 Q2") is the company's own
*fiscal* quarter, as its filings label it (NVIDIA's fiscal 2026 Q1 ended in April 2025).
"CY2025Q2" is the *calendar* quarter, as SEC aligns facts to calendar frames, which is what
comparing two companies with different fiscal years needs. "latest" is the most recently filed
fiscal quarter.

How a fiscal quarter is found. In the company facts, `fy`/`fp` label the *filing*, and a 10-Q
also repeats last year's quarter and the year-to-date sums. So for fiscal Y Qn we take the facts
of the Y/Qn filing whose period lasts about three months and ends last (the current quarter),
and among restatements the one filed last. Companies rarely tag a three-month Q4 in their 10-K;
then Q4 revenue and income are derived as the fiscal-year total minus the nine-month year-to-date
of the Q3 10-Q (both filings are cited). Per-share figures are not additive and are not derived.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.conf import settings

from .http import ExternalServiceError, NotFoundError, get_json

SERVICE = "SEC EDGAR"
FORMS = ("10-Q", "10-Q/A", "10-K", "10-K/A")
QUARTER_DAYS = range(80, 101)  # 13 weeks, or a 52/53-week fiscal calendar's 12–14 weeks
NINE_MONTH_DAYS = range(250, 290)
YEAR_DAYS = range(350, 380)
TICKER = re.compile(r"^[A-Z0-9][A-Z0-9.\-]{0,9}$")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    concepts: tuple[str, ...]  # us-gaap concepts, most specific first
    unit: str
    additive: bool  # a Q4 value may be derived as year minus nine months


METRICS = (
    Metric(
        "revenue",
        "Revenue",
        (
            "Revenues",
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "RevenueFromContractWithCustomerIncludingAssessedTax",
            "SalesRevenueNet",
        ),
        "USD",
        True,
    ),
    Metric("gross_profit", "Gross profit", ("GrossProfit",), "USD", True),
    Metric("operating_income", "Operating income", ("OperatingIncomeLoss",), "USD", True),
    Metric("net_income", "Net income", ("NetIncomeLoss", "ProfitLoss"), "USD", True),
    Metric("eps_diluted", "Diluted EPS", ("EarningsPerShareDiluted",), "USD/shares", False),
    Metric("eps_basic", "Basic EPS", ("EarningsPerShareBasic",), "USD/shares", False),
)
MARGINS = (
    ("gross_margin", "Gross margin", "gross_profit"),
    ("operating_margin", "Operating margin", "operating_income"),
    ("net_margin", "Net margin", "net_income"),
)


@dataclass(frozen=True)
class Period:
    kind: str  # "fiscal", "calendar" or "latest"
    year: int = 0
    quarter: int = 0

    @property
    def label(self) -> str:
        return f"{self.kind} {self.year} Q{self.quarter}"


_FISCAL = (re.compile(r"^(?:FY)?(\d{4})-?Q([1-4])$"), re.compile(r"^Q([1-4])-?(?:FY)?(\d{4})$"))
_CALENDAR = re.compile(r"^CY(\d{4})-?Q([1-4])$")


def parse_quarter(text: str) -> Period:
    """'2025Q2' / 'FY2025Q2' / '2025-Q2' / 'Q2 2025' (fiscal), 'CY2025Q2' (calendar), 'latest'."""
    compact = re.sub(r"[\s_]+", "", (text or "").upper())
    if compact in ("LATEST", "LAST", "MOSTRECENT"):
        return Period("latest")
    if match := _CALENDAR.match(compact):
        return Period("calendar", int(match.group(1)), int(match.group(2)))
    if match := _FISCAL[0].match(compact):
        return Period("fiscal", int(match.group(1)), int(match.group(2)))
    if match := _FISCAL[1].match(compact):
        return Period("fiscal", int(match.group(2)), int(match.group(1)))
    raise ValueError(
        f"quarter {text!r} is not understood: use 2025Q2 (the company's fiscal quarter), "
        "CY2025Q2 (the calendar quarter) or 'latest'"
    )


def normalise_ticker(ticker: str) -> str:
    symbol = (ticker or "").strip().upper().replace(".", "-")  # SEC writes BRK.B as BRK-B
    if not TICKER.match(symbol):
        raise ValueError(f"{ticker!r} is not a stock ticker (like AAPL or NVDA)")
    return symbol


@dataclass
class Filing:
    accession: str
    form: str
    filed: str
    url: str


@dataclass
class Figure:
    key: str
    label: str
    value: float
    unit: str
    concept: str
    start: str
    end: str
    filings: list[Filing]
    derived: str = ""  # how it was computed when no filing states it directly


@dataclass
class Financials:
    ticker: str
    cik: int
    company: str
    period: str  # "fiscal 2025 Q2"
    start: str
    end: str
    figures: dict[str, Figure]
    margins: dict[str, dict]
    missing: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- EDGAR requests
def _headers() -> dict:
    if not settings.EDGAR_USER_AGENT:
        raise ExternalServiceError(
            "get_financials is not configured on this server: SEC requires a contact in EDGAR_USER_AGENT"
        )
    return {"User-Agent": settings.EDGAR_USER_AGENT, "Accept": "application/json"}


def _ticker_map(data) -> dict[str, list]:
    """SEC's {"0": {"cik_str": 320193, "ticker": "AAPL", "title": "Apple Inc."}, …} → {"AAPL": [cik, title]}."""
    if not isinstance(data, dict):
        raise ExternalServiceError(f"{SERVICE} sent an unexpected ticker list")
    table = {}
    for row in data.values():
        if isinstance(row, dict) and row.get("ticker") and row.get("cik_str") is not None:
            table[str(row["ticker"]).upper()] = [int(row["cik_str"]), str(row.get("title") or "")]
    if not table:
        raise ExternalServiceError(f"{SERVICE} sent an empty ticker list")
    return table


def resolve_ticker(ticker: str) -> tuple[int, str]:
    symbol = normalise_ticker(ticker)
    table = get_json(
        service=SERVICE, url=settings.EDGAR_TICKERS_URL, headers=_headers(), transform=_ticker_map
    )
    if symbol not in table:
        raise NotFoundError(
            f"unknown ticker {symbol!r}: SEC's list of reporting companies has no such ticker"
        )
    cik, title = table[symbol]
    return int(cik), title


def _needed_facts(data) -> dict:
    """Keep only the concepts and forms we read: a company-facts file runs to megabytes."""
    if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
        raise ExternalServiceError(f"{SERVICE} sent unexpected company facts (no facts)")
    gaap = data["facts"].get("us-gaap") or {}
    kept: dict[str, dict[str, list]] = {}
    for metric in METRICS:
        for concept in metric.concepts:
            entries = ((gaap.get(concept) or {}).get("units") or {}).get(metric.unit) or []
            rows = [
                {k: e.get(k) for k in ("start", "end", "val", "accn", "fy", "fp", "form", "filed", "frame")}
                for e in entries
                if isinstance(e, dict)
                and e.get("form") in FORMS
                and e.get("start")
                and e.get("end")
                and e.get("val") is not None
            ]
            if rows:
                kept.setdefault(concept, {})[metric.unit] = rows
    return {"entityName": data.get("entityName") or "", "facts": kept}


def company_facts(cik: int) -> dict:
    return get_json(
        service=SERVICE,
        url=f"{settings.EDGAR_BASE_URL}/api/xbrl/companyfacts/CIK{cik:010d}.json",
        headers=_headers(),
        transform=_needed_facts,
    )


# --------------------------------------------------------------------------- choosing facts
def _days(entry: dict) -> int:
    return (date.fromisoformat(entry["end"]) - date.fromisoformat(entry["start"])).days + 1


def _pick(entries: list[dict], *, fy: int, fp: str, days: range) -> dict | None:
    """The current-period fact of the fy/fp filing(s): latest end, then latest filed."""
    candidates = [e for e in entries if e.get("fy") == fy and e.get("fp") == fp and _days(e) in days]
    if not candidates:
        return None
    last_end = max(e["end"] for e in candidates)
    return max((e for e in candidates if e["end"] == last_end), key=lambda e: e.get("filed") or "")


def _filing(cik: int, entry: dict) -> Filing:
    accession = str(entry["accn"])
    url = f"{settings.EDGAR_ARCHIVES_URL}/{cik}/{accession.replace('-', '')}/{accession}-index.htm"
    return Filing(
        accession=accession, form=str(entry.get("form") or ""), filed=str(entry.get("filed") or ""), url=url
    )


def _entries(facts: dict, metric: Metric) -> list[tuple[str, list[dict]]]:
    return [
        (c, facts["facts"][c][metric.unit])
        for c in metric.concepts
        if metric.unit in facts["facts"].get(c, {})
    ]


def _figure(cik: int, facts: dict, metric: Metric, period: Period) -> Figure | None:
    for concept, entries in _entries(facts, metric):
        if period.kind == "calendar":
            frame = f"CY{period.year}Q{period.quarter}"
            framed = [e for e in entries if e.get("frame") == frame]
            chosen = max(framed, key=lambda e: e.get("filed") or "") if framed else None
        else:
            fp = "FY" if period.quarter == 4 else f"Q{period.quarter}"
            chosen = _pick(entries, fy=period.year, fp=fp, days=QUARTER_DAYS)
        if chosen is not None:
            return Figure(
                metric.key,
                metric.label,
                chosen["val"],
                metric.unit,
                concept,
                chosen["start"],
                chosen["end"],
                [_filing(cik, chosen)],
            )
        if period.kind == "fiscal" and period.quarter == 4 and metric.additive:
            year = _pick(entries, fy=period.year, fp="FY", days=YEAR_DAYS)
            nine = _pick(entries, fy=period.year, fp="Q3", days=NINE_MONTH_DAYS)
            if year and nine and year["start"] == nine["start"]:
                start = (date.fromisoformat(nine["end"]) + timedelta(days=1)).isoformat()
                return Figure(
                    metric.key,
                    metric.label,
                    year["val"] - nine["val"],
                    metric.unit,
                    concept,
                    start,
                    year["end"],
                    [_filing(cik, year), _filing(cik, nine)],
                    derived="fiscal-year total (10-K) minus nine-month year-to-date (Q3 10-Q)",
                )
    return None


def _latest_period(facts: dict) -> Period | None:
    entries = [
        e for metric in METRICS[:1] + METRICS[3:4] for _, rows in _entries(facts, metric) for e in rows
    ]
    if not entries:
        return None
    newest = max(entries, key=lambda e: (e.get("filed") or "", e["end"]))
    if not isinstance(newest.get("fy"), int) or newest.get("fp") not in ("Q1", "Q2", "Q3", "FY"):
        return None
    return Period("fiscal", newest["fy"], 4 if newest["fp"] == "FY" else int(newest["fp"][1]))


def quarterly_financials(ticker: str, quarter: str) -> Financials:
    period = parse_quarter(quarter)
    symbol = normalise_ticker(ticker)
    cik, title = resolve_ticker(symbol)
    try:
        facts = company_facts(cik)
    except NotFoundError:
        raise NotFoundError(
            f"{symbol} files no XBRL financial data with SEC (no company facts for CIK {cik})"
        ) from None
    company = facts.get("entityName") or title
    latest = _latest_period(facts)
    if latest is None:
        raise NotFoundError(
            f"{symbol} ({company}) has no 10-Q/10-K revenue or net income in USD in its SEC filings"
        )
    if period.kind == "latest":
        period = latest

    figures: dict[str, Figure] = {}
    missing: list[str] = []
    for metric in METRICS:
        found = _figure(cik, facts, metric, period)
        if found is None:
            missing.append(metric.key)
        else:
            figures[metric.key] = found
    if "revenue" not in figures and "net_income" not in figures:
        raise NotFoundError(
            f"{symbol} ({company}) reported no revenue or net income for {period.label} "
            f"in its 10-Q/10-K filings; the latest reported period is {latest.label}"
        )

    margins = {}
    revenue = figures.get("revenue")
    for key, label, numerator_key in MARGINS:
        numerator = figures.get(numerator_key)
        if (
            revenue
            and numerator
            and revenue.value
            and (numerator.start, numerator.end) == (revenue.start, revenue.end)
        ):
            margins[key] = {
                "label": label,
                "value": numerator.value / revenue.value,
                "formula": f"{numerator.label} / {revenue.label}",
                "numerator": numerator_key,
            }
    anchor = revenue or figures["net_income"]
    return Financials(symbol, cik, company, period.label, anchor.start, anchor.end, figures, margins, missing)
