"""Locating a claim's quotes in the passages it cites.

The claims model copies one or more spans of the passages it read ("quotes"); the engine, not the
model, decides whether each span is really there and where. A quote is looked for in the stored
text of the source it names (Source.text, or the snippet when a source has no text), after the
same folding of both sides (folding.py: full-width forms, quote marks, dashes, Latin case and
whitespace), one original character at a time, so that every folded character remembers the
offset it came from and a match maps back to `start`/`end` in the original text.

Nothing else is forgiven: an ellipsis that skips text, a paraphrase, a changed number or a word
left out is not the passage, and the claim fails with "quote_not_found" before any model call.
"""

from __future__ import annotations

from .claims import Quote
from .folding import Normalised, norm, normalise
from .types import Source

MAX_QUOTE_CHARS = 400  # what the prompt asks for
# What the engine accepts: a model that overshoots a little is not lying, but a quote that is
# the whole passage pins nothing down (every figure of the passage would be "in the quote").
QUOTE_LIMIT = 500
MIN_QUOTE_CHARS = 4  # normalised characters: shorter spans match almost anywhere

# The folding lives in folding.py; these names stay importable from here for the checks.
__all__ = ["Normalised", "find", "locate", "located_text", "norm", "normalise", "page_of", "passage_of"]


def passage_of(source: Source) -> str:
    """The stored text a quote is located in (and that its offsets point into)."""
    return source.text or source.snippet


def page_of(source: Source) -> str:
    """The page, slide or section a source's passage is on, when the tool recorded it (course
    materials: each passage lies on exactly one unit, channels_app/chunking.py)."""
    page = (source.meta or {}).get("page")
    return "" if page in (None, "") else str(page)


def find(quote_text: str, passage: str) -> tuple[int, int] | None:
    """Original [start, end) of the first occurrence of the quote in the passage, or None."""
    wanted = normalise(quote_text).text.strip()
    if len(wanted) < MIN_QUOTE_CHARS or len(quote_text) > QUOTE_LIMIT:
        return None
    haystack = normalise(passage)
    at = haystack.text.find(wanted)
    if at < 0:
        return None
    return haystack.span(at, len(wanted))


def locate(quote: Quote, source: Source | None) -> bool:
    """Set the quote's offsets and page from its source; False when it is not there."""
    quote.start = quote.end = -1
    quote.page = ""
    if source is None:
        return False
    span = find(quote.text, passage_of(source))
    if span is None:
        return False
    quote.start, quote.end = span
    quote.page = page_of(source)
    return True


def located_text(quote: Quote, source: Source) -> str:
    """What the source really says at the quote's place (checks read this, not the model's copy)."""
    return passage_of(source)[quote.start : quote.end] if quote.located else ""
