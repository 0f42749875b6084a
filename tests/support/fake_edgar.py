"""A fake SEC EDGAR: the ticker list and XBRL company facts of one fictional company whose fiscal
year ends in late January (like NVIDIA), shaped like SEC's own JSON.

Like the real company facts, each 10-Q repeats last year's quarter and carries year-to-date sums
under the *filing's* fy/fp, and the 10-K has annual values only (no three-month Q4), so the
product has to pick the right fact rather than the first one. Like SEC, it answers 403 to a
request without a User-Agent."""

from __future__ import annotations

from tests.support.fake_http import FakeHTTPServer, Reply, Request

CIK = 1234567
TICKER = "ACME"
NAME = "ACME DEVICES INC"
NO_XBRL_TICKER, NO_XBRL_CIK = "NOXB", 7654321

# Fiscal 2025 quarters and fiscal 2026 Q1: (fy, fp, start, end, accession, form, filed)
QUARTERS = {
    "2025Q1": ("2024-01-29", "2024-04-28"),
    "2025Q2": ("2024-04-29", "2024-07-28"),
    "2025Q3": ("2024-07-29", "2024-10-27"),
    "2025Q4": ("2024-10-28", "2025-01-26"),
    "2026Q1": ("2025-01-27", "2025-04-27"),
    "2024Q2": ("2023-05-01", "2023-07-30"),  # last year's Q2: the comparative inside the 2025Q2 10-Q
}
FILINGS = {
    "2025Q1": ("0001234567-24-000010", "10-Q", "2024-05-29"),
    "2025Q2": ("0001234567-24-000020", "10-Q", "2024-08-28"),
    "2025Q3": ("0001234567-24-000030", "10-Q", "2024-11-20"),
    "2025FY": ("0001234567-25-000005", "10-K", "2025-02-26"),
    "2026Q1": ("0001234567-25-000020", "10-Q", "2025-05-28"),
}
FRAMES = {"2025Q1": "CY2024Q1", "2025Q2": "CY2024Q2", "2025Q3": "CY2024Q3", "2026Q1": "CY2025Q1"}

# Quarterly values in USD (EPS in USD/shares); the 2024Q2 column is the comparative quarter.
VALUES = {
    "Revenues": {
        "2024Q2": 13_507e6,
        "2025Q1": 26_044e6,
        "2025Q2": 30_040e6,
        "2025Q3": 35_082e6,
        "2025Q4": 39_331e6,
        "2026Q1": 44_062e6,
    },
    "GrossProfit": {
        "2024Q2": 9_462e6,
        "2025Q1": 20_406e6,
        "2025Q2": 22_574e6,
        "2025Q3": 26_156e6,
        "2025Q4": 28_723e6,
        "2026Q1": 26_668e6,
    },
    "OperatingIncomeLoss": {
        "2024Q2": 6_800e6,
        "2025Q1": 16_909e6,
        "2025Q2": 18_642e6,
        "2025Q3": 21_869e6,
        "2025Q4": 24_034e6,
        "2026Q1": 21_638e6,
    },
    "NetIncomeLoss": {
        "2024Q2": 6_188e6,
        "2025Q1": 14_881e6,
        "2025Q2": 16_599e6,
        "2025Q3": 19_309e6,
        "2025Q4": 22_091e6,
        "2026Q1": 18_775e6,
    },
    "EarningsPerShareDiluted": {
        "2024Q2": 0.25,
        "2025Q1": 0.60,
        "2025Q2": 0.67,
        "2025Q3": 0.78,
        "2026Q1": 0.76,
    },
}
ANNUAL_EPS_DILUTED = 2.94


def _entry(start, end, val, filing_key, fy, fp, frame=None) -> dict:
    accn, form, filed = FILINGS[filing_key]
    entry = {
        "start": start,
        "end": end,
        "val": val,
        "accn": accn,
        "fy": fy,
        "fp": fp,
        "form": form,
        "filed": filed,
    }
    if frame:
        entry["frame"] = frame
    return entry


def _entries(concept: str) -> list[dict]:
    values = VALUES[concept]
    q = QUARTERS
    additive = concept != "EarningsPerShareDiluted"
    rows = []
    # Each 10-Q: its own quarter (with the calendar frame), plus the same quarter a year earlier.
    for key, fp in (("2025Q1", "Q1"), ("2025Q2", "Q2"), ("2025Q3", "Q3")):
        rows.append(_entry(*q[key], values[key], key, 2025, fp, FRAMES[key]))
    rows.append(_entry(*q["2024Q2"], values["2024Q2"], "2025Q2", 2025, "Q2"))
    rows.append(_entry(*q["2026Q1"], values["2026Q1"], "2026Q1", 2026, "Q1", FRAMES["2026Q1"]))
    rows.append(_entry(*q["2025Q1"], values["2025Q1"], "2026Q1", 2026, "Q1"))  # comparative, labelled fy 2026
    if additive:
        ytd6 = values["2025Q1"] + values["2025Q2"]
        ytd9 = ytd6 + values["2025Q3"]
        year = ytd9 + values["2025Q4"]
        rows.append(_entry(q["2025Q1"][0], q["2025Q2"][1], ytd6, "2025Q2", 2025, "Q2"))
        rows.append(_entry(q["2025Q1"][0], q["2025Q3"][1], ytd9, "2025Q3", 2025, "Q3"))
        rows.append(_entry(q["2025Q1"][0], q["2025Q4"][1], year, "2025FY", 2025, "FY", "CY2024"))
    else:
        rows.append(
            _entry(q["2025Q1"][0], q["2025Q4"][1], ANNUAL_EPS_DILUTED, "2025FY", 2025, "FY", "CY2024")
        )
    # A registration statement repeats a figure: not a 10-Q/10-K, never to be chosen.
    rows.append(
        {
            **_entry(*q["2025Q2"], values["2025Q2"] * 2, "2025Q2", 2025, "Q2"),
            "form": "S-1",
            "accn": "0001234567-24-999999",
        }
    )
    return rows


def company_facts() -> dict:
    gaap = {}
    for concept in VALUES:
        unit = "USD/shares" if concept.startswith("EarningsPerShare") else "USD"
        gaap[concept] = {"label": concept, "units": {unit: _entries(concept)}}
    gaap["AccountsPayableCurrent"] = {
        "label": "unused",
        "units": {"USD": [_entry(*QUARTERS["2025Q1"], 1.0, "2025Q1", 2025, "Q1")]},
    }
    return {"cik": CIK, "entityName": NAME, "facts": {"us-gaap": gaap, "dei": {}}}


class FakeEdgar(FakeHTTPServer):
    TICKERS_PATH = "/files/company_tickers.json"

    def __init__(self) -> None:
        super().__init__()
        self.route(
            self.TICKERS_PATH,
            self._needs_agent(
                lambda r: Reply.json(
                    {
                        "0": {"cik_str": CIK, "ticker": TICKER, "title": "Acme Devices Inc."},
                        "1": {"cik_str": NO_XBRL_CIK, "ticker": NO_XBRL_TICKER, "title": "No XBRL Holdings"},
                    }
                )
            ),
        )
        self.route(
            f"/api/xbrl/companyfacts/CIK{CIK:010d}.json",
            self._needs_agent(lambda r: Reply.json(company_facts())),
        )

    @staticmethod
    def _needs_agent(handler):
        def serve(request: Request) -> Reply:
            if "@" not in request.headers.get("user-agent", ""):
                return Reply(
                    status=403,
                    body="Your request has been identified as part of an undeclared automated tool.",
                )
            return handler(request)

        return serve
