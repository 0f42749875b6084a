"""Which languages a text is written in, told by its script: Han characters are Chinese ("zh"),
Latin words are English ("en"). The platform's courses are taught in these two; script is enough
to tell them apart, and needs no model.

A Chinese word is about one and a half Han characters, so a text's Han characters count as
two thirds of a word each when the two scripts are weighed against each other. A language counts
as present when it holds at least MIN_SHARE of the text's words and a few of them: a handful of
Chinese terms quoted in an English paragraph (倒數排名融合) do not make it Chinese."""

from __future__ import annotations

import re
import unicodedata

LANGUAGES = ("en", "zh")
NAMES = {"en": "English", "zh": "Traditional Chinese"}
MIN_SHARE = 0.25
# The fewest Han characters, and Latin words, that make a language present at all.
MIN_HAN, MIN_WORDS = 4, 3
HAN_PER_WORD = 1.5

_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def _weights(text: str) -> tuple[int, int, float, float]:
    # NFKC folds full-width Latin letters (ＩＲＢ) into ASCII, as lexical.search_text does.
    text = unicodedata.normalize("NFKC", text or "")
    han = len(_HAN.findall(text))
    words = len(_LATIN_WORD.findall(text))
    return han, words, han / HAN_PER_WORD, float(words)


def languages_of(text: str) -> list[str]:
    """The languages present in `text`, in LANGUAGES order (what a chunk records)."""
    han, words, zh, en = _weights(text)
    total = zh + en
    if not total:
        return []
    present = []
    if words >= MIN_WORDS and en / total >= MIN_SHARE:
        present.append("en")
    if han >= MIN_HAN and zh / total >= MIN_SHARE:
        present.append("zh")
    return present


def main_language(text: str) -> str:
    """The language most of `text` is written in ("" for a text without letters): a query's
    language. A short query counts: "IRB 審查" is Chinese, "RAG" is English."""
    han, words, zh, en = _weights(text)
    if not han and not words:
        return ""
    return "zh" if zh >= en else "en"
