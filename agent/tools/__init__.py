"""The product's tool registry. Tool modules register themselves on REGISTRY when imported;
`load()` (called from ResearchConfig.ready) imports them all, so a tool with a broken
definition stops the process at start-up."""

from __future__ import annotations

import importlib

from .registry import BoundToolbox, Tool, ToolContext, ToolDefinitionError, ToolRegistry

REGISTRY = ToolRegistry()

# One module per kind of source; each registers its tools on REGISTRY.
TOOL_MODULES: list[str] = [
    "agent.tools.materials",  # the channel's own course materials: the first place to look
    "agent.tools.catalogue",  # the Uedu catalogue and internal platform documents
    "agent.tools.scholarly",  # OpenAlex
    "agent.tools.web",  # web_search, fetch_url (only where the channel enables web tools)
    "agent.tools.structured",  # SEC EDGAR financials
]

_loaded = False


def load() -> ToolRegistry:
    global _loaded
    if not _loaded:
        for module in TOOL_MODULES:
            importlib.import_module(module)
        _loaded = True
    return REGISTRY


__all__ = ["REGISTRY", "BoundToolbox", "Tool", "ToolContext", "ToolDefinitionError", "ToolRegistry", "load"]
