"""Whether a sentence of a chat answer is a span of the source its marker cites.

A sentence in any chat answer that carries a citation marker ("[1]") must be the source's own
words; otherwise its marker is not linked and the sentence is shown as the assistant's own words.
`sentence_is_span(sentence, source_text)` decides it. What is accepted, exactly:

1. The sentence without its markers ("[1]", "[1, 2]", "[c2]", "【1】", "[3.12]") is folded as a
   quote is (folding.py: full-width forms, quote marks, dashes, Latin case, whitespace) and its
   closing punctuation (. 。 ! ！ ? ？ ; ； : ： , ，) is set aside; so is a span's list marker.
2. **A span, or one to three adjacent spans**: it equals, so folded, the source's text from the
   start of one span to the end of the same span or of the first or second after it (spans as
   spans.segments cuts them). The answer is the span (for several, a Cut from the first's start
   to the last's end, with the first's id).
3. **A whole clause of a span**: it is a substring of that folded text of at least 25 characters
   (12 when it is mostly Chinese) that starts at the start of a span or after a clause mark
   (, ; : ， ； ： 、 — and the sentence ends) and ends at the end of a span or before one, and
   the rest of the text it was cut from holds no negation (not, no, never, false, n't, 不, 未,
   沒有, 並非…) and no word that makes a clause conditional, conceded or reported (if, unless,
   whether, although, but, however, claim, say, allegedly, rumour, 如果, 若, 除非, 即使, 雖然, 但,
   然而, 據稱, 聲稱, 認為…). The answer is a Cut located at the matched characters, with the id of
   the span it starts in.

Nothing else: a sentence that adds a word, drops one, changes a number or joins spans that do not
follow each other is the assistant's. A span that addresses the model (instructions.py) never
matches.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left

from .folding import normalise
from .novelty import negates
from .spans import Cut, cut
from .types import Source

MIN_CLAUSE_CHARS = 25
MIN_CLAUSE_CJK = 12
MAX_ADJACENT = 3

_MARKERS = re.compile(
    r"\s*(?:\[\s*c?\d{1,4}(?:\s*[,，、;；]\s*c?\d{1,4})*\s*\]|【\s*\d{1,4}\s*】|\[\d+\.\d+\])", re.I
)
_END = " .。!！?？;；:：,，"
_CLAUSE = set(",;:，；：、-—.!?。！？()（）\"'")
_ITEM = re.compile(
    r"^(?:[-*•·‣◦▪●○■□]|\d{1,3}[.)]|\(\d{1,3}\)|\([a-z]\)|[a-z][.)]|[一二三四五六七八九十]{1,3}、)\s*"
)
_QUALIFIERS = re.compile(
    r"\b(?:if|unless|whether|although|though|but|however|suppose|supposing|assuming|claims?|claimed|says?|"
    r"said|argues?|argued|believes?|believed|allegedly|reportedly|rumou?rs?|except)\b"
    r"|如果|若|假如|假設|假设|除非|即使|雖然|虽然|但|然而|據稱|据称|傳聞|传闻|聲稱|声称|認為|认为|據說|据说",
    re.I,
)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def bare(sentence: str) -> str:
    """The sentence without its citation markers."""
    return _MARKERS.sub("", sentence or "").strip()


def _core(folded: str) -> tuple[int, int]:
    """[start, end) of a folded text without its list marker and its closing punctuation."""
    start, end = 0, len(folded)
    item = _ITEM.match(folded)
    if item:
        start = item.end()
    while end > start and folded[end - 1] in _END:
        end -= 1
    while start < end and folded[start] == " ":
        start += 1
    return start, end


def sentence_is_span(
    sentence: str, source_text: str, *, source_id: int = 0, cuts: list[Cut] | None = None
) -> Cut | None:
    """The span (or the located clause of one) that `sentence` is, in the source whose stored
    text is `source_text`; None when the sentence is not the source's words (see the module).
    `cuts`: the source's spans when the caller has them (SpanIndex.of_source), else they are cut
    here (the ids then count from `source_id`)."""
    wanted_norm = normalise(bare(sentence))
    ws, we = _core(wanted_norm.text)
    wanted = wanted_norm.text[ws:we]
    if not wanted:
        return None
    if cuts is None:
        cuts = cut(source_id, Source(title="", snippet="", text=source_text, tier="web"))
    folded = normalise(source_text)  # once: a window's folding is a slice of it (cuts hold no edge space)
    edges = [(bisect_left(folded.origin, c.start), bisect_left(folded.origin, c.end)) for c in cuts]
    windows = [
        (i, k, edges[i][0], edges[i + k][1])
        for i in range(len(cuts))
        for k in range(MAX_ADJACENT)
        if i + k < len(cuts) and not any(c.flagged for c in cuts[i : i + k + 1])
    ]
    for i, k, start, end in windows:
        cs, ce = _core(folded.text[start:end])
        if folded.text[start + cs : start + ce] == wanted:
            first, last = cuts[i], cuts[i + k]
            return first if k == 0 else _located(first, source_text, first.start, last.end)
    for i, k, start, end in windows:
        found = _clause(folded.text[start:end], wanted)
        if found:
            begin, finish = folded.span(start + found[0], found[1])
            group = cuts[i : i + k + 1]
            owner = next((c for c in group if c.start <= begin < c.end), group[0])
            return _located(owner, source_text, begin, finish)
    return None


def _located(span: Cut, text: str, start: int, end: int) -> Cut:
    return dataclasses.replace(span, start=start, end=end, text=text[start:end])


def _clause(hay: str, wanted: str) -> tuple[int, int] | None:
    """(start, length) in the folded window `hay` of `wanted` as a whole clause, or None."""
    cjk = len(_HAN.findall(wanted))
    if len(wanted) < MIN_CLAUSE_CHARS and not (cjk * 2 >= len(wanted) and cjk >= MIN_CLAUSE_CJK):
        return None
    at = hay.find(wanted)
    while at >= 0:
        before = hay[:at].rstrip()
        after = hay[at + len(wanted) :].lstrip(" ")
        opens = not before or before[-1] in _CLAUSE or _ITEM.fullmatch(before + " ")
        closes = not after or after[0] in _CLAUSE
        if opens and closes:
            rest = hay[:at] + " " + hay[at + len(wanted) :]
            if not _qualified(rest):
                return at, len(wanted)
        at = hay.find(wanted, at + 1)
    return None


def _qualified(rest: str) -> bool:
    """The rest of a span negates, conditions, concedes or reports what the clause says."""
    return negates(rest) or bool(_QUALIFIERS.search(rest))
