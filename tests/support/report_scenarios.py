"""Scripted scenarios for the claims-first report: financial filings and web pages that
disagree on a figure, a scripted extractor that reads their revenue figures, and a researcher
that asks get_financials first (tests/agent/test_verified_report.py, tests/research/test_report.py)."""

from __future__ import annotations

import json
import re

from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolRegistry
from tests.support.scripted_llm import claims_in, sources_in

NVDA = "NVIDIA Corp (NVDA), Revenue for FY2025Q3: $35,082,000,000 (USD). Source: SEC EDGAR XBRL us-gaap:Revenues."
AAPL = (
    "Apple Inc (AAPL), Revenue for FY2024Q4: $94,930,000,000 (USD). Source: SEC EDGAR XBRL us-gaap:Revenues."
)
PAGE_A = "NVIDIA reported revenue of $35.1 billion in Q3 FY2025, up 94% from a year ago."
PAGE_B = "Analysts say NVIDIA's Q3 FY2025 revenue came in at $32.5 billion."


def financials_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(tier="structured", search=False, exact_figures=True)
    def get_financials(ctx: ToolContext, ticker: str, quarter: str) -> ToolResult:
        """Quarterly financials of a US-listed company from its SEC filings.

        Args:
            ticker: the stock ticker
            quarter: the fiscal quarter
        """
        text = NVDA if ticker.upper() == "NVDA" else AAPL
        return ToolResult(
            sources=[
                Source(
                    title=f"{ticker.upper()} — Revenue — SEC Form 10-Q",
                    url=f"https://sec.example/{ticker.lower()}",
                    snippet=text,
                    text=text,
                    tier="structured",
                )
            ]
        )

    @registry.tool(tier="web", search=True, exact_figures=False, needs_web=False)
    def web_search(ctx: ToolContext, query: str) -> ToolResult:
        """Search the web.

        Args:
            query: search terms
        """
        return ToolResult(
            sources=[
                Source(
                    title="Chip news",
                    url="https://news-a.example/nvda",
                    snippet=PAGE_A,
                    text=PAGE_A,
                    tier="web",
                ),
                Source(
                    title="Market blog",
                    url="https://blog-b.example/nvda",
                    snippet=PAGE_B,
                    text=PAGE_B,
                    tier="web",
                ),
            ]
        )

    return registry


# A scripted extractor that reads the revenue figure each source states (what a model would do).
_AMOUNT = re.compile(r"\$([\d,]+(?:\.\d+)?)( billion)?")


def revenue_claims(body):
    claims = []
    for source_id, _title, text in sources_in(body):
        amount, billion = _AMOUNT.search(text).groups()
        value = float(amount.replace(",", "")) / (1 if billion else 1e9)
        value = round(value, 2)
        entity = "Apple" if "Apple" in text else "NVIDIA"
        period = "FY2024Q4" if entity == "Apple" else "Q3 FY2025"
        claims.append(
            {
                "text": f"{entity} revenue in {period} was USD {value} billion",
                "kind": "figure",
                "entity": entity,
                "metric": "revenue",
                "period": period,
                "value": value,
                "unit": "USD billion",
                "source_ids": [source_id],
                "confidence": 0.95,
            }
        )
    return {"content": json.dumps({"claims": claims})}


def financials_first(body):
    """The researcher: get_financials for both companies, then DONE."""
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if turns == 0:
        return {
            "tool_calls": [
                {"name": "get_financials", "arguments": {"ticker": "NVDA", "quarter": "latest"}},
                {"name": "get_financials", "arguments": {"ticker": "AAPL", "quarter": "latest"}},
            ]
        }
    return {"content": "DONE"}


def table_writer(body):
    """A writer whose comparison table has one cell (Apple's revenue) off its claim."""
    given = {c["entity"]: c["id"] for c in claims_in(body)}
    answer = (
        "## Revenue\n\n| Company | Revenue (USD bn) | Period |\n|---|---|---|\n"
        f"| NVIDIA | 35.08 [{given['NVIDIA']}] | Q3 FY2025 [{given['NVIDIA']}] |\n"
        f"| Apple | 95.93 [{given['Apple']}] | FY2024Q4 [{given['Apple']}] |\n\n"
        f"NVIDIA's revenue was USD 35.08 billion [{given['NVIDIA']}]."
    )
    return {
        "content": json.dumps(
            {
                "answer": answer,
                "summary": f"Apple's quarterly revenue was larger [{given['Apple']}][{given['NVIDIA']}].",
                "citations": [],
                "conflicts": [],
                "counter_evidence": [],
                "judgement": None,
            }
        )
    }
