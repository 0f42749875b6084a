"""Folding text for comparison: two spellings of the same characters compare equal, and every
folded character remembers the offset it came from, so a match maps back to the original text.

1. NFKC: full-width letters, digits and punctuation become their half-width forms ("３５．１％"
   → "35.1%", "（" → "("), ligatures and compatibility forms are unfolded ("…" → "...");
2. quote marks are one mark: ‘ ’ ‚ ‛ ′ ` ´ → ' and “ ” „ ‟ ″ « » 「 」 『 』 → ";
3. dashes and minus signs are one hyphen: ‐ ‑ ‒ – — ― − ﹣ → -; and the "‹" the engine puts in
   place of "<" when it neutralises tool text (sources.neutralise) is "<" again;
4. Latin case is folded (lower());
5. whitespace (spaces, tabs, newlines, no-break and ideographic spaces) collapses to one space,
   and disappears next to a CJK character (PDF text breaks Chinese lines anywhere, and a model
   copying it joins them).

Nothing else is forgiven: a skipped word, a paraphrase or a changed number stays different.
Used to locate quotes (quotes.py) and to recognise a chat sentence as a span (chat_spans.py)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_SINGLE = dict.fromkeys("‘’‚‛′`´", "'")
_DOUBLE = dict.fromkeys("“”„‟″«»「」『』〝〞", '"')
_DASHES = dict.fromkeys("‐‑‒–—―−﹣⁃", "-")
_FOLD = {**_SINGLE, **_DOUBLE, **_DASHES, "‹": "<", "›": ">"}
CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


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
                or (n > 0 and CJK.match(chars[n - 1]))
                or (n + 1 < len(chars) and CJK.match(chars[n + 1]))
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
