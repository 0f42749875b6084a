"""The check on model-written items (agent/engine/novelty.py): an AI-labelled block carries no
figure, year, name or negation that its spans lack, in English and Chinese; and a translation of
a span keeps its numbers and names. The lies are the lying model's shapes
(tests/support/planted.py) in other words."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.engine import vocabulary
from agent.engine.novelty import cjk_names, latin_names, negates, novel, translation_keeps

# Spans as the sources state them (the demo course and the evaluation worlds' shapes).
STUDY = (
    "In the classroom study summarised in this course, students who took three short practice quizzes "
    "retained 62 percent of the material after one week, while students who re-read the chapter for the "
    "same time retained 41 percent."
)
ENROLMENT_ZH = "二〇一一年，該校有十萬名學生，其中三成來自外縣市。"
ENROLMENT_EN = "In 2011 the university enrolled 100,000 students."
PREDICTIONS = (
    "Predictions are probabilities, not verdicts; a student flagged as at risk should be offered support, "
    "never penalised because of the flag."
)
GRADING_ZH = "分類結果僅供教學參考，不作為評分依據。"
LA = "Learning analytics is the measurement, collection, analysis and reporting of data about learners."
LA_ZH = "學習分析（learning analytics）是蒐集、分析並回報學習者及其情境資料的做法，目的是理解並改善學習。"
IRB = "Research with student data needs review by an Institutional Review Board (IRB) before data are collected."
DROPOUT = "Dropout fell by 3 percentage points after the advisers contacted 95 of the 120 flagged students."
REVENUE = "ACME DEVICES INC (ACME), Revenue for FY2025Q3 (2024-07-29 to 2024-10-27): USD 35,082,000,000 (≈ USD 35.08 billion)."
HANDOUT = "Week 3 · Data ethics and the IRB"
NTU = "國立臺灣大學的研究團隊分析了三所大學的資料。"


def reasons(text: str, grounds: list[str]) -> list[tuple[str, str]]:
    found = novel(text, grounds)
    assert all(reason in vocabulary.NOT_SHOWN_REASONS for reason, _ in found)
    return found


# --------------------------------------------------------------------------- what passes


@pytest.mark.parametrize(
    "text, grounds",
    [
        ("Practice quizzes left students with more of the material (62% against 41%) [1].", [STUDY]),
        ("Students who quizzed themselves retained sixty-two percent, re-readers 41%.", [STUDY]),
        ("該校在2011年有100,000名學生，其中30%來自外縣市。", [ENROLMENT_ZH]),
        ("In 2011 the school had a hundred thousand students.", [ENROLMENT_ZH]),
        ("民國100年時該校有十萬名學生。", [ENROLMENT_EN]),
        ("二〇一一年該校招收了十萬名學生。", [ENROLMENT_EN]),
        ("This suggests the quizzes help students remember more over time.", [STUDY]),
        ("So a prediction is not a verdict, and a flagged student should get support [2].", [PREDICTIONS]),
        ("分類結果不作為評分依據，只供參考。", [GRADING_ZH]),
        ("學習分析蒐集並分析學習者資料，以改善學習。", [LA_ZH]),
        ("The IRB reviews research with student data before collection.", [IRB]),
        ("ACME's revenue was about USD 35.1 billion in FY2025.", [REVENUE]),
        ("ACME's revenue was about 35 billion.", [REVENUE]),
        ("臺灣大學的團隊分析了三所大學。", [NTU]),
        ("Both passages [1.2][1.3] describe the same study.", [STUDY]),
        ("學生的背景不同，未來的研究可以比較。", [LA_ZH]),
    ],
)
def test_an_item_that_stays_within_its_spans_passes(text, grounds):
    assert reasons(text, grounds) == []


def test_a_generalisation_is_no_figure_year_name_or_negation():
    """'every university in every year' over-claims, but it is none of the four: an AI-labelled
    block may generalise (facts never hold the model's words, and chat_spans refuses it as a fact)."""
    assert reasons("Every university in every year enrolled many students.", [ENROLMENT_EN]) == []


# --------------------------------------------------------------------------- figures and years


@pytest.mark.parametrize(
    "text, grounds, expected",
    [
        ("Students who quizzed retained 72 percent.", [STUDY], ("novel_figure", "72 percent")),
        ("Dropout fell by 3% after the outreach.", [DROPOUT], ("novel_figure", "3%")),
        ("Dropout fell by 3 percent.", [DROPOUT], ("novel_figure", "3 percent")),
        ("ACME's revenue was USD 35.08 million.", [REVENUE], ("novel_figure", "USD 35.08 million")),
        ("ACME's revenue was NT$35,082,000,000.", [REVENUE], ("novel_figure", "NT$35,082,000,000")),
        ("Revenue was about USD 36 billion.", [REVENUE], ("novel_figure", "USD 36 billion")),
        ("Students took four short practice quizzes.", [STUDY], ("novel_figure", "four")),
        ("該校有二十萬名學生。", [ENROLMENT_ZH], ("novel_figure", "二十萬")),
        ("其中四成來自外縣市。", [ENROLMENT_ZH], ("novel_figure", "四成")),
        ("其中百分之三十五來自外縣市。", [ENROLMENT_ZH], ("novel_figure", "百分之三十五")),
        (
            "The gap between the groups is 21 percentage points.",
            [STUDY],
            ("novel_figure", "21 percentage points"),
        ),
        ("Advisers contacted 96 students.", [DROPOUT], ("novel_figure", "96")),
        ("This is covered in week 5 of the course.", [HANDOUT], ("novel_figure", "5")),
        ("這在第五週討論。", [HANDOUT], ("novel_figure", "五")),
        ("In 2012 the university enrolled 100,000 students.", [ENROLMENT_EN], ("novel_year", "2012")),
        ("二〇一二年，該校有十萬名學生。", [ENROLMENT_ZH], ("novel_year", "二〇一二年")),
        ("民國101年，該校有十萬名學生。", [ENROLMENT_ZH], ("novel_year", "民國101年")),
        ("The study ran in 2019.", [STUDY], ("novel_year", "2019")),
        ("ACME's FY2024 revenue was USD 35.08 billion.", [REVENUE], ("novel_year", "FY2024")),
        ("ACME's revenue for FY2025Q4 was USD 35.08 billion.", [REVENUE], ("novel_figure", "4")),
        ("ACME 2025 財年第四季營收為 350.8 億美元。", [REVENUE], ("novel_figure", "四")),
    ],
)
def test_a_figure_or_year_that_the_spans_lack_is_novel(text, grounds, expected):
    assert expected in reasons(text, grounds)


def test_a_figure_may_come_from_any_of_the_cited_spans_but_not_from_elsewhere():
    assert (
        reasons("62 percent of quizzing students and 100,000 students in 2011.", [STUDY, ENROLMENT_EN]) == []
    )
    assert ("novel_year", "2011") in reasons(
        "62 percent of quizzing students and 100,000 students in 2011.", [STUDY]
    )


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "text, grounds, expected",
    [
        ("Harvard abolished final exams after this study.", [STUDY], ("novel_name", "Harvard")),
        ("The study at Stanford found that quizzes help.", [STUDY], ("novel_name", "Stanford")),
        ("According to OECD, learning analytics is data about learners.", [LA], ("novel_name", "OECD")),
        ("GPT4 measures learners, says the passage.", [LA], ("novel_name", "GPT4")),
        ("國立成功大學的研究團隊分析了三所大學的資料。", [NTU], ("novel_name", "國立成功大學")),
        ("王小明教授指出學習分析可以改善學習。", [LA_ZH], ("novel_name", "王小明教授")),
        ("「布魯姆」認為學習分析可以改善學習。", [LA_ZH], ("novel_name", "布魯姆")),
        ("教育部規定學習分析必須改善學習。", [LA_ZH], ("novel_name", "教育部")),
    ],
)
def test_a_name_that_the_spans_lack_is_novel(text, grounds, expected):
    assert expected in reasons(text, grounds)


