"""Tools with new names for the tests of tool traits: the engine must treat them by what their
registration declares (a search, filed figures), not by what their names say."""

from __future__ import annotations

from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolRegistry


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


# It names the company and the quarter, as a filing does.
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
