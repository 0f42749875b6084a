"""Working on the Markdown answer: citation markers, claims (sentences), links, renumbering.

The answer is cut into segments: structure that is kept as it is (headings, blank lines, list
bullets, code, tables) and sentences that carry claims. Editing a sentence and joining the
segments again gives back the answer unchanged everywhere else."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARKER = re.compile(r"\[(\d{1,4}(?:\s*[,，、;；]\s*\d{1,4})*)\](?!\()")
_SENTENCE_END = re.compile(r"(?:[。！？!?]+|\.(?=\s|$|\[))((?:\s*\[\d{1,4}(?:\s*[,，、;；]\s*\d{1,4})*\](?!\())*)")
_LIST_PREFIX = re.compile(r"^(\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)?)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_BARE_URL = re.compile(r"(?<![(\w])(?:https?|javascript|data|vbscript):[^\s)<>\]]+", re.I)
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")


@dataclass
class Segment:
    text: str
    sentence: bool = False

    @property
    def ids(self) -> list[int]:
        return marker_ids(self.text) if self.sentence else []

    @property
    def claim(self) -> str:
        return re.sub(r"[ \t]+([。．.,，！!？?；;])", r"\1", MARKER.sub("", self.text)).strip()


def marker_ids(text: str) -> list[int]:
    ids: list[int] = []
    for match in MARKER.finditer(text):
        for part in re.split(r"[,，、;；]", match.group(1)):
            number = int(part.strip())
            if number not in ids:
                ids.append(number)
    return ids


def split_sentences(text: str) -> list[str]:
    pieces, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        # keep the whitespace after a sentence with it, so joining restores the text exactly
        while end < len(text) and text[end] in " \t":
            end += 1
        pieces.append(text[start:end])
        start = end
    if start < len(text):
        pieces.append(text[start:])
    return [p for p in pieces if p]


def segments(markdown: str) -> list[Segment]:
    out: list[Segment] = []
    in_code = False
    for line in markdown.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            out.append(Segment(line))
            continue
        if in_code or not stripped or stripped.startswith(("#", "|")) or re.fullmatch(r"[-*_]{3,}", stripped):
            out.append(Segment(line))
            continue
        prefix = _LIST_PREFIX.match(line).group(1)
        if prefix:
            out.append(Segment(prefix))
        body = line[len(prefix):]
        newline = "\n" if body.endswith("\n") else ""
        for piece in split_sentences(body.rstrip("\n")):
            out.append(Segment(piece, sentence=True))
        if newline:
            out.append(Segment(newline))
    return out


def join(parts: list[Segment]) -> str:
    text = "".join(p.text for p in parts)
    # A removed sentence can leave an empty list bullet behind.
    text = re.sub(r"(?m)^\s*(?:[-*+]|\d+[.)])\s*$\n?", "", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def is_factual(segment: Segment) -> bool:
    """A sentence that states something (as opposed to a lead-in like 'In short:')."""
    claim = segment.claim
    return len(claim) >= 8 and not claim.endswith((":", "：")) and not claim.endswith("?")


def rewrite_markers(text: str, mapping: dict[int, int | None]) -> tuple[str, int]:
    """Map marker ids through `mapping` (None drops the id). Returns (text, dropped count)."""
    dropped = 0

    def replace(match: re.Match) -> str:
        nonlocal dropped
        kept = []
        for part in re.split(r"[,，、;；]", match.group(1)):
            new = mapping.get(int(part.strip()))
            if new is None:
                dropped += 1
            elif new not in kept:
                kept.append(new)
        return "".join(f"[{n}]" for n in kept)

    text = MARKER.sub(replace, text)
    # "claim [9]." with [9] removed leaves "claim ." behind
    text = re.sub(r"[ \t]+([。．.,，！!？?])", r"\1", text)
    return text, dropped


def scrub_links(text: str, allowed_urls: set[str]) -> tuple[str, int]:
    """Drop images, raw HTML and any link or URL that is not an observed source.

    Returns (text, number of removed items). A Markdown link keeps only its text: citations are
    the way to link sources, and the product renders them, not the model."""
    removed = 0

    def drop(match: re.Match) -> str:
        nonlocal removed
        removed += 1
        return ""

    def link(match: re.Match) -> str:
        nonlocal removed
        if match.group(2) not in allowed_urls:
            removed += 1
        return match.group(1)

    def bare(match: re.Match) -> str:
        return match.group(0) if match.group(0) in allowed_urls else drop(match)

    text = _IMAGE.sub(drop, text)
    text = _HTML_TAG.sub(drop, text)
    text = _LINK.sub(link, text)
    text = _BARE_URL.sub(bare, text)
    return text, removed


@dataclass
class Numbering:
    """Display numbers [1], [2], … in order of first appearance, for registry ids."""

    by_source: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, text: str, valid: set[int]) -> "Numbering":
        numbering = cls()
        for source_id in marker_ids(text):
            if source_id in valid and source_id not in numbering.by_source:
                numbering.by_source[source_id] = len(numbering.by_source) + 1
        return numbering
