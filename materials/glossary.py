"""A channel's bilingual glossary: term pairs the course's own materials write in both languages,
mined by code at indexing, and used to carry a query into the other language when no model
translation is at hand (materials.bilingual).

Taiwanese course materials gloss their terms: 學習分析（learning analytics）, "Bloom's taxonomy
布魯姆分類法", a slide title "Formative assessment 形成性評量", a key-terms line "rubric 評分規準；
peer assessment 同儕互評". Three patterns find them:

- a Chinese term followed by its English in brackets: 研究倫理審查委員會（IRB）;
- an English term followed by its Chinese in brackets: early-warning dashboard (預警儀表板);
- a short segment (a title, a list item, a line cut at → · | ； or a colon) that is exactly one
  English phrase beside one Chinese phrase, in either order: 記憶 Remember.

Chinese has no spaces, so where a bracketed term starts is a guess: the run of Han characters
before the bracket is cut after the last function character (的, 是, 以, 過, …) and kept to
MAX_HAN characters. Matching a query is by character bigrams, as the lexical side matches, so a
term cut a character too long or too short still matches. A wrong pair costs little: the
expanded query is one more ranking fused with the query as written."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .lexical import CJK_RUN

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
MAX_HAN = 10  # the longest Chinese side kept
MAX_WORDS = 5  # the longest English side kept
MAX_TERMS = 500  # per material: a glossary, not a dictionary of the file
# Characters after which a Chinese term rarely goes on: particles, prepositions, common verbs.
_FUNCTION = set("的之是在於與和及或把被將為對從由以用讓使過了即稱等指將並再而")
# Characters a term beside an English phrase does not hold: a clause ("轉成向量並存入 pgvector")
# is not a term.
_JOINERS = set("的是在與和及或並而了把被將從由讓使於")
# Words before an English term that are not part of it.
_STOP = {
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "is",
    "are",
    "was",
    "were",
    "be",
    "to",
    "and",
    "or",
    "with",
    "for",
    "in",
    "on",
    "by",
    "as",
    "from",
    "of",
    "our",
    "their",
    "its",
    "we",
    "which",
    "called",
    "use",
    "uses",
    "using",
}

_ZH_THEN_EN = re.compile(rf"([{_HAN}]{{2,}})\s*[（(]\s*([A-Za-z][A-Za-z'’\- ]{{0,60}}?)\s*[)）]")
_EN_THEN_ZH = re.compile(
    rf"((?:[A-Za-z][A-Za-z'’\-]*\s+){{0,{MAX_WORDS + 3}}}[A-Za-z][A-Za-z'’\-]*)\s*[（(]\s*([{_HAN}]{{2,{MAX_HAN + 4}}})\s*[)）]"
)
# Where a title or list item ends: line breaks, sentence ends, arrows, bullets, separators, colons.
_SEGMENT_BREAK = re.compile(r"[\n。！？；;：:→⇒•·|｜、，,]|(?<=[A-Za-z])\.(?=\s|$)|\s[-–—]\s")
_RUN = re.compile(rf"[{_HAN}]+|[A-Za-z][A-Za-z'’\-]*(?:\s+[A-Za-z][A-Za-z'’\-]*)*")
_DIGITS = re.compile(r"\d")


@dataclass(frozen=True)
class Term:
    zh: str
    en: str


def _zh_side(run: str, en: str) -> str:
    """The Chinese term at the end of a run of Han characters glossed by `en`: cut after its last
    function character (when at least two characters remain), then to about two characters per
    English word (three per letter of an acronym: 研究倫理審查委員會 for IRB), at most MAX_HAN."""
    for index in range(len(run) - 3, -1, -1):
        if run[index] in _FUNCTION:
            run = run[index + 1 :]
            break
    parts = re.findall(r"[A-Za-z]+", en)
    if len(parts) == 1 and parts[0].isupper():
        longest = 3 * len(parts[0])
    else:
        longest = 2 * len(parts) + 1
    return run[-min(MAX_HAN, max(2, longest)) :]


def _en_side(words: str, limit: int = MAX_WORDS) -> str:
    """The English term at the end of a phrase: its last words, back to a stop word."""
    kept: list[str] = []
    for word in reversed(words.split()):
        if word.lower() in _STOP or len(kept) >= limit:
            break
        kept.insert(0, word)
    return " ".join(kept)


def _term(zh: str, en: str) -> Term | None:
    zh, en = zh.strip(), " ".join(en.split()).strip(" -'’")
    if len(zh) < 2 or not en or len(en) < 2 or _DIGITS.search(en):
        return None
    if len(en.split()) > MAX_WORDS or not re.fullmatch(rf"[{_HAN}]+", zh):
        return None
    return Term(zh=zh, en=en)


def mine(text: str) -> list[Term]:
    """The term pairs `text` writes in both languages, in order of first appearance, each once."""
    text = unicodedata.normalize("NFKC", text or "").replace("\r", "\n")
    # NFKC turns full-width brackets into ASCII ones; both are matched anyway.
    found: dict[tuple[str, str], Term] = {}

    def keep(term: Term | None) -> None:
        if term is not None and len(found) < MAX_TERMS:
            found.setdefault((term.zh, term.en.lower()), term)

    for match in _ZH_THEN_EN.finditer(text):
        keep(_term(_zh_side(match.group(1), match.group(2)), match.group(2)))
    for match in _EN_THEN_ZH.finditer(text):
        zh = match.group(2)
        # About two Chinese characters per English word: "typical early-warning dashboard
        # (預警儀表板)" keeps "early-warning dashboard".
        keep(_term(zh, _en_side(match.group(1), limit=min(MAX_WORDS, max(1, len(zh) // 2)))))
    for segment in _SEGMENT_BREAK.split(text):
        segment = re.sub(r"[（(][^）)]*[)）]", " ", segment)  # bracketed glosses were read above
        runs = [r.strip() for r in _RUN.findall(segment)]
        if len(runs) != 2:
            continue
        zh = [r for r in runs if CJK_RUN.fullmatch(r)]
        en = [r for r in runs if not CJK_RUN.fullmatch(r)]
        if (
            len(zh) == 1
            and len(en) == 1
            and len(zh[0]) <= MAX_HAN
            and not set(zh[0]) & _JOINERS
            and len(en[0].split()) <= MAX_WORDS
        ):
            keep(_term(zh[0], en[0]))
    return list(found.values())


# --------------------------------------------------------------------------- using it


def _bigrams(text: str) -> set[str]:
    """The character bigrams of the text's CJK runs (a one-character run is its own)."""
    grams: set[str] = set()
    for run in CJK_RUN.findall(text):
        grams.update({run} if len(run) == 1 else {run[i : i + 2] for i in range(len(run) - 1)})
    return grams


