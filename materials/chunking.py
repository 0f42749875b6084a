"""Split extracted units into overlapping passages that end at sentence boundaries.

Sentences end at Chinese full stops and their kin (。！？；) and at English sentence ends (. ! ?
followed by a space), with closing quotes or brackets kept on the sentence they close. A chunk
never crosses a page (slide, section) boundary, so every passage has exactly one page number.
Sizes are in approximate model tokens: a CJK character is about one token, other text about
four characters per token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .extraction import Unit
from .lexical import CJK_RUN

_CLOSERS = "」』”’）)】》〉\"'"
# A sentence ends after a CJK terminator, or after . ! ? followed by whitespace; either may be
# followed by closing quotes/brackets. A blank line (paragraph break) also ends a sentence.
_SENTENCE_END = re.compile(
    rf"(?:[。！？；!?;][{_CLOSERS}]*|\.[{_CLOSERS}]*(?=\s)|[!?][{_CLOSERS}]*(?=\s))|\n\s*\n"
)
_CJK_CHAR = re.compile(CJK_RUN.pattern[:-1])  # one character of the same class
_SOFT_BREAKS = re.compile(r"(?<=[，、,：:])|(?<=\s)")


@dataclass(frozen=True)
class Chunk:
    page: int
    text: str


def approx_tokens(text: str) -> float:
    cjk = len(_CJK_CHAR.findall(text))
    other = len(text) - cjk
    return cjk + other / 4


def normalise(text: str) -> str:
    """Clean extracted text: no NULs (PostgreSQL refuses them), PDF line wraps undone.

    A line break between two CJK characters is a wrap inside a word run and disappears; other
    single line breaks become spaces; blank lines (paragraphs) stay."""
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    text = re.sub(r"[ \t\u00a0\u3000]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{2,}", "\n\n", text)
    cjk = CJK_RUN.pattern[1:-2]
    text = re.sub(rf"(?<=[{cjk}])\n(?=[{cjk}])", "", text)
    text = re.sub(r"(?<!\n)\n(?!\n)", " ", text)
    return text.strip()


# A full stop after these is not a sentence end ("e.g. Bloom", "Dr. Chen", "p. 4").
_ABBREVIATIONS = {
    "e.g",
    "i.e",
    "etc",
    "vs",
    "cf",
    "al",
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "fig",
    "no",
    "p",
    "pp",
    "vol",
    "ch",
}
_LAST_WORD = re.compile(r"([\w.]+)\.$")


def _false_stop(text: str, match: re.Match) -> bool:
    if not match.group().startswith("."):
        return False
    following = text[match.end() :].lstrip()[:1]
    if following.islower():  # "… 3.5 p. ex. values": a lower-case word rarely starts a sentence
        return True
    word = _LAST_WORD.search(text[max(0, match.start() - 12) : match.start() + 1])
    return bool(word and word.group(1).lower() in _ABBREVIATIONS)


def sentences(text: str) -> list[str]:
    """The sentences of `text`; one that ends a paragraph keeps a trailing newline, so that
    joining them again keeps headings and list items apart from what follows."""
    parts, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if _false_stop(text, match):
            continue
        end = match.end()
        piece = text[start:end].strip()
        if piece:
            parts.append(piece + "\n" if "\n" in match.group() or text[end : end + 2] == "\n\n" else piece)
        elif parts and "\n" in match.group() and not parts[-1].endswith("\n"):
            parts[-1] += "\n"
        start = end
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


_CJK_PUNCTUATION = "。！？；，、：「」『』（）【】《》〈〉"


def _cjkish(char: str) -> bool:
    return bool(_CJK_CHAR.match(char)) or char in _CJK_PUNCTUATION


def _join(pieces: list[str]) -> str:
    """Join sentences: no space between two CJK sentences (Chinese has none), one otherwise."""
    out = ""
    for piece in pieces:
        if out and not out.endswith("\n") and not (_cjkish(out[-1]) and _cjkish(piece[0])):
            out += " "
        out += piece
    return out.strip()


def _split_long(sentence: str, limit: int) -> list[str]:
    """A sentence longer than a chunk: cut at commas or spaces, else hard every `limit` tokens."""
    pieces, current = [], ""
    for part in _SOFT_BREAKS.split(sentence):
        while approx_tokens(part) > limit:  # no soft break at all: cut by characters
            cut = 1
            while cut < len(part) and approx_tokens(part[: cut + 1]) <= limit:
                cut += 1
            if current:
                pieces.append(current)
                current = ""
            pieces.append(part[:cut])
            part = part[cut:]
        if current and approx_tokens(current + part) > limit:
            pieces.append(current)
            current = ""
        current += part
    if current.strip():
        pieces.append(current)
    return [p.strip() for p in pieces if p.strip()]


def chunk_units(units: list[Unit], *, max_tokens: int, overlap_tokens: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    for unit in units:
        pieces: list[str] = []
        for sentence in sentences(normalise(unit.text)):
            pieces.extend(
                _split_long(sentence, max_tokens) if approx_tokens(sentence) > max_tokens else [sentence]
            )
        window: list[str] = []
        size = 0.0
        for piece in pieces:
            cost = approx_tokens(piece)
            if window and size + cost > max_tokens:
                chunks.append(Chunk(unit.number, _join(window)))
                # Carry the last sentences (up to the overlap budget) into the next chunk, so a
                # fact split across the boundary is whole in one of the two passages.
                carried: list[str] = []
                carried_size = 0.0
                for previous in reversed(window):
                    previous_cost = approx_tokens(previous)
                    if (
                        carried_size + previous_cost > overlap_tokens
                        or carried_size + previous_cost + cost > max_tokens
                    ):
                        break
                    carried.insert(0, previous)
                    carried_size += previous_cost
                window, size = carried, carried_size
            window.append(piece)
            size += cost
        if window:
            chunks.append(Chunk(unit.number, _join(window)))
    return chunks
