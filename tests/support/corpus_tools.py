"""A tiny in-memory corpus exposed as tools, for testing the engine on its own (the engine takes
any toolbox; the product's tools are tested with the real stack elsewhere)."""

from __future__ import annotations

import time

from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolRegistry

DOCS = [
    (
        "Learning analytics overview",
        "https://docs.example/la",
        "Learning analytics measures and analyses data about learners to improve learning.",
        "internal",
    ),
    (
        "Bloom's taxonomy",
        "https://docs.example/bloom",
        "Bloom's taxonomy orders cognitive skills from remembering to creating.",
        "internal",
    ),
    (
        "Retrieval-augmented generation",
        "https://papers.example/rag",
        "RAG grounds language model answers in retrieved passages.",
        "scholarly",
    ),
    (
        "Data ethics",
        "https://web.example/ethics",
        "Student data use requires consent and IRB approval.",
        "web",
    ),
]


def corpus_registry(
    *,
    delay: float = 0.0,
    fail: bool = False,
    inject: str = "",
    fresh: bool = False,
    web_url: str = "https://web.example/ethics",
) -> ToolRegistry:
    """`fresh`: the scholarly tool finds a new paper for every distinct query (so every turn
    brings new sources); `web_url`: where the web source of the corpus lives."""
    registry = ToolRegistry()

    @registry.tool(tier="internal", search=True, exact_figures=False)
    def search_channel_materials(ctx: ToolContext, query: str, top_k: int = 3) -> ToolResult:
        """Search the course channel's materials.

        Args:
            query: what to look for
            top_k: how many passages to return
        """
        if delay:
            time.sleep(delay)
        if fail:
            raise RuntimeError("materials index unavailable")
        sources = [
            Source(
                title=t, url=u, snippet=(s + inject)[:300], text=s + inject, tier=tier, locator=f"{t} p. 1"
            )
            for t, u, s, tier in DOCS[:top_k]
        ]
        return ToolResult(sources=sources, data=[{"title": s.title} for s in sources])

    @registry.tool(tier="scholarly", search=True, exact_figures=False)
    def search_external_papers(ctx: ToolContext, query: str) -> ToolResult:
        """Search external scholarly papers.

        Args:
            query: search terms
        """
        if delay:
            time.sleep(delay)
        title, url, snippet, tier = DOCS[2]
        suffix = f" on {query}" if fresh else ""
        return ToolResult(
            sources=[
                Source(
                    title=title + " (external)" + suffix,
                    url=url + "?x",
                    snippet=snippet,
                    text=snippet,
                    tier=tier,
                )
            ]
        )

    @registry.tool(tier="web", search=True, exact_figures=False, needs_web=False)
    def web_search(ctx: ToolContext, query: str) -> ToolResult:
        """Search the web.

        Args:
            query: search terms
        """
        title, _, snippet, tier = DOCS[3]
        return ToolResult(
            sources=[Source(title=title, url=web_url, snippet=snippet, text=snippet, tier=tier)]
        )

    return registry


CTX = ToolContext(user_id=1, channel_id=1)
