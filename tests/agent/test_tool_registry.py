"""Tools declare their JSON Schema from type hints and docstrings, and fail at import when they cannot."""

from typing import Literal

import pytest

from agent.engine.types import Source, ToolResult, ToolTraits
from agent.tools.registry import ToolContext, ToolDefinitionError, ToolRegistry, build_tool

CTX = ToolContext(user_id=1, channel_id=10)
TRAITS = {"tier": "internal", "search": True, "exact_figures": False}


def lookup(
    ctx: ToolContext,
    query: str,
    top_k: int = 5,
    mode: Literal["fast", "deep"] = "fast",
    tags: list[str] | None = None,
) -> ToolResult:
    """Look something up in the channel.

    Args:
        query: what to look for
        top_k: how many results
            to return (1–10)
        mode: search mode
        tags: optional tags to filter by
    """
    return ToolResult(
        sources=[
            Source(title=f"{ctx.channel_id}:{query}", snippet="s", tier="internal", source_tool="forged")
        ]
    )


def test_schema_comes_from_hints_and_docstring():
    tool = build_tool(lookup, **TRAITS)
    assert tool.description == "Look something up in the channel."
    props = tool.parameters["properties"]
    assert props["query"] == {"type": "string", "description": "what to look for"}
    assert props["top_k"] == {
        "type": "integer",
        "description": "how many results to return (1–10)",
        "default": 5,
    }
    assert props["mode"]["enum"] == ["fast", "deep"]
    assert props["tags"]["type"] == "array" and props["tags"]["items"] == {"type": "string"}
    assert tool.parameters["required"] == ["query"]
    assert tool.parameters["additionalProperties"] is False


def test_missing_description_fails_at_definition():
    def bad(ctx: ToolContext, query: str) -> ToolResult:
        """Does things."""

    with pytest.raises(ToolDefinitionError, match="not described"):
        build_tool(bad, **TRAITS)


def test_missing_type_hint_fails_at_definition():
    def bad(ctx: ToolContext, query) -> ToolResult:
        """Does things.

        Args:
            query: text
        """

    with pytest.raises(ToolDefinitionError, match="no type hint"):
        build_tool(bad, **TRAITS)


def test_missing_docstring_and_context_fail():
    def no_doc(ctx: ToolContext, query: str) -> ToolResult:
        return ToolResult()

    def no_ctx(query: str) -> ToolResult:
        """Doc.

        Args:
            query: text
        """

    with pytest.raises(ToolDefinitionError, match="docstring"):
        build_tool(no_doc, **TRAITS)
    with pytest.raises(ToolDefinitionError, match="ctx"):
        build_tool(no_ctx, **TRAITS)


def test_bound_toolbox_validates_arguments_and_names_the_tool():
    registry = ToolRegistry()
    registry.register(build_tool(lookup, **TRAITS))
    box = registry.bind(CTX)
    assert box.call("lookup", {"query": "x", "top_k": "many"}).error.startswith("invalid arguments")
    assert "unknown tool" in box.call("delete_all", {}).error
    # an argument cannot smuggle in another channel: extra properties are refused
    assert box.call("lookup", {"query": "x", "channel_id": 99}).error.startswith("invalid arguments")
    result = box.call("lookup", {"query": "x"})
    assert result.ok and result.sources[0].title == "10:x"
    assert result.sources[0].source_tool == "lookup"


def test_web_tools_are_only_offered_when_the_channel_enables_them():
    registry = ToolRegistry()

    @registry.tool(tier="web", search=True, exact_figures=False, needs_web=True)
    def web_search(ctx: ToolContext, query: str) -> ToolResult:
        """Search the web.

        Args:
            query: search terms
        """
        return ToolResult()

    assert registry.bind(CTX).names() == set()
    assert (
        "web_search" in registry.bind(ToolContext(user_id=1, channel_id=10, web_tools_enabled=True)).names()
    )
    assert "unknown tool" in registry.bind(CTX).call("web_search", {"query": "x"}).error


def test_a_tool_registered_without_its_traits_fails_at_registration():
    registry = ToolRegistry()
    with pytest.raises(ToolDefinitionError, match=r"traits \['tier', 'exact_figures'\]"):

        @registry.tool(search=True)
        def web_search(ctx: ToolContext, query: str) -> ToolResult:
            """Search the web.

            Args:
                query: search terms
            """
            return ToolResult()

    with pytest.raises(ToolDefinitionError, match="tier must be one of"):
        build_tool(lookup, tier="gold", search=True, exact_figures=False)
    with pytest.raises(ToolDefinitionError, match="search must be True or False"):
        build_tool(lookup, tier="internal", search="yes", exact_figures=False)
    assert registry.all() == []


HALF_DECLARED_TOOL_MODULE = '''
from agent.engine.types import ToolResult
from agent.tools.registry import ToolContext, ToolRegistry

REGISTRY = ToolRegistry()


@REGISTRY.tool(tier="scholarly")
def find_theses(ctx: ToolContext, query: str) -> ToolResult:
    """Find theses.

    Args:
        query: search terms
    """
    return ToolResult()
'''


def test_a_tool_module_without_traits_fails_at_import(tmp_path, monkeypatch):
    (tmp_path / "half_declared_tool.py").write_text(HALF_DECLARED_TOOL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        ToolDefinitionError, match=r"find_theses: declare the tool's traits \['search', 'exact"
    ):
        __import__("half_declared_tool")


def test_the_toolbox_gives_the_declared_traits_and_caps_the_tier_of_what_a_tool_returns():
    registry = ToolRegistry()

    @registry.tool(tier="web", search=False, exact_figures=True)
    def read_page(ctx: ToolContext, query: str) -> ToolResult:
        """Read a page.

        Args:
            query: the page
        """
        claimed = ["internal", "structured", "web", "gold"]
        return ToolResult(sources=[Source(title=tier, snippet="s", tier=tier) for tier in claimed])

    @registry.tool(tier="internal", search=True, exact_figures=False)
    def course_notes(ctx: ToolContext, query: str) -> ToolResult:
        """Course notes.

        Args:
            query: what to look for
        """
        return ToolResult(sources=[Source(title="a quoted web page", snippet="s", tier="web")])

    box = registry.bind(CTX)
    assert box.traits("read_page") == ToolTraits(tier="web", search=False, exact_figures=True)
    assert box.traits("course_notes").search and box.traits("delete_all") is None
    # a web tool cannot make its pages Uedu's own or filed data; an unknown tier becomes its own
    assert [s.tier for s in box.call("read_page", {"query": "q"}).sources] == ["web"] * 4
    # a tool may say a source is less reliable than its usual tier
    assert [s.tier for s in box.call("course_notes", {"query": "q"}).sources] == ["web"]
