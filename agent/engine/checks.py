"""What code checks of a claim against the spans it quotes, before any model reads it.

Each check reads the located quotes (what the source really says at those places, not the
model's copy) and, for the entity and the period, the cited document's title, locator and
metadata too. A claim that fails one gets its reason code and never reaches the verifier model;
a claim that passes may still be judged unsupported by it (the model only narrows what code lets
through).

- figures (FIGURE_NOT_IN_SOURCE): every number the claim states (its text, and its value and unit
  when it is a figure) is a number of its quotes, with its scale: "3 billion" is not in "See
  Figure 3"; exactly at the claim's precision for sources of exact figures (filings).
- period (PERIOD_NOT_IN_QUOTE): every year, quarter and half-year the claim names (text and
  period field) is named by its quotes or the cited documents' titles or metadata; "Q3", "third
  quarter", "第三季" and "3Q" are one quarter; "FY2025" and "2025" one year.
- entity (ENTITY_NOT_IN_QUOTE): the figure's entity, and every proper name the claim writes in
  Latin letters (capitalised mid-sentence, or an acronym), are in the quotes, titles or metadata.
  Names are only compared within one script: a claim that writes "Bloom" for a Chinese source's
  "布魯姆" is left to the verifier model, as is a Chinese name against an English source.
- direction (DIRECTION_CONTRADICTS_QUOTE): the claim says "rose" where its quotes only say
  "fell" (or the other way round), in English or Chinese.

`restates` says when a claim only repeats its quote: then nothing is left for a model to judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import figures
from .quotes import norm

FIGURE_NOT_IN_SOURCE = "figure_not_in_source"
PERIOD_NOT_IN_QUOTE = "period_not_in_quote"
ENTITY_NOT_IN_QUOTE = "entity_not_in_quote"
DIRECTION_CONTRADICTS_QUOTE = "direction_contradicts_quote"


@dataclass
class Evidence:
    """What a claim may rest on: the located quote texts, and the cited documents' own words
    about themselves (title, locator, metadata) for names and periods."""

    quotes: list[str]
    about: list[str]
    exact: list[bool] = field(default_factory=list)  # per quote: its source's figures are exact

    @property
    def quoted(self) -> str:
        return "\n".join(self.quotes)

    @property
    def everything(self) -> str:
        return "\n".join(self.quotes + self.about)


def describe(title: str, locator: str, meta: dict | None) -> str:
    """A document's title, locator and the metadata that can name an entity or a period."""
    parts = [title, locator]
    for key, value in (meta or {}).items():
        if isinstance(value, str) and key not in ("url",):
            parts.append(value[:200])
        elif key == "year" and isinstance(value, int):
            parts.append(str(value))
        elif isinstance(value, list) and key in ("authors", "institutions", "countries"):
            parts.extend(str(v)[:200] for v in value[:20])
    return "\n".join(p for p in parts if p)


# --------------------------------------------------------------------------- periods

_ORDINAL = {
    "first": "1",
    "1st": "1",
    "second": "2",
    "2nd": "2",
    "third": "3",
    "3rd": "3",
    "fourth": "4",
    "4th": "4",
}
_ZH_DIGIT = {"一": "1", "二": "2", "三": "3", "四": "4", "1": "1", "2": "2", "3": "3", "4": "4"}
_PERIOD_PATTERNS: list[tuple[re.Pattern, object]] = [
    (re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)"), lambda m: f"y{m.group(1)}"),
    (re.compile(r"(?<![a-z0-9])fy ?(\d\d)(?![\d])"), lambda m: f"y20{m.group(1)}"),
    (re.compile(r"(?<![a-z])q ?([1-4])(?!\d)"), lambda m: f"q{m.group(1)}"),
    (re.compile(r"(?<!\d)([1-4])q(?![a-z])"), lambda m: f"q{m.group(1)}"),
    (
        re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)[ -](fiscal )?quarter"),
        lambda m: f"q{_ORDINAL[m.group(1)]}",
    ),
    (re.compile(r"第?([一二三四1-4])季"), lambda m: f"q{_ZH_DIGIT[m.group(1)]}"),
    (re.compile(r"(?<![a-z])h([12])(?!\d)"), lambda m: f"h{m.group(1)}"),
    (re.compile(r"\b(first|second)[ -]half"), lambda m: "h1" if m.group(1) == "first" else "h2"),
    (re.compile(r"(上|下)半年"), lambda m: "h1" if m.group(1) == "上" else "h2"),
]


def periods(text: str) -> set[str]:
    """The years, quarters and half-years a text names, as tokens ("y2025", "q3", "h1")."""
    flat = norm(text)
    return {token(m) for pattern, token in _PERIOD_PATTERNS for m in pattern.finditer(flat)}


def _without_periods(text: str) -> str:
    """The text with its period expressions blanked, so "第3季" or a year is not read as a figure
    (periods have a check of their own)."""
    flat = figures._plain(text)
    lowered = flat.lower()
    spans = [m.span() for pattern, _ in _PERIOD_PATTERNS for m in pattern.finditer(lowered)]
    chars = list(flat)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def period_missing(claim_text: str, claim_period: str, evidence: Evidence) -> set[str]:
    return (periods(claim_text) | periods(claim_period)) - periods(evidence.everything)


# --------------------------------------------------------------------------- figures


