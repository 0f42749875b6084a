"""What code checks of a claim against its located quotes (agent/engine/checks.py), each check
with its reason code, and the restatement rule that spares a model call."""

from __future__ import annotations

import pytest

from agent.engine import figures
from agent.engine.checks import (
    Evidence,
    describe,
    direction_contradicts,
    entity_missing,
    figures_missing,
    names,
    period_missing,
    periods,
    restates,
)


def ev(*quotes: str, about: tuple[str, ...] = (), exact: tuple[bool, ...] = ()) -> Evidence:
    return Evidence(quotes=list(quotes), about=list(about), exact=list(exact))


# --------------------------------------------------------------------------- figures


def test_a_scaled_figure_is_not_found_in_a_bare_label():
    assert figures_missing("The grant was 3 billion", None, "", ev("See Figure 3 for the trend."))
    assert not figures_missing("The grant was 3 billion", None, "", ev("a grant of 3 billion dollars"))
    # a quote that names the scale itself may write the number bare (a table under its unit)
    assert not figures_missing("Revenue was 35.1 billion", None, "", ev("Revenue (USD bn): 35.1"))
    # the scale written another way is the same number
    assert not figures_missing("Revenue was 35.1 billion", None, "", ev("revenue of $35,100,000,000"))


def test_a_figure_claims_value_and_unit_are_checked_as_well_as_its_text():
    quote = ev("Enrolment rose 9% to 1,200 students.")
    assert not figures_missing("Enrolment rose 9%", 9.0, "%", quote)
    assert figures_missing("Enrolment rose sharply", 90.0, "%", quote)
    assert figures_missing("Enrolment rose 900 %", None, "", quote)
    # a percentage is not the same number of students
    assert figures_missing("Enrolment reached 9 students", None, "", quote)


def test_exact_sources_must_state_the_figure_at_the_claims_precision():
    filing = "Revenue for FY2025Q3: $35,082,000,000 (USD)."
    assert not figures_missing(
        "Revenue was USD 35.08 billion", 35.08, "USD billion", ev(filing, exact=(True,))
    )
    assert figures_missing("Revenue was USD 35.09 billion", 35.09, "USD billion", ev(filing, exact=(True,)))
    # a web page is read at paraphrase precision (1 %)
    assert not figures_missing("Revenue was USD 35.09 billion", 35.09, "USD billion", ev(filing))


def test_chinese_and_full_width_figures_are_numbers_too():
    assert figures.quantities("營收351億美元")[0].value == pytest.approx(3.51e10)
    assert not figures_missing("營收為35.1 billion", None, "", ev("本季營收為３５１億美元。"))
    assert figures_missing("營收為999億美元", None, "", ev("本季營收為351億美元。"))
    assert not figures_missing("成長94%", None, "", ev("年增９４％"))


def test_years_and_quarters_are_left_to_the_period_check_not_skipped():
    quote = ev("In 2023 the course had 40 students.")
    # "2023" and "第3季" are periods, not figures the quote must state as numbers
    assert not figures_missing("2023年第3季有40名學生", None, "", quote)
    assert period_missing("2023年第3季有40名學生", "", quote) == {"q3"}


# --------------------------------------------------------------------------- periods


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("Q3 FY2025", {"q3", "y2025"}),
        ("FY2025Q3", {"q3", "y2025"}),
        ("the third quarter of 2024", {"q3", "y2024"}),
        ("2025年第三季", {"q3", "y2025"}),
        ("3Q24 and FY25", {"q3", "y2025"}),
        ("上半年", {"h1"}),
        ("H2 2023", {"h2", "y2023"}),
        ("35,082,000,000", set()),
    ],
)
def test_periods_are_read_in_their_usual_spellings(text, tokens):
    assert periods(text) == tokens


def test_a_wrong_year_fails_but_a_year_in_the_documents_metadata_passes():
    quote = ev(
        "Revenue grew to $35.1 billion.", about=(describe("NVIDIA 10-Q", "", {"period_end": "2024-10-27"}),)
    )
    assert period_missing("Revenue grew to $35.1 billion in 2019", "", quote) == {"y2019"}
    assert not period_missing("Revenue grew to $35.1 billion in 2024", "", quote)
    assert period_missing("Revenue was $35.1 billion", "Q2 FY2024", quote) == {"q2"}
    scholarly = ev("Dashboards had a small effect.", about=(describe("A study", "DOI 1", {"year": 2021}),))
    assert not period_missing("In 2021, dashboards had a small effect", "", scholarly)


