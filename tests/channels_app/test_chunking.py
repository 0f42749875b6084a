"""Sentence splitting that respects Chinese punctuation, overlap, page boundaries, and the bigram lexical form."""

from materials import lexical
from materials.chunking import approx_tokens, chunk_units, normalise, sentences
from materials.extraction import Unit


def test_sentences_end_at_chinese_and_english_terminators():
    text = "學習分析是核心。它蒐集紀錄！為什麼？因為「資料」有用；也能幫助學生。Dashboards help. Do they? Yes e.g. Dr. Lin said so (p. 4)."
    assert sentences(text) == [
        "學習分析是核心。",
        "它蒐集紀錄！",
        "為什麼？",
        "因為「資料」有用；",
        "也能幫助學生。",
        "Dashboards help.",
        "Do they?",
        "Yes e.g. Dr. Lin said so (p. 4).",
    ]


def test_a_closing_quote_stays_with_its_sentence():
    assert sentences("老師說：「先讀講義。」然後開始。") == ["老師說：「先讀講義。」", "然後開始。"]


def test_pdf_line_wraps_are_undone_without_inserting_spaces_into_chinese():
    assert (
        normalise("學習分析是教育資料\n科學的核心。Learning\nanalytics\x00 helps.")
        == "學習分析是教育資料科學的核心。Learning analytics helps."
    )


def test_chunks_respect_the_size_overlap_and_never_cross_pages():
    page_one = "".join(f"第{n}句說明學習分析的一個面向。" for n in range(1, 30))
    chunks = chunk_units(
        [Unit(1, page_one), Unit(2, "Second page. Short.")], max_tokens=60, overlap_tokens=20
    )

    first_page = [c for c in chunks if c.page == 1]
    assert len(first_page) > 3 and all(approx_tokens(c.text) <= 60 for c in first_page)
    for previous, following in zip(first_page, first_page[1:]):
        last_sentence = sentences(previous.text)[-1]
        assert following.text.startswith(last_sentence)  # the overlap carries whole sentences
    assert all(c.text.endswith("。") for c in first_page)  # cut at sentence ends only
    assert [c.text for c in chunks if c.page == 2] == ["Second page. Short."]
    covered = "".join(c.text for c in first_page)
    assert all(sentence in covered for sentence in sentences(page_one))  # nothing is lost


def test_a_sentence_longer_than_a_chunk_is_cut_at_commas_then_characters():
    long_sentence = "，".join(["資料倫理需要審查"] * 40) + "。"
    chunks = chunk_units([Unit(1, long_sentence + "x" * 900)], max_tokens=50, overlap_tokens=10)
    assert all(approx_tokens(c.text) <= 50 for c in chunks)
    assert "".join(c.text for c in chunks).count("資料倫理需要審查") >= 40


def test_the_lexical_form_turns_chinese_runs_into_bigrams_and_folds_full_width():
    assert lexical.search_text("學習分析 ＩＲＢ review 審").split() == [
        "學習",
        "習分",
        "分析",
        "IRB",
        "review",
        "審",
    ]
    assert lexical.query_terms("學習分析與 IRB？學習") == ["學習", "習分", "分析", "析與", "irb"]