def figures_missing(
    claim_text: str, value: float | None, unit: str, evidence: Evidence
) -> list[figures.Quantity]:
    """The numbers the claim states that none of its quotes states (years and quarters are left
    to the period check); a quote of exact figures must state it at the claim's precision."""
    stated = figures.quantities(_without_periods(claim_text))
    own = figures.of_claim(value, unit)
    if own is not None:
        stated.append(own)
    exact = evidence.exact or [False] * len(evidence.quotes)
    return [
        q
        for q in stated
        if not any(figures.found_in(q, text, exact=e, strict=True) for text, e in zip(evidence.quotes, exact))
    ]


# --------------------------------------------------------------------------- entities

_CORPORATE = re.compile(
    r"\b(inc|incorporated|corp|corporation|co|company|ltd|limited|plc|llc|ag|sa|group|holdings)\b\.?", re.I
)
_CURRENCIES = {"usd", "eur", "twd", "ntd", "nt", "rmb", "cny", "jpy", "gbp", "hkd", "us"}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9&]*(?:['’][A-Za-z]+)?")
_SENTENCE_START = re.compile(r"(^|[.!?。！？:;]\s*|\n\s*)$")
_LATIN_WORD = re.compile(r"[a-z]{3,}")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def _has_latin(text: str) -> bool:
    return len(_LATIN_WORD.findall(text.lower())) >= 3


def names(text: str) -> list[str]:
    """Proper names written in Latin letters: capitalised words not at a sentence's start, words
    with a capital or a digit inside ("iPhone", "GPT4"), acronyms anywhere. Period tokens (Q3,
    FY2025) and currency codes are checked elsewhere or not names."""
    out = []
    for match in _NAME.finditer(text or ""):
        word = match.group(0)
        base = re.split(r"['’]", word)[0]
        if len(base) < 2 or base.lower() in _CURRENCIES or periods(base):
            continue
        inner = any(c.isupper() or c.isdigit() for c in base[1:])
        capital = base[0].isupper()
        at_start = bool(_SENTENCE_START.search(text[: match.start()]))
        if inner or (capital and not at_start):
            out.append(base)
    return list(dict.fromkeys(out))


def entity_missing(claim_text: str, entity: str, evidence: Evidence) -> list[str]:
    """The figure's entity and the claim's Latin proper names that the evidence does not name."""
    everything = norm(evidence.everything)
    words = set(re.findall(r"[a-z0-9&]+", everything))
    missing = []
    if _has_latin(everything):
        for name in names(claim_text):
            if name.lower() not in words and norm(name) not in everything:
                missing.append(name)
    core = _CORPORATE.sub(" ", entity or "").strip(" ,.")
    if core:
        cjk = bool(_CJK_CHAR.search(core))
        checkable = bool(_CJK_CHAR.search(everything)) if cjk else _has_latin(everything)
        latin_words = [w for w in re.findall(r"[a-z0-9&]+", norm(core)) if w not in _CURRENCIES]
        found = norm(core) in everything or (not cjk and latin_words and all(w in words for w in latin_words))
        if checkable and not found:
            missing.append(entity)
    return list(dict.fromkeys(missing))


# --------------------------------------------------------------------------- direction

# Words of movement only: "higher"/"lower", "more"/"less" count in a comparison ("more than"),
# not in "higher education" or "lower-order thinking"; "up"/"down" before a figure or "from".
_UP = re.compile(
    r"\b(rise|rises|rose|risen|rising|increase|increased|increases|increasing|grew|grown|climbed|jumped|"
    r"surged|soared|(higher|more|greater) than|up (by )?(?=[\d$])|up from)\b|增加|增長|增长|上升|成長|成长|"
    r"上漲|上涨|攀升",
    re.I,
)
_DOWN = re.compile(
    r"\b(fall|falls|fell|fallen|falling|decrease|decreased|decreases|decreasing|decline|declined|declines|"
    r"declining|drop|dropped|drops|shrank|shrunk|plunged|slumped|(lower|less|fewer|smaller) than|"
    r"down (by )?(?=[\d$])|down from)\b|減少|减少|下降|衰退|下滑|下跌|萎縮|萎缩",
    re.I,
)


def direction(text: str) -> set[str]:
    """ "up" and/or "down": the direction words a text uses."""
    flat = figures._plain(text)
    return {d for d, pattern in (("up", _UP), ("down", _DOWN)) if pattern.search(flat)}


def direction_contradicts(claim_text: str, evidence: Evidence) -> bool:
    """The claim moves one way and its quotes only the other way."""
    said, quoted = direction(claim_text), direction(evidence.quoted)
    return len(said) == 1 and bool(quoted) and not (said & quoted)


# --------------------------------------------------------------------------- restatement

_MARKER = re.compile(r"\s*\[(?:c)?\d+(?:\s*,\s*(?:c)?\d+)*\]")
_END = " .。!！?？;；:：,，"
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*")


def _bare(text: str) -> str:
    return norm(_MARKER.sub("", text)).strip(_END)


def restates(claim_text: str, quoted: Iterable[str]) -> bool:
    """The claim only repeats one of its quotes: after normalisation (quotes.normalise) and with
    citation markers ("[3]", "[c2]") and the end punctuation taken off, it equals one located
    quote, or one whole sentence of it. A part of a sentence is not a restatement: "X improves
    outcomes" cut from "Critics say X improves outcomes, but…" says something the source does not."""
    claim = _bare(claim_text)
    if not claim:
        return False
    for text in quoted:
        if claim == _bare(text):
            return True
        if any(claim == _bare(sentence) for sentence in _SENTENCES.split(text) if sentence.strip()):
            return True
    return False
