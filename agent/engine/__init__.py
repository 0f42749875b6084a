"""The Deep Research engine. Imports no Django: see loop.run_research."""

from .llm import LLMClient, LLMConfig, LLMError, LLMNotConfigured, UsageMeter
from .loop import run_research
from .types import Citation, Limits, NullSink, ResearchInput, ResearchResult, Source, ToolResult

__all__ = [
    "Citation",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMNotConfigured",
    "Limits",
    "NullSink",
    "ResearchInput",
    "ResearchResult",
    "Source",
    "ToolResult",
    "UsageMeter",
    "run_research",
]
