"""Tools with new names for the tests of tool traits: the engine must treat them by what their
registration declares (a search, filed figures), not by what their names say."""

from __future__ import annotations

import json

from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolRegistry
from tests.support.scripted_llm import sources_in


def journals_registry() -> ToolRegistry:
    """A search tool whose name does not say so, and a non-search one."""
    registry = ToolRegistry()

    @registry.tool(tier="scholarly", search=True, exact_figures=False)
    def lookup_journals(ctx: ToolContext, query: str) -> ToolResult:
        """Look up journal articles.

        Args:
            query: what to look for
        """
        text = f"Learning analytics improves feedback ({query})."
        return ToolResult(
            sources=[Source(title=f"Article on {query}", snippet=text, text=text, tier="scholarly")]
        )

    @registry.tool(tier="internal", search=False, exact_figures=False)
    def open_syllabus(ctx: ToolContext, query: str) -> ToolResult:
        """Open the course syllabus.

        Args:
            query: which part
        """
        text = "The syllabus covers Bloom's taxonomy in week 3."
        return ToolResult(sources=[Source(title="Syllabus", snippet=text, text=text, tier="internal")])

    return registry


# It names the company and the quarter, as a filing does (the claim is checked against both).
FILING = "NVIDIA revenue for Q3 FY2025 was USD 35,082 million, as filed."


def filed_registry(*, exact: bool) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(tier="structured", search=False, exact_figures=exact)
    def quarterly_filing(ctx: ToolContext, ticker: str) -> ToolResult:
        """A company's filed quarterly figures.

        Args:
            ticker: the stock ticker
        """
        return ToolResult(
            sources=[Source(title=f"{ticker} 10-Q", snippet=FILING, text=FILING, tier="structured")]
        )

    return registry


def rounded_claim(body):
    """A figure 0.6 % off the filing: a paraphrase's rounding, not the filed figure."""
    (source_id, _, _), *_ = sources_in(body)
    claim = {
        "text": "NVIDIA revenue in Q3 FY2025 was USD 35.3 billion",
        "kind": "figure",
        "entity": "NVIDIA",
        "metric": "revenue",
        "period": "Q3 FY2025",
        "value": 35.3,
        "unit": "USD billion",
        "source_ids": [source_id],
        "confidence": 0.9,
    }
    return {"content": json.dumps({"claims": [claim]})}