def test_what_counts_as_a_name():
    assert latin_names("However, Bloom's taxonomy and the IRB matter. Importantly, iPhone users differ.") == [
        "Bloom",
        "IRB",
        "iPhone",
    ]
    assert latin_names("Harvard enrolled students.") == ["Harvard"]
    assert latin_names("Students enrolled.", at_start=True) == ["Students"]
    assert cjk_names("「數位教學設計」由國立臺灣師範大學與教育部合作，王小明教授主持。") == [
        "數位教學設計",
        "國立臺灣師範大學",
        "教育部",
        "王小明教授",
    ]
    assert cjk_names("全部的學生與內部的資料") == []


# --------------------------------------------------------------------------- negation


@pytest.mark.parametrize(
    "text, grounds",
    [
        ("It is false that learning analytics is the measurement of data about learners.", [LA]),
        ("Learning analytics is not the measurement of data about learners.", [LA]),
        ("Learning analytics never reports data about learners.", [LA]),
        ("Learning analytics doesn't collect data about learners.", [LA]),
        ("Predictions are not probabilities.", [PREDICTIONS]),  # a negation moved to other words
        ("Predictions are verdicts.", [PREDICTIONS]),  # a negation dropped
        ("A flagged student should be penalised because of the flag.", [PREDICTIONS]),
        ("學習分析並非蒐集學習者資料的做法。", [LA_ZH]),
        ("學習分析沒有蒐集學習者的資料。", [LA_ZH]),
        ("學習分析的說法是錯誤的。", [LA_ZH]),
        ("分類結果可作為評分依據。", [GRADING_ZH]),  # 不 dropped
    ],
)
def test_a_negation_added_moved_or_dropped_is_novel(text, grounds):
    assert any(reason == "novel_negation" for reason, _ in reasons(text, grounds))


