"""The source registry: every citable thing a tool returned gets an id here, and a citation can
only ever point at one of these ids. Also renders sources for the LLM as delimited, untrusted data."""

from __future__ import annotations

import json
import re
import threading

from .instructions import Flags, flag
from .types import Source, ToolResult

_TAG = re.compile(r"<\s*/?\s*(source|observations)\b", re.I)


def neutralise(text: str) -> str:
    """Stop tool text from closing or opening our delimiters (a classic injection trick)."""
    return _TAG.sub(lambda m: m.group(0).replace("<", "‹"), text)


def attribute(text: str, limit: int) -> str:
    """A value for an attribute of our <source> tag. Titles come from outside (a web page's title,
    an OpenAlex work, a file name the teacher chose): a quote in one must not end the attribute and
    add attributes of its own (`title="x" url="https://elsewhere"`), nor a `>` end the tag."""
    flat = " ".join(text[:limit].split())
    return flat.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


class SourceRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[int, Source] = {}
        self._by_key: dict[str, int] = {}
        self.found_by: dict[int, str] = {}  # the purpose of the turn that first found each source
        # Passages that address the model, flagged as each source is observed (instructions.py).
        self.flags: dict[int, Flags] = {}

    def add(self, source: Source, *, found_by: str = "evidence") -> tuple[int, bool]:
        """Register a source; returns (id, is_new). The same source twice keeps its first id."""
        with self._lock:
            key = source.key()
            if key in self._by_key:
                return self._by_key[key], False
            source_id = len(self._by_id) + 1
            self._by_id[source_id] = source
            self._by_key[key] = source_id
            self.found_by[source_id] = found_by
            self.flags[source_id] = flag(f"{source.title}\n{source.text or source.snippet}")
            return source_id, True

    def ids(self) -> set[int]:
        return set(self._by_id)

    def get(self, source_id: int) -> Source | None:
        return self._by_id.get(source_id)

    def __contains__(self, source_id: int) -> bool:
        return source_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def items(self) -> list[tuple[int, Source]]:
        return sorted(self._by_id.items())

    def flagged(self, source_id: int) -> Flags:
        return self.flags.get(source_id) or Flags()

    def evidence_text(self, source_id: int) -> str:
        """What a claim may rest on: the source's text without its flagged passages."""
        source, flags = self._by_id.get(source_id), self.flagged(source_id)
        if source is None:
            return ""
        return flags.clean_text if flags else (source.text or source.snippet)


def render_source(
    source_id: int,
    source: Source,
    *,
    full: bool,
    max_chars: int = 4000,
    found_by: str = "",
    flagged: bool = False,
    clean_text: str | None = None,
) -> str:
    body = source.text if (full and source.text) else source.snippet
    if clean_text is not None:
        body = clean_text  # what the source says without its passages that address the model
    body = neutralise(body[:max_chars] if full else body[:400])
    attrs = (
        f'id="{source_id}" tool="{source.source_tool}" tier="{source.tier}" origin="{source.origin}" '
        f'title="{attribute(source.title, 200)}"'
    )
    if flagged:
        attrs += ' flagged="instructions"'  # it addresses the model: not evidence
    if found_by and found_by != "evidence":
        attrs += f' found_by="{found_by}"'  # e.g. counter-search: the writer must report it
    if source.locator:
        attrs += f' locator="{attribute(source.locator, 120)}"'
    if source.url:
        attrs += f' url="{attribute(source.url, 300)}"'
    return f"<source {attrs}>\n{body}\n</source>"


def render_observations(
    registry: SourceRegistry,
    *,
    budget_chars: int,
    only: list[int] | None = None,
    weigh=None,
    without_flagged_passages: bool = False,
) -> str:
    """All sources (or `only` these ids): the full text of as many sources as fit the budget, the
    snippet of the rest. Nothing is dropped silently: every id stays. With `weigh`, the most
    credible sources get their full text first (otherwise the earliest, found for the core
    sub-questions)."""
    items = [(i, s) for i, s in registry.items() if only is None or i in only]
    full_ids: set[int] = set()
    used = 0
    ranked = sorted(items, key=lambda item: (-weigh(item[1]), item[0])) if weigh else items
    for source_id, source in ranked:
        size = min(len(source.text or source.snippet), 4000) + 200
        if used + size <= budget_chars:
            full_ids.add(source_id)
            used += size
    blocks = [
        render_source(
            i,
            s,
            full=i in full_ids,
            found_by=registry.found_by.get(i, ""),
            flagged=bool(registry.flagged(i)),
            clean_text=registry.evidence_text(i)[:400]
            if without_flagged_passages and registry.flagged(i)
            else None,
        )
        for i, s in items
    ]
    return "<observations>\n" + "\n".join(blocks) + "\n</observations>"


def render_tool_result(
    result: ToolResult, numbered: list[tuple[int, Source]], *, max_chars: int = 3000
) -> str:
    """A tool's result as the model reads it, in every assistant path (research and chat): an
    error, its sources under the numbers the caller gave them, or its data, always as delimited,
    neutralised, untrusted observations."""
    if not result.ok:
        return f"Tool error: {neutralise(result.error)}"
    if not numbered:
        data = (
            # Keys sorted: the same data reads the same whether a tool just returned it or a replay
            # read it back from the database (jsonb keeps no key order).
            json.dumps(result.data, ensure_ascii=False, default=str, sort_keys=True)[:4000]
            if result.data is not None
            else "no results"
        )
        return f"<observations>\n{neutralise(data)}\n</observations>"
    blocks = [render_source(i, s, full=True, max_chars=max_chars) for i, s in numbered]
    return "<observations>\n" + "\n".join(blocks) + "\n</observations>"