_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    """Plural and possessive endings off, so "dashboards" meets "dashboard"."""
    for ending in ("'s", "’s", "ies", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)] + ("y" if ending == "ies" else "")
    return word


def _words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(unicodedata.normalize("NFKC", text).lower().replace("’", "'"))]


def expand(query: str, terms: list[Term], target: str) -> str:
    """`query` carried into `target` ("en" or "zh") term by term: the other side of every
    glossary term the query holds, in the order they appear in it, plus the query's own words
    that read the same in the target (an "IRB" in a Chinese question). "" when no term matched.

    A term inside a longer one that also matched gives way to it (分析 to 學習分析)."""
    query = unicodedata.normalize("NFKC", query or "")
    hits: list[tuple[int, str, str]] = []  # (position in the query, matched side, other side)
    if target == "en":
        grams = _bigrams(query)
        for term in terms:
            wanted = _bigrams(term.zh)
            # Most of the term's bigrams in the query (all of a two-character term's one).
            if wanted and len(wanted & grams) >= max(1, (len(wanted) + 1) // 2):
                first = min(query.find(g) for g in wanted & grams)
                hits.append((first, term.zh, term.en))
        # Latin words of a Chinese query ("IRB 的審查") are the target's already.
        carried = re.findall(r"[A-Za-z][A-Za-z0-9'’\-]*", query)
        inside = lambda small, big: small in big  # noqa: E731
    else:
        words = _words(query)
        lowered = " ".join(words)
        for term in terms:
            wanted = _words(term.en)
            if wanted and all(w in words for w in wanted):
                hits.append((lowered.find(wanted[0]), " ".join(wanted), term.zh))
        # Acronyms and numbers read the same in a Chinese passage ("研究倫理審查委員會（IRB）").
        carried = re.findall(r"\b(?:[A-Z]{2,}|\d+(?:\.\d+)?)\b", query)
        inside = lambda small, big: set(small.split()) <= set(big.split())  # noqa: E731
    hits = [
        hit
        for hit in hits
        if not any(len(other[1]) > len(hit[1]) and inside(hit[1], other[1]) for other in hits)
    ]
    if not hits:
        return ""
    seen: dict[str, str] = {}
    for _, _, text in sorted(hits):
        seen.setdefault(text.lower(), text)
    for word in carried:
        seen.setdefault(word.lower(), word)
    return " ".join(seen.values())