def test_words_that_only_look_negative_are_not_negations():
    assert not negates("學生的背景不同，未來可能非常不斷地改變，無論是否未成年")
    assert negates("不是") and negates("isn't") and negates("It is false") and negates("並未")


# --------------------------------------------------------------------------- translations


@pytest.mark.parametrize(
    "original, translation",
    [
        (ENROLMENT_EN, "二〇一一年，該大學招收了十萬名學生。"),
        ("In 2011 the university enrolled 100,000 students, 30% of them from other counties.",
         "2011年，該大學招收了100,000名學生，其中三成來自外縣市。"),
        ("The revised Bloom's taxonomy (Anderson and Krathwohl, 2001) orders cognitive processes.",
         "修訂版 Bloom 分類法（Anderson 與 Krathwohl，2001）將認知歷程排序。"),
        (IRB, "使用學生資料的研究須在蒐集資料前經研究倫理審查委員會（IRB）審查。"),
        ("修訂版 Bloom 認知層次由低到高分為六層。", "The revised Bloom taxonomy has six levels, from low to high."),
        (ENROLMENT_ZH, "In 2011 the school had 100,000 students, 30 percent of them from other counties."),
        ("This is covered in week 3.", "這在第三週討論。"),
        (DROPOUT, "顧問聯絡了 120 名被標記學生中的 95 名之後，輟學率下降了 3 個百分點。"),
    ],
)  # fmt: skip
def test_a_translation_that_keeps_every_number_and_name_passes(original, translation):
    assert translation_keeps(original, translation) == []


@pytest.mark.parametrize(
    "original, translation, token",
    [
        (ENROLMENT_EN, "二〇一一年，該大學招收了一萬名學生。", "100,000"),
        (ENROLMENT_EN, "二〇一一年，該大學招收了一萬名學生。", "一萬"),
        (ENROLMENT_EN, "二〇一二年，該大學招收了十萬名學生。", "2011"),
        (ENROLMENT_EN, "該大學招收了十萬名學生。", "2011"),
        (DROPOUT, "顧問聯絡了 120 名被標記學生中的 95 名之後，輟學率下降了 3%。", "3 percentage points"),
        ("The revised Bloom's taxonomy (Anderson and Krathwohl, 2001) orders cognitive processes.",
         "修訂版 Bloom 分類法（Anderson，2001）將認知歷程排序。", "Krathwohl"),
        (LA, "哈佛大學的 Harvard 研究指出，學習分析是測量學習者資料的做法。", "Harvard"),
        ("修訂版 Bloom 認知層次由低到高分為六層。", "The revised taxonomy has six levels.", "Bloom"),
    ],
)  # fmt: skip
def test_a_translation_that_loses_or_adds_a_number_or_a_name_is_not_shown(original, translation, token):
    assert ("lost_numbers", token) in translation_keeps(original, translation)


# --------------------------------------------------------------------------- properties

_PIECES = st.sampled_from(
    [
        STUDY, ENROLMENT_ZH, ENROLMENT_EN, PREDICTIONS, GRADING_ZH, LA, LA_ZH, IRB, DROPOUT, REVENUE, NTU,
        "Week 3 ", "第三", "Harvard ", "「布魯姆」", "not ", "不", "2019 ", "3.5 million ", "[1] ",
    ]
)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_PIECES, min_size=1, max_size=6).map(" ".join))
def test_a_text_is_never_novel_against_itself_and_keeps_itself(text):
    assert novel(text, [text]) == []
    assert translation_keeps(text, text) == []


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.sampled_from([STUDY, LA, IRB, DROPOUT, ENROLMENT_EN]), min_size=1, max_size=3),
    st.integers(1000, 9999),
)
def test_a_number_that_no_span_states_is_always_novel(grounds, n):
    text = f"The passages report {n} participants."
    if not any(str(n) in g.replace(",", "") for g in grounds):
        assert any(reason in ("novel_figure", "novel_year") for reason, _ in novel(text, grounds))