# --------------------------------------------------------------------------- entities


def test_names_are_capitalised_words_inside_a_sentence_and_acronyms():
    assert names("Revenue rose, driven by a secret Pentagon grant from the DoD.") == ["Pentagon", "DoD"]
    assert names("The course uses RAG. Students like it.") == ["RAG"]
    assert names("NVIDIA revenue in Q3 FY2025 was USD 35.1 billion") == ["NVIDIA"]


def test_an_invented_name_fails_and_a_name_in_the_title_passes():
    quote = ev(
        "Enrolment in the course rose 9% this year.",
        about=(describe("EDS101 course report", "EDS101_report.pdf p. 2", {}),),
    )
    assert entity_missing("Enrolment rose 9%, driven by a secret Pentagon grant", "", quote) == ["Pentagon"]
    assert not entity_missing("Enrolment in EDS101 rose 9%", "", quote)


def test_a_figures_entity_is_matched_without_its_corporate_suffix():
    filing = ev("NVIDIA Corp (NVDA), Revenue for FY2025Q3: $35,082,000,000 (USD).")
    assert not entity_missing("", "NVIDIA Corporation", filing)
    assert not entity_missing("", "NVDA", filing)
    assert entity_missing("", "Apple Inc.", filing) == ["Apple Inc."]


def test_names_are_compared_within_one_script_only():
    chinese = ev("布魯姆分類法把認知歷程分為六個層次。")
    # an English claim about a Chinese passage: left to the verifier model
    assert not entity_missing("Bloom's taxonomy has six levels", "Bloom", chinese)
    assert entity_missing("", "輝達", ev("本季輝達營收創新高，超過三百億美元，遠高於去年。")) == []
    assert entity_missing("", "蘋果", ev("本季輝達營收創新高。")) == ["蘋果"]


# --------------------------------------------------------------------------- direction


@pytest.mark.parametrize(
    "claim, quote, contradicts",
    [
        ("Revenue fell 94%", "revenue of $35.1 billion, up 94% from a year ago", True),
        ("Revenue rose 94%", "revenue of $35.1 billion, up 94% from a year ago", False),
        ("Enrolment declined", "Enrolment increased by a tenth.", True),
        ("Students scored lower than the control group", "they scored higher than the control group", True),
        ("營收較去年減少", "營收較去年增加百分之九十四", True),
        ("營收成長", "營收較去年上升", False),
        ("學生人數衰退", "Student numbers grew last year.", True),
        ("Higher education uses dashboards", "Dashboard use fell in schools.", False),  # not a movement
        ("Revenue was $35.1 billion", "revenue fell to $35.1 billion", False),  # the claim says no direction
        ("Revenue rose", "Revenue rose in Q1 and fell in Q2.", False),  # the quote says both
    ],
)
def test_direction_words_may_not_contradict_the_quote(claim, quote, contradicts):
    assert direction_contradicts(claim, ev(quote)) is contradicts


# --------------------------------------------------------------------------- restatement


@pytest.mark.parametrize(
    "claim, quote, verdict",
    [
        (
            "Learning analytics measures data about learners",
            "Learning analytics measures data about learners.",
            True,
        ),
        (
            "learning analytics measures   data about learners [3].",
            "Learning analytics measures data about learners",
            True,
        ),
        ("學習分析在課程設計中扮演重要角色", "學習分析在課程\n設計中扮演重要角色。", True),
        (
            "It has six levels",
            "Bloom's taxonomy is old. It has six levels. It is revised.",
            True,
        ),  # one whole sentence
        (
            "X improves outcomes",
            "Critics say X improves outcomes, but the data disagree.",
            False,
        ),  # part of one
        (
            "Learning analytics measures data about learners and teachers",
            "Learning analytics measures data about learners.",
            False,
        ),
        ("Revenue rose 94%", "Revenue rose 9.4%.", False),
    ],
)
def test_a_claim_restates_its_quote_only_when_it_is_the_quote_or_one_of_its_sentences(claim, quote, verdict):
    assert restates(claim, [quote]) is verdict
