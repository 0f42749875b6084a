"""Locating a claim's quotes in the passages it cites.

The claims model copies one or more spans of the passages it read ("quotes"); the engine, not the
model, decides whether each span is really there and where. A quote is looked for in the stored
text of the source it names (Source.text, or the snippet when a source has no text), after the
same normalisation of both sides, one original character at a time, so that every normalised
character remembers the offset it came from and a match maps back to `start`/`end` in the
original text:

1. NFKC: full-width letters, digits and punctuation become their half-width forms ("３５．１％"
   → "35.1%", "（" → "("), ligatures and compatibility forms are unfolded ("…" → "...");
2. quote marks are one mark: ‘ ’ ‚ ‛ ′ ` ´ → ' and “ ” „ ‟ ″ « » 「 」 『 』 → ";
3. dashes and minus signs are one hyphen: ‐ ‑ ‒ – — ― − ﹣ → -; and the "‹" the engine puts in
   place of "<" when it neutralises tool text (sources.neutralise) is "<" again;
4. Latin case is folded (lower());
5. whitespace (spaces, tabs, newlines, no-break and ideographic spaces) collapses to one space,
   and disappears next to a CJK character (PDF text breaks Chinese lines anywhere, and a model
   copying it joins them).

Nothing else is forgiven: an ellipsis that skips text, a paraphrase, a changed number or a word
left out is not the passage, and the claim fails with "quote_not_found" before any model call.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .claims import Quote
from .types import Source

MAX_QUOTE_CHARS = 400  # what the prompt asks for
# What the engine accepts: a model that overshoots a little is not lying, but a quote that is
# the whole passage pins nothing down (every figure of the passage would be "in the quote").
QUOTE_LIMIT = 500
MIN_QUOTE_CHARS = 4  # normalised characters: shorter spans match almost anywhere

_SINGLE = dict.fromkeys("‘’‚‛′`´", "'")
_DOUBLE = dict.fromkeys("“”„‟″«»「」『』〝〞", '"')
_DASHES = dict.fromkeys("‐‑‒–—―−﹣⁃", "-")
_FOLD = {**_SINGLE, **_DOUBLE, **_DASHES, "‹": "<", "›": ">"}
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def _fold(char: str) -> str:
    out = []
    for c in unicodedata.normalize("NFKC", char):
        c = _FOLD.get(c, c)
        out.append(" " if c.isspace() else c.lower())
    return "".join(out)


@dataclass(frozen=True)
class Normalised:
    text: str
    origin: tuple[int, ...]  # origin[i]: offset in the original text of normalised character i

    def span(self, start: int, length: int) -> tuple[int, int]:
        """The original [start, end) of normalised characters [start, start + length)."""
        return self.origin[start], self.origin[start + length - 1] + 1


def normalise(text: str) -> Normalised:
    chars: list[str] = []
    origin: list[int] = []
    for offset, char in enumerate(text or ""):
        for c in _fold(char):
            if c == " ":
                if not chars or chars[-1] == " ":
                    continue
            chars.append(c)
            origin.append(offset)
    # Whitespace next to a CJK character (either side) goes, and trailing whitespace too.
    keep = [
        not (
            c == " "
            and (
                n == len(chars) - 1
                or (n > 0 and _CJK.match(chars[n - 1]))
                or (n + 1 < len(chars) and _CJK.match(chars[n + 1]))
            )
        )
        for n, c in enumerate(chars)
    ]
    return Normalised(
        "".join(c for c, k in zip(chars, keep) if k), tuple(o for o, k in zip(origin, keep) if k)
    )


def norm(text: str) -> str:
    """The normalised text alone (for comparisons that need no offsets)."""
    return normalise(text).text.strip()


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
