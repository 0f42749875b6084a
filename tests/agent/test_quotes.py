"""Locating a claim's quotes in its passages (agent/engine/quotes.py): the documented
normalisation, offsets into the original text, pages, and what is not forgiven."""

from __future__ import annotations

import pytest

from agent.engine.claims import Quote
from agent.engine.quotes import find, locate, located_text, normalise
from agent.engine.types import Source


def located(quote: str, passage: str) -> str:
    span = find(quote, passage)
    assert span is not None, f"{quote!r} not found"
    return passage[span[0] : span[1]]


def test_an_exact_english_span_maps_to_its_offsets():
    passage = "Intro. NVIDIA reported revenue of $35.1 billion in Q3 FY2025. Outro."
    assert find("NVIDIA reported revenue of $35.1 billion", passage) == (7, 47)


@pytest.mark.parametrize(
    "quote, passage, expected",
    [
        # Latin case, and whitespace runs including newlines
        (
            "learning   analytics\nMEASURES data",
            "Learning analytics measures data.",
            "Learning analytics measures data",
        ),
        # curly quotes against straight ones, both ways
        (
            'the so-called "dashboard effect"',
            "the so-called “dashboard effect” is small",
            "the so-called “dashboard effect”",
        ),
        ("the learner’s model", "the learner's model", "the learner's model"),
        # dashes and minus signs
        ("2019-2023 cohort", "the 2019–2023 cohort", "2019–2023 cohort"),
        ("a change of -3%", "a change of −3% overall", "a change of −3%"),
        # full-width digits, letters and punctuation (NFKC)
        ("營收為35.1億美元", "本季營收為３５．１億美元。", "營收為３５．１億美元"),
        ("Ｑ3 ＧＰＡ", "the Q3 GPA rose", "Q3 GPA"),
        # Chinese lines broken anywhere by PDF extraction, and a model joining them
        (
            "學習分析在課程設計中扮演重要角色",
            "學習分析在課程\n設計中扮演 重要角色。",
            "學習分析在課程\n設計中扮演 重要角色",
        ),
        # 「」 quotation marks as the model writes them in “”
        ("所謂“布魯姆分類法”", "所謂「布魯姆分類法」是", "所謂「布魯姆分類法」"),
        # the engine's neutralised delimiter in what the model read
        ("‹source> tags", "literal <source> tags here", "<source> tags"),
    ],
)
def test_the_normalisation_forgives_form_not_content(quote, passage, expected):
    assert located(quote, passage) == expected


@pytest.mark.parametrize(
    "quote, passage",
    [
        ("revenue of $35.2 billion", "revenue of $35.1 billion"),  # a changed figure
        ("revenue rose … to $35.1 billion", "revenue rose sharply to $35.1 billion"),  # an ellipsis
        ("NVIDIA revenue grew", "NVIDIA reported that revenue grew"),  # a word left out
        ("學習分析很重要", "學習分析非常重要"),  # a paraphrase
        ("abc", "abc abc"),  # too short to pin anything down
        ("x" * 501, "x" * 600),  # too long to pin anything down
    ],
)
def test_what_is_not_the_passage_is_not_found(quote, passage):
    assert find(quote, passage) is None


def test_offsets_point_into_the_original_text_with_its_own_spacing():
    passage = "Line one.\n\n  Bloom’s   taxonomy has\nsix levels.  End."
    start, end = find("Bloom's taxonomy has six levels", passage)
    assert passage[start:end] == "Bloom’s   taxonomy has\nsix levels"
    normalised = normalise(passage)
    assert len(normalised.text) == len(normalised.origin)


def test_a_pdf_passage_gives_its_page_and_a_quote_is_located_in_its_own_source_only():
    pdf = Source(
        title="EDS101_week3.pdf p. 4",
        snippet="Retrieval practice…",
        text="Week 3.\nRetrieval practice improves long-term retention (Roediger, 2006).",
        tier="internal",
        locator="EDS101_week3.pdf p. 4",
        meta={"material_id": 7, "page": 4, "score": 0.8},
    )
    quote = Quote(source_id=1, text="Retrieval practice improves long-term retention")
    assert locate(quote, pdf)
    assert (quote.start, quote.end, quote.page) == (8, 55, "4")
    assert located_text(quote, pdf) == "Retrieval practice improves long-term retention"

    web = Source(title="A page", snippet="s", text="Something else entirely.", tier="web")
    elsewhere = Quote(source_id=2, text="Retrieval practice improves long-term retention")
    assert not locate(elsewhere, web)
    assert (elsewhere.start, elsewhere.end, elsewhere.page) == (-1, -1, "")
    assert not locate(elsewhere, None)


def test_a_source_without_text_is_quoted_from_its_snippet():
    source = Source(title="Catalogue row", snippet="EDS101 Learning Analytics, 3 credits.", tier="internal")
    quote = Quote(source_id=1, text="Learning Analytics, 3 credits")
    assert locate(quote, source) and located_text(quote, source) == "Learning Analytics, 3 credits"
    assert quote.page == ""
