"""How easy an answer's body is to read, by code (no model): a proxy, not a reader's judgement.

The body the reader sees (the pipeline's notes already stripped, see observed.body) is cut into
blocks: headings, tables and code are structure and are not measured; every other line group is a
block of prose (a paragraph, or one list item). Prose is cut into sentences at 。！？ and at . ! ?
followed by a space or the end (so 12.48 stays one number). A sentence's length is its words in
English and its characters in Traditional Chinese (CJK characters; a run of Latin letters or
digits, such as "BLTS" or "12.48", counts as one), citation markers left out.

    length    = 1 when the mean sentence length is at most TARGET, falling linearly to 0 at 2 × TARGET
    long      = 1 − share of sentences longer than LONG
    structure = share of the prose (by length) that sits in short blocks (at most BLOCK),
                so one wall of text scores 0 and short paragraphs, list items under headings 1
    readability = (length + long + structure) / 3, in 0..1

                    TARGET   LONG   BLOCK
    en (words)          20     35      80
    zh-hant (chars)     35     60     150

Limits: it does not read words (jargon, an undefined abbreviation, a figure without its unit), the
order of the argument, or whether a heading fits its section; a body of many short fragments
scores well. It tells a run-on wall of text from an answer cut into sentences and sections, and
nothing finer. None when the body has no prose sentence (a table alone)."""

from __future__ import annotations

import re

from agent.engine.answer import MARKER

THRESHOLDS = {"en": (20, 35, 80), "zh-hant": (35, 60, 150)}

_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])(?=\s|$)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)、])\s+")
_WORD = re.compile(r"[^\W_]+(?:[.,'’][^\W_]+)*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_RUN = re.compile(r"[A-Za-z0-9]+(?:[.,][A-Za-z0-9]+)*")


def _language(language: str) -> str:
    return "en" if language.lower().startswith("en") else "zh-hant"


def length(text: str, language: str) -> int:
    """A sentence's length: words (en) or characters (zh-hant, a Latin or digit run counting one)."""
    if _language(language) == "en":
        return len(_WORD.findall(text))
    return len(_CJK.findall(text)) + len(_LATIN_RUN.findall(text))


def blocks(markdown: str) -> list[str]:
    """The prose blocks of a body: paragraphs and list items (headings, tables and code left out)."""
    found, current, in_code = [], [], False

    def close():
        if current:
            found.append(" ".join(current))
            current.clear()

    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            close()
            in_code = not in_code
            continue
        if in_code or not stripped or stripped.startswith(("|", "#")):
            close()
            continue
        stripped = stripped.lstrip("> ").strip()
        if not stripped:
            close()
            continue
        if _LIST_ITEM.match(stripped):
            close()
            stripped = _LIST_ITEM.sub("", stripped)
        current.append(stripped)
    close()
    return [MARKER.sub("", re.sub(r"\*\*|__|`", "", b)).strip() for b in found if b.strip()]


def sentences(block: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(block) if s and s.strip()]


def readability(markdown: str, language: str) -> float | None:
    target, long_at, block_at = THRESHOLDS[_language(language)]
    prose = blocks(markdown)
    lengths = [length(s, language) for b in prose for s in sentences(b)]
    lengths = [n for n in lengths if n > 0]
    if not lengths:
        return None
    mean = sum(lengths) / len(lengths)
    by_length = 1.0 if mean <= target else max(0.0, 1.0 - (mean - target) / target)
    long = 1.0 - sum(1 for n in lengths if n > long_at) / len(lengths)
    sizes = [length(b, language) for b in prose]
    structure = sum(n for n in sizes if n <= block_at) / sum(sizes)
    return round((by_length + long + structure) / 3, 4)
