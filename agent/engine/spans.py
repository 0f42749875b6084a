"""Spans: every source cut by code into numbered pieces the model can point at.

A span is a slice of a source's stored text (`source.text or source.snippet`): `text ==
stored[start:end]`, character for character, the source's own words. Its id is
"<source registry id>.<n>", n counting from 1 in the order of the text, so the same text always
gives the same ids. The model answers with ids; code takes the words.

How a text is cut (`segments`):

1. **Lines.** A blank line ends a block. A single line break ends one too, unless it is a wrap:
   the next line starts with a lower-case Latin letter, the line ends inside a sentence (a comma,
   a hyphen, an opening bracket, "and", "of", "the"… or a Chinese "，、"), or, for text that is
   not a new English sentence, the line is at least 85 % as wide as the widest line of the text
   and 40 columns (a CJK character is two): a hard-wrapped PDF line. A wrapped span keeps its
   newline (it is verbatim); a line that starts a list item, a table row or a field is never a
   wrap.
2. **Table rows.** A Markdown row (`| a | b |`), a row of cells joined by " | " (how the
   materials' DOCX and PPTX tables are extracted) or by tabs is one span (kind "row"), the header
   row included; a separator row (`|---|:--:|`, `---`) is not a span.
3. **List items** (kind "item"): a line starting with `-`, `*`, `•`, `·`, `1.`, `1)`, `(1)`,
   `(a)`, `a)`, `一、`, `（一）`, `①`… with the lines that wrap into it.
4. **Sentences** (kind "sentence"): the rest of each block, ended by 。！？； (with their
   closing quotes and brackets, whatever follows) or by . ! ? followed by whitespace. A full
   stop is no end after an abbreviation ("e.g.", "Dr.", "No.", "Fig.", "etc."), an initial or
   an acronym ("J. Smith", "U.S."), or before a lower-case word; decimals ("3.5") and URLs hold
   no whitespace after their points, so they never end one. Headings and title lines are
   sentences of their own (their line break ends them).
5. **Fields** (kind "field"): a whole line that reads `Label: value` with a short label (at
   most four Latin words, or six CJK characters), or any sentence whose value after a label of
   up to 120 characters starts with a figure (a filing's "Revenue for FY2025Q3 (…): USD
   35,082,000,000 (…)."). A field is a sentence in every other respect.
6. **Length.** A piece over 600 characters is split at its last clause boundary (; ； then , ，
   : ： —) between 200 and 600 characters, else at a space, else at 600. A piece with fewer
   than two letters (a page number, a lone bullet, "12") or that is only a page label ("Page 3
   of 10", "第 3 頁") is not a span, nor is a line that the tools add in brackets ("[…the page
   is longer; it was cut at the size limit]").

A span is `flagged` when it overlaps a passage that addresses the model (instructions.py) and,
where that passage holds several spans, when it is one that addresses the model by the same rule
or follows one that takes the model over: it is never a candidate, never offered to a model and
never a fact.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from . import vocabulary
from .instructions import Flags, flag, flag_pieces
from .sources import SourceRegistry, attribute, neutralise
from .types import Source

MAX_SPAN_CHARS = 600
MIN_SPLIT_CHARS = 200  # a long piece is not cut into crumbs: its clause breaks count from here
WRAP_WIDTH = 40  # columns (a CJK character is two) a line needs to count as a hard wrap
WRAP_SHARE = 0.85  # … and its share of the widest line of the text

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
_WIDE = re.compile(
    r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]"
)
_CLOSERS = "\"'”’」』）)】》〉］]"
_CJK_END = re.compile(rf"[。！？；]+[{re.escape(_CLOSERS)}]*")
# "." "!" "?" (and runs of them) with closing quotes/brackets and citation markers ("[3]") after.
_LATIN_END = re.compile(rf"[.!?]+[{re.escape(_CLOSERS)}]*(?:\[\d{{1,3}}(?:[,–-]\s*\d{{1,3}})*\])*(?=\s|$)")
_ABBREVIATIONS = frozenset(
    """e.g i.e etc vs cf al dr mr mrs ms prof sr jr st no nos fig figs p pp vol vols ch sec eq eqs
    approx ca inc ltd co corp dept univ est jan feb mar apr jun jul aug sep sept oct nov dec mt ft
    op cit ibid viz resp""".split()
)
_WORD_BEFORE_DOT = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")

_ITEM = re.compile(
    r"[ \t]*(?:[-*•·‣◦▪●○■□–—](?=[ \t])|\d{1,3}[.)](?=[ \t])|[(（]\d{1,3}[)）]|[(（][a-zA-Z][)）]"
    r"|[a-z][.)](?=[ \t])|[ivxIVX]{1,4}[.)](?=[ \t])|[一二三四五六七八九十]{1,3}[、．.]"
    r"|[(（][一二三四五六七八九十]{1,3}[)）]|[\u2460-\u2473\u2776-\u277f])[ \t]*\S"
)
_SEPARATOR = re.compile(
    r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*|[ \t]*[-=*_+|: \t]{3,}"
)
_FIELD_LINE = re.compile(r"[ \t]*(?P<label>[^\s:：][^:：\n]{0,39}?)[ \t]*[:：][ \t]*(?P<value>\S)")
_FIELD = re.compile(r"(?P<label>[^\n:：]{1,120}?)\s*[:：]\s*(?P<value>\S.*)", re.S)
_FIGURE_START = re.compile(r"(?:≈\s*)?(?:[A-Z]{2,3}\s?|US\$|NT\$|HK\$|\$|€|£|¥)?\s?[-−+]?\d")
_EDITORIAL = re.compile(r"[ \t]*\[…[^\]\n]*\][ \t]*")
_PAGE_LABEL = re.compile(
    r"(?i)\s*(?:(?:page|p\.|pg\.?|slide)\s*)?\d+\s*(?:(?:of|/)\s*\d+)?\s*|\s*第\s*\d+\s*[頁页]\s*|\s*-\s*\d+\s*-\s*"
)
_TERMINAL = ".!?。！？；;:："
_CONTINUES = (",", "，", "、", "-", "‐", "–", "(", "（", "[", "「", "『", "/", "&", "+")
_FUNCTION_WORDS = frozenset(
    """a an the and or nor but of to in on at by for from with as that which who whose than into
    onto its their our his her is are was were be been has have had not via per""".split()
)
_CLAUSE_BREAKS = (("; ", "；"), (", ", "，", ": ", "：", " — ", " – ", "、"))


@dataclass(frozen=True)
class Cut:
    """One span of one source (agent/engine/report_types.py: Span)."""

    id: str
    source_id: int
    n: int
    kind: str
    start: int
    end: int
    text: str
    language: str
    page: str
    flagged: bool


# --------------------------------------------------------------------------- cutting


def cut(source_id: int, source: Source, flags: Flags | None = None) -> list[Cut]:
    """The spans of one source's stored text, numbered from 1. `flags`: the source's flagged
    passages (SourceRegistry.flagged); when not given they are found here the way the registry
    finds them, so a caller that forgets cannot offer an instruction as a fact."""
    text = source.text or source.snippet or ""
    if flags is None:
        flags = flag(f"{source.title}\n{text}")
    pieces = segments(text)
    flagged = _flagged(text, pieces, flags.ranges(text) if flags else [])
    page = page_of(source)
    cuts = []
    for n, (kind, start, end) in enumerate(pieces, start=1):
        piece = text[start:end]
        cuts.append(
            Cut(
                id=f"{source_id}.{n}",
                source_id=source_id,
                n=n,
                kind=vocabulary.SPAN_KINDS.check(kind),
                start=start,
                end=end,
                text=piece,
                language=language_of(piece),
                page=page,
                flagged=n - 1 in flagged,
            )
        )
    return cuts


def _flagged(text: str, pieces: list[tuple[str, int, int]], ranges: list[tuple[int, int]]) -> set[int]:
    """The indexes of the pieces that overlap a flagged passage. Within a passage that holds
    several pieces (a Chinese paragraph is one passage), the pieces are judged one by one by the
    same rule (instructions.flag_pieces); when none of them matches alone, all of them are
    flagged."""
    out: set[int] = set()
    for start, end in ranges:
        inside = [i for i, (_, s, e) in enumerate(pieces) if s < end and start < e]
        marks = flag_pieces([text[pieces[i][1] : pieces[i][2]] for i in inside])
        out |= {i for i, mark in zip(inside, marks) if mark} if any(marks) else set(inside)
    return out


def page_of(source: Source) -> str:
    """The page, slide or section the source's passage is on: what the tool recorded
    (`meta["page"]`, course materials and PDF pages), else a page its locator names ("week3.pdf
    p. 4"), else ""."""
    page = (source.meta or {}).get("page")
    if page not in (None, ""):
        return str(page)
    match = re.search(r"(?:\bp\.|\bpage|\bslide)\s*(\d+)|第\s*(\d+)\s*[頁页]", source.locator or "", re.I)
    return (match.group(1) or match.group(2)) if match else ""


def language_of(text: str) -> str:
    """ "zh" when Han characters are at least as many as Latin letters (a Han character carries
    about as much as a short word, so a Chinese sentence naming "Bloom" or "IRB" stays Chinese),
    "en" when Latin letters are more, "" when the text has neither."""
    han = len(_HAN.findall(text))
    latin = sum(1 for c in text if c.isascii() and c.isalpha())
    if not han and not latin:
        return ""
    return "zh" if han >= latin else "en"


def segments(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every span of `text`, in order (see the module's rules)."""
    lines = _lines(text)
    widest = max((_width(text[s:e].strip()) for s, e in lines), default=0)
    blocks: list[tuple[str, int, int]] = []  # (kind, start, end) of rows, items and paragraphs
    current: list | None = None  # [kind, start, end, last line's text]
    for start, end in lines:
        line = text[start:end]
        stripped = line.strip()
        if not stripped or _SEPARATOR.fullmatch(line) or _EDITORIAL.fullmatch(line):
            if current:
                blocks.append(tuple(current[:3]))
                current = None
            continue
        lead = start + len(line) - len(line.lstrip())
        tail = start + len(line.rstrip())
        if _is_row(line):
            if current:
                blocks.append(tuple(current[:3]))
                current = None
            blocks.append(("row", lead, tail))
            continue
        if current and not _ITEM.match(line) and _wraps(current[3], stripped, widest):
            current[2], current[3] = tail, stripped
            continue
        if current:
            blocks.append(tuple(current[:3]))
        current = ["item" if _ITEM.match(line) else "sentence", lead, tail, stripped]
    if current:
        blocks.append(tuple(current[:3]))

    out: list[tuple[str, int, int]] = []
    for kind, start, end in blocks:
        block = text[start:end]
        whole = kind in ("row", "item") and end - start <= MAX_SPAN_CHARS
        pieces = [(0, end - start)] if whole else _sentences(block)
        for s, e in pieces:
            for ps, pe in _split_long(block, s, e):
                piece = block[ps:pe]
                if not _meaningful(piece, kind):
                    continue
                piece_kind = kind
                if kind == "sentence" and _is_field(
                    piece, whole_line=(ps, pe) == (0, len(block)) and "\n" not in block
                ):
                    piece_kind = "field"
                out.append((piece_kind, start + ps, start + pe))
    return out


def _lines(text: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for match in re.finditer(r"\r\n|\n|\r", text):
        out.append((start, match.start()))
        start = match.end()
    out.append((start, len(text)))
    return out


def _width(text: str) -> int:
    return len(text) + len(_WIDE.findall(text))


def _is_row(line: str) -> bool:
    stripped = line.strip()
    if "\t" in stripped:
        return sum(1 for cell in stripped.split("\t") if cell.strip()) >= 2
    if "|" not in stripped:
        return False
    cells = [c.strip() for c in stripped.strip("|").split("|")]
    if stripped.startswith("|") and stripped.endswith("|") and len(cells) >= 1 and stripped.count("|") >= 2:
        return any(cells)
    return " | " in stripped and sum(1 for c in cells if c) >= 2


def _field_shaped(line: str) -> bool:
    match = _FIELD_LINE.match(line)
    if not match:
        return False
    label = match.group("label")
    if match.group("value") == "/" or not any(c.isalpha() for c in label):
        return False  # "https://…", "10:30"
    if "a" <= label[0] <= "z":
        return False  # a wrapped sentence that goes on with a colon: "higher order: Remember, …"
    return _short_label(label)


def _short_label(label: str) -> bool:
    label = label.strip()
    if _HAN.search(label):
        return len(label) <= 6 and not re.search(r"[，。、；！？\s]", label)
    words = label.split()
    return 1 <= len(words) <= 4 and len(label) <= 40 and words[-1].lower() not in _FUNCTION_WORDS


def _wraps(previous: str, line: str, widest: int) -> bool:
    """Whether a single line break between `previous` and `line` is a visual wrap inside one
    sentence (the two lines are one span) rather than the end of a line that stands alone."""
    if not previous or not line or _is_row(line) or _field_shaped(line):
        return False
    last, first = previous[-1], line[0]
    if last in _TERMINAL:
        return False
    if "a" <= first <= "z":
        return True
    if previous.endswith(_CONTINUES):
        return True
    words = re.findall(r"[A-Za-z]+", previous[-12:])
    if words and previous[-1].isalpha() and words[-1].lower() in _FUNCTION_WORDS:
        return True
    if "A" <= first <= "Z":
        return False  # a new English sentence or a heading after a line that could end
    width = _width(previous)
    return width >= WRAP_WIDTH and width >= WRAP_SHARE * widest


def _false_stop(block: str, match: re.Match) -> bool:
    """An end mark that ends nothing: a "." after an abbreviation, an initial or an acronym, any
    mark before a lower-case word (a quoted question inside a sentence) or after a space."""
    following = block[match.end() :].lstrip()[:1]
    if following and "a" <= following <= "z":
        return True
    if match.start() and block[match.start() - 1].isspace():
        return True  # a mark standing alone is a mention of it (". ! ?"), not an end
    if not match.group().startswith("."):
        return False
    word = _WORD_BEFORE_DOT.search(block[max(0, match.start() - 20) : match.start() + 1])
    if not word:
        return False
    token = word.group(1)
    if token.lower().rstrip(".") in _ABBREVIATIONS:
        return True
    if len(token) == 1 and token.isupper():
        return True  # an initial: "J. Smith"
    return bool(re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", token))  # "U.S", "e.g", "a.m"


def _sentences(block: str) -> list[tuple[int, int]]:
    ends: set[int] = {m.end() for m in _CJK_END.finditer(block) if not _false_stop(block, m)}
    ends |= {m.end() for m in _LATIN_END.finditer(block) if not _false_stop(block, m)}
    out, start = [], 0
    for end in sorted(ends):
        if end > start:
            out.append(_strip(block, start, end))
            start = end
    if start < len(block):
        out.append(_strip(block, start, len(block)))
    return [(s, e) for s, e in out if e > s]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_long(block: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) as pieces of at most MAX_SPAN_CHARS, cut at clause boundaries."""
    out = []
    while end - start > MAX_SPAN_CHARS:
        window = block[start : start + MAX_SPAN_CHARS]
        cut_at = -1
        for breaks in _CLAUSE_BREAKS:
            positions = [
                window.rfind(b) + len(b.rstrip()) for b in breaks if window.rfind(b) >= MIN_SPLIT_CHARS
            ]
            if positions:
                cut_at = max(positions)
                break
        if cut_at < 0:
            space = max(window.rfind(" "), window.rfind("\n"))
            cut_at = space if space >= MIN_SPLIT_CHARS else MAX_SPAN_CHARS
        out.append(_strip(block, start, start + cut_at))
        start = _strip(block, start + cut_at, end)[0]
    out.append((start, end))
    return [(s, e) for s, e in out if e > s]


def _meaningful(piece: str, kind: str) -> bool:
    if kind == "row" and any(c.isdigit() for c in piece):
        return True  # a row of figures is data
    if sum(1 for c in piece if c.isalpha()) < 2:
        return False
    return not _PAGE_LABEL.fullmatch(piece)


def _is_field(piece: str, *, whole_line: bool) -> bool:
    match = _FIELD.fullmatch(piece)
    if not match or match.group("value").startswith("//"):
        return False
    label = match.group("label")
    if not any(c.isalpha() for c in label) or re.search(r"[.!?。！？；]\s", label):
        return False
    if whole_line and _short_label(label):
        return True
    return bool(_FIGURE_START.match(match.group("value")))


# --------------------------------------------------------------------------- the index


class SpanIndex:
    """The spans of every source of a registry, cut once per source on first use (thread-safe:
    the research's concurrent tool calls and phases share one index)."""

    def __init__(self, registry: SourceRegistry) -> None:
        self._registry = registry
        self._lock = threading.Lock()
        self._cuts: dict[int, list[Cut]] = {}

    def of_source(self, source_id: int) -> list[Cut]:
        with self._lock:
            known = self._cuts.get(source_id)
        if known is not None:
            return known
        source = self._registry.get(source_id)
        if source is None:
            return []
        cuts = cut(source_id, source, self._registry.flagged(source_id))
        with self._lock:
            return self._cuts.setdefault(source_id, cuts)

    def scores(self) -> dict[int, float]:
        """The retrieval score each source's tool gave it (`meta["score"]`, the materials' hybrid
        search), by source id: the `score` argument of `rank`."""
        out = {}
        for source_id, source in self._registry.items():
            value = (source.meta or {}).get("score")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[source_id] = float(value)
        return out

    def all(self) -> list[Cut]:
        """Every span of every source, in source order."""
        return [c for source_id, _ in self._registry.items() for c in self.of_source(source_id)]

    def get(self, span_id: str) -> Cut | None:
        parsed = parse_id(span_id)
        if parsed is None:
            return None
        source_id, n = parsed
        cuts = self.of_source(source_id)
        return cuts[n - 1] if 1 <= n <= len(cuts) else None

    def adjacent(self, ids: list[str]) -> bool:
        """The ids name existing spans of one source, consecutive and in order (3.4, 3.5, 3.6)."""
        parsed = [parse_id(i) for i in ids]
        if not parsed or any(p is None or self.get(i) is None for p, i in zip(parsed, ids)):
            return False
        sources = {p[0] for p in parsed}
        ns = [p[1] for p in parsed]
        return len(sources) == 1 and ns == list(range(ns[0], ns[0] + len(ns)))

    def render(self, cuts: Iterable[Cut]) -> str:
        """Spans as a model reads them: one line each, `[3.12] text` (whitespace collapsed,
        neutralised), grouped under one `<source>` tag per source in the order given, inside
        `<observations>`. Flagged spans are left out: they are never candidates."""
        groups: dict[int, list[Cut]] = {}
        for c in cuts:
            if not c.flagged:
                groups.setdefault(c.source_id, []).append(c)
        blocks = []
        for source_id, group in groups.items():
            source = self._registry.get(source_id)
            if source is None:
                continue
            attrs = (
                f'id="{source_id}" tool="{attribute(source.source_tool, 60)}" tier="{source.tier}" '
                f'title="{attribute(source.title, 200)}"'
            )
            found_by = self._registry.found_by.get(source_id, "")
            if found_by and found_by != "evidence":
                attrs += f' found_by="{attribute(found_by, 40)}"'
            lines = [f"[{c.id}] {_shown(c.text)}" for c in group]
            blocks.append(f"<source {attrs}>\n" + "\n".join(lines) + "\n</source>")
        return "<observations>\n" + "\n".join(blocks) + "\n</observations>"


def parse_id(span_id: str) -> tuple[int, int] | None:
    """(source id, n) of "<source id>.<n>", or None for anything else."""
    match = re.fullmatch(r"\s*(\d{1,9})\.(\d{1,6})\s*", str(span_id))
    if not match:
        return None
    source_id, n = int(match.group(1)), int(match.group(2))
    return (source_id, n) if n >= 1 else None


_FORGED_ID = re.compile(r"\[(\s*\d{1,9}\s*\.\s*\d{1,6}\s*)\]")


def _shown(text: str) -> str:
    """One line of a span for the model: whitespace collapsed, our delimiters neutralised, and a
    "[2.7]" inside the source's own text bracketed differently, so a source cannot print a span
    id of its own choosing."""
    return _FORGED_ID.sub(r"(\1)", neutralise(" ".join(text.split())))


# --------------------------------------------------------------------------- ranking

_STOPWORDS = frozenset(
    """a an the and or but nor of in on at to for from by with as into onto via per than then is are
    was were be been being am it its this that these those there their they them he she his her we
    our you your i me my which who whom whose what when where how why while also both either each
    such same other another some any all has have had do does did can could may might will would
    should must shall about so thus if whether not no""".split()
)
_TERM = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _stem(word: str) -> str:
    for suffix, keep in (
        ("'s", ""),
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ed", ""),
        ("ing", ""),
        ("ly", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


def terms(text: str) -> set[str]:
    """The lexical terms of a text: English words (stop words out, a crude stem) and Chinese
    character bigrams (a lone Han character counts alone)."""
    out: set[str] = set()
    for token in _TERM.findall(unicodedata.normalize("NFKC", text or "").lower()):
        if _HAN.match(token):
            out |= {token[i : i + 2] for i in range(len(token) - 1)} if len(token) > 1 else {token}
        elif token not in _STOPWORDS and (len(token) > 1 or token.isdigit()):
            out.add(_stem(token))
    return out


def rank(cuts: Iterable[Cut], query: str, *, score: dict[int, float] | None = None) -> list[Cut]:
    """The candidate spans for a sub-question, most relevant first; flagged spans are left out.

    Relevance is the share of the query's terms (IDF-weighted over these spans) that a span
    holds, damped for spans of fewer than eight terms (a heading repeats the query's words
    without stating anything), plus up to 0.2 from the source's retrieval score (`score`:
    source id → the tool's score, such as the materials' hybrid search score), scaled by the
    best score given. Ties go to the lower source id, then the earlier span. Deterministic."""
    pool = [c for c in cuts if not c.flagged]
    if not pool:
        return []
    wanted = terms(query)
    own = {c.id: terms(c.text) for c in pool}
    df: dict[str, int] = {}
    for found in own.values():
        for t in found & wanted:
            df[t] = df.get(t, 0) + 1
    total = len(pool)
    idf = {t: math.log(1 + total / df.get(t, 0.5)) for t in wanted}
    whole = sum(idf.values()) or 1.0
    best = max((v for v in (score or {}).values() if v > 0), default=0.0)

    def relevance(c: Cut) -> float:
        found = own[c.id]
        lexical = sum(idf[t] for t in found & wanted) / whole
        lexical *= 0.6 + 0.4 * min(1.0, len(found) / 8)
        boost = 0.2 * max(0.0, (score or {}).get(c.source_id, 0.0)) / best if best else 0.0
        return round(lexical + boost, 9)

    return sorted(pool, key=lambda c: (-relevance(c), c.source_id, c.n))
