"""Working on Markdown answers (the chat's, and the 1.x reports the evaluation still reads):
citation markers, sentences, links.

The answer is cut into segments: structure that is kept as it is (headings, blank lines, list
bullets, code, tables) and sentences that carry claims. Editing a sentence and joining the
segments again gives back the answer unchanged everywhere else."""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field

MARKER = re.compile(r"\[(\d{1,4}(?:\s*[,，、;；]\s*\d{1,4})*)\](?!\()")
# The writer cites verified claims as [c3] or [c3, c7]; the engine turns them into source citations.
CLAIM_MARKER = re.compile(r"\[\s*(c\d{1,4}(?:\s*[,，、;；]\s*c?\d{1,4})*)\s*\](?!\()", re.I)
_SENTENCE_END = re.compile(
    r"(?:[。！？!?]+|\.(?=\s|$|\[))((?:\s*\[\s*c?\d{1,4}(?:\s*[,，、;；]\s*c?\d{1,4})*\s*\](?!\())*)", re.I
)
_TABLE_SEPARATOR = re.compile(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?")
_CELL_SPLIT = re.compile(r"(?<!\\)(\|)")
_LIST_PREFIX = re.compile(r"^(\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)?)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
# Empty text too: `[![img](…)](https://elsewhere)` leaves `[](https://elsewhere)` once the image goes.
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
# Anything that reads as an address: a scheme with an authority (https://, ftp://, any other),
# the schemes browsers run or inline (javascript:, vbscript:, data:, file:, mailto:), scheme-less
# //host and www.host. Fullwidth colon and slash count: some readers fold them to ASCII.
_COLON, _SLASH = "[:\uff1a]", "[/\uff0f]"
# An address ends at white space, brackets or CJK punctuation (Chinese sentences run on without spaces).
_URL_TAIL = r"[^\s<>\]\)\u3000-\u303f\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f]*"
# Only ASCII before it: Chinese text often runs straight into an address (來源https://…).
_BARE_URL = re.compile(
    rf"(?<![a-z0-9.+-])(?:[a-z][a-z0-9+.-]{{0,30}}{_COLON}{_SLASH}{{2}}{_URL_TAIL}"
    rf"|(?:javascript|vbscript|data|file|mailto):(?=[a-z/]){_URL_TAIL}"
    rf"|{_SLASH}{{2}}[a-z0-9-]+(?:\.[a-z0-9-]+)+{_URL_TAIL}"
    rf"|www\.[a-z0-9-]+(?:\.[a-z0-9-]+)+{_URL_TAIL})",
    re.I,
)
_CHAR_REFERENCE = re.compile(r"&(?=#?[0-9a-z]+;)", re.I)
_ESCAPED_URL_PUNCTUATION = re.compile(r"\\([:/.@])")
# Fullwidth Latin letters (ｈｔｔｐｓ) fold to ASCII; CJK punctuation is left as it is.
_FULLWIDTH_LATIN = {c: c - 0xFEE0 for c in (*range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B))}


@dataclass
class Segment:
    text: str
    sentence: bool = False
    cell: bool = False  # a table cell, header row and row labels included
    heading: bool = False  # a Markdown heading line
    role: str = ""  # of a cell: "header" (the header row), "label" (a row's first cell) or ""
    # What a label or a header cell stands for: the markers of its row (a label) or its table.
    context_ids: list[int] = field(default_factory=list)
    context_claim_ids: list[int] = field(default_factory=list)

    @property
    def unit(self) -> bool:
        """Every piece of text the reader sees is checked: sentences, cells and headings."""
        return self.sentence or self.cell or self.heading

    @property
    def ids(self) -> list[int]:
        return marker_ids(self.text) if self.unit else []

    @property
    def claim_ids(self) -> list[int]:
        return claim_marker_ids(self.text) if self.unit else []

    @property
    def claim(self) -> str:
        text = CLAIM_MARKER.sub("", MARKER.sub("", self.text))
        if self.heading:
            text = re.sub(r"^\s*#{1,6}\s*|\s*#*\s*$", "", text)
        return re.sub(r"[ \t]+([。．.,，！!？?；;])", r"\1", text).strip()


def claim_marker_ids(text: str) -> list[int]:
    ids: list[int] = []
    for match in CLAIM_MARKER.finditer(text):
        for part in re.split(r"[,，、;；]", match.group(1)):
            number = int(part.strip().lstrip("cC"))
            if number not in ids:
                ids.append(number)
    return ids


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


def _table_row(line: str, header: bool = False) -> list[Segment]:
    """A row: every non-empty cell is a unit; the first is the row's label, a header row's cells
    are headers (both stand for the markers around them when they have none of their own)."""
    body = line.rstrip("\n")
    pieces = _CELL_SPLIT.split(body)
    out: list[Segment] = []
    cells_seen = 0
    for index, piece in enumerate(pieces):
        if piece == "|":
            out.append(Segment(piece))
            continue
        inner = 0 < index < len(pieces) - 1 or (index == 0 and not body.lstrip().startswith("|"))
        if inner:
            cells_seen += 1
        role = "header" if header else ("label" if cells_seen == 1 else "")
        out.append(Segment(piece, cell=inner and bool(piece.strip()), role=role if inner else ""))
    if line.endswith("\n"):
        out.append(Segment("\n"))
    return out


def segments(markdown: str) -> list[Segment]:
    out: list[Segment] = []
    in_code = False
    table: list[list[Segment]] = []  # the rows of the table being read
    lines = markdown.splitlines(keepends=True)
    for n, line in enumerate(lines):
        stripped = line.strip()
        if table and not (not in_code and stripped.startswith("|")):
            _give_context(table)
            table = []
        if stripped.startswith("```"):
            in_code = not in_code
            out.append(Segment(line))
            continue
        if not in_code and stripped.startswith("|"):
            following = lines[n + 1].strip() if n + 1 < len(lines) else ""
            if _TABLE_SEPARATOR.fullmatch(stripped):
                out.append(Segment(line))
            else:
                row = _table_row(line, header=bool(_TABLE_SEPARATOR.fullmatch(following)))
                table.append(row)
                out.extend(row)
            continue
        if not in_code and re.match(r"#{1,6}\s", stripped):
            out.append(Segment(line, heading=True))
            continue
        if in_code or not stripped or re.fullmatch(r"[-*_]{3,}", stripped):
            out.append(Segment(line))
            continue
        prefix = _LIST_PREFIX.match(line).group(1)
        if prefix:
            out.append(Segment(prefix))
        body = line[len(prefix) :]
        newline = "\n" if body.endswith("\n") else ""
        for piece in split_sentences(body.rstrip("\n")):
            out.append(Segment(piece, sentence=True))
        if newline:
            out.append(Segment(newline))
    if table:
        _give_context(table)
    return out


def _give_context(rows: list[list[Segment]]) -> None:
    """A label stands for the markers of its row, a header for those of its whole table."""
    cells = [[p for p in row if p.cell] for row in rows]
    table_ids = list(dict.fromkeys(i for row in cells for p in row for i in p.ids))
    table_claims = list(dict.fromkeys(i for row in cells for p in row for i in p.claim_ids))
    for row in cells:
        row_ids = list(dict.fromkeys(i for p in row for i in p.ids))
        row_claims = list(dict.fromkeys(i for p in row for i in p.claim_ids))
        for p in row:
            if p.role == "header" or not (row_ids or row_claims):
                p.context_ids, p.context_claim_ids = table_ids, table_claims
            elif p.role == "label":
                p.context_ids, p.context_claim_ids = row_ids, row_claims


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


def canonical(text: str) -> str:
    """The text as a reader will see it, so that nothing hides from scrub_links: invisible
    formatting characters (zero-width spaces, bidi overrides, soft hyphens) go, fullwidth Latin
    letters become ASCII, character references are decoded once (`&#104;ttps`) and any left
    (`&amp;#104;` → `&#104;`) are escaped so the renderer shows them literally instead of decoding
    them again, and Markdown backslash escapes of URL punctuation (`https\\://`) are resolved."""
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf").translate(_FULLWIDTH_LATIN)
    text = _CHAR_REFERENCE.sub("&amp;", html.unescape(text))
    return _ESCAPED_URL_PUNCTUATION.sub(r"\1", text)


def _is_allowed(url: str, allowed_urls: set[str]) -> bool:
    if url in allowed_urls:
        return True
    if url.startswith("//"):
        return f"https:{url}" in allowed_urls or f"http:{url}" in allowed_urls
    if url.lower().startswith("www."):
        return f"https://{url}" in allowed_urls or f"http://{url}" in allowed_urls
    return False


def scrub_links(text: str, allowed_urls: set[str]) -> tuple[str, int]:
    """Drop images, raw HTML and any link or URL that is not an observed source.

    Returns (text, number of removed items). A Markdown link keeps only its text: citations are
    the way to link sources, and the product renders them, not the model. The text is first
    brought to its canonical form, so an address cannot hide behind encodings."""
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
        url = match.group(0).rstrip(".,;:!?'\"")
        trailing = match.group(0)[len(url) :]  # the sentence's own punctuation stays
        return match.group(0) if _is_allowed(url, allowed_urls) else drop(match) + trailing

    text = canonical(text)
    text = _IMAGE.sub(drop, text)
    text = _HTML_TAG.sub(drop, text)
    text = _LINK.sub(link, text)
    text = _BARE_URL.sub(bare, text)
    return text, removed


class EchoDetector:
    """Finds text that repeats a run of `size` consecutive words of any of `texts` (the engine's own
    instructions): an answer has no reason to quote them, and one that does was told to by
    something it read ("print your system prompt")."""

    def __init__(self, texts, size: int = 8):
        self.size = size
        self.shingles = {shingle for text in texts for shingle in self._shingles(text)}

    def _shingles(self, text: str) -> set[tuple[str, ...]]:
        words = re.findall(r"[a-z0-9]+", text.lower())
        return {tuple(words[i : i + self.size]) for i in range(len(words) - self.size + 1)}

    def __call__(self, text: str) -> bool:
        return not self._shingles(text).isdisjoint(self.shingles)
