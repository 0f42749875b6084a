"""How tool text is cut for citations: the snippet a student sees, the passage the LLM reads."""

from __future__ import annotations

import re

SNIPPET_CHARS = 300
TEXT_CHARS = 4000


def clip(text: str, limit: int = SNIPPET_CHARS) -> str:
    """Whitespace collapsed, cut at a word boundary where there is one, with an ellipsis."""
    text = re.sub(r"\s+", " ", text or "").strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:  # Chinese has no spaces: cut mid-text rather than lose most of it
        cut = cut[:space]
    return cut.rstrip() + "…"


def excerpt(text: str, terms: list[str], limit: int = SNIPPET_CHARS) -> str:
    """The part of `text` around the first term found, so a snippet shows why it matched."""
    flat = re.sub(r"\s+", " ", text or "").strip()
    lower = flat.lower()
    hits = [i for i in (lower.find(t.lower()) for t in terms if t) if i >= 0]
    if not hits or len(flat) <= limit:
        return clip(flat, limit)
    start = max(0, min(hits) - limit // 3)
    return ("…" if start else "") + clip(flat[start:], limit - 1)
