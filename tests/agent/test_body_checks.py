"""The body's code checks (agent/engine/body.py), each on its own: words, names and numbers,
the engine's figure tables and the fallback body. The same checks on the real stack:
tests/research/test_planted_statements.py."""

from __future__ import annotations

from agent.engine.answer import segments
from agent.engine.body import claims_body, figure_table, novel_names, novel_words, same_text
from agent.engine.claims import Claim

ROSE = "Enrolment rose 15% over the previous year"


def test_a_unit_may_use_only_its_claims_words_in_english_and_chinese():
    assert novel_words("Enrolment rose 15% over the previous year.", [ROSE]) == []
    assert novel_words("Enrolments rose by 15% over the previous year.", [ROSE]) == []  # stem, grammar
    assert novel_words("Did Quillanor fund the course?", [ROSE]) == ["quillanor", "fund", "course"]
    assert novel_words("Enrolment fell 15% over the previous year.", [ROSE]) == ["fell"]
    assert novel_words("Enrolment rose 15% over the previous year in 2019.", [ROSE]) == ["2019"]
    # dropping a negation adds no word, and still turns the claim into its opposite
    assert novel_words("Enrolment did rise by 15%.", ["Enrolment did not rise by 15%"]) == ["(negation)"]
    assert novel_words("註冊人數比前一年增加15%。", ["註冊人數比前一年增加15%"]) == []
    assert novel_words("註冊人數比前一年減少15%。", ["註冊人數比前一年增加15%"]) == ["減", "少"]
    assert novel_words("由普萊薩瑞資助。", ["註冊人數比前一年增加15%"])  # a planted name


def test_a_judgement_may_reason_freely_but_names_and_numbers_come_from_its_claims():
    claims = ["The course enrolled 1,200 students in 2023"]
    assert novel_names("The course should probably grow next year.", claims) == []
    assert novel_names("The Drevanholt plan will succeed.", claims) == ["Drevanholt"]
    assert novel_names("Ostrelle donates 555 million.", claims) == ["Ostrelle", "555"]
    assert novel_names("本課程應該擴大。", ["本課程在2023年招收了1,200名學生"]) == []
    assert novel_names("德雷萬霍特計畫必將成功。", ["本課程在2023年招收了1,200名學生"]) == [
        "德雷萬霍特計畫必"
    ]


def test_headings_questions_short_sentences_and_table_labels_are_all_units():
    parts = segments(
        "## A heading\n\nUp 90%. [c1]\n\nWhy? [c1]\n\n| Label | Value |\n|---|---|\n| Row | 3 [c2] |\n"
    )
    units = [(p.claim, p.heading, p.sentence, p.role) for p in parts if p.unit]
    assert units == [
        ("A heading", True, False, ""),
        ("Up 90%.", False, True, ""),
        ("Why?", False, True, ""),
        ("Label", False, False, "header"),
        ("Value", False, False, "header"),
        ("Row", False, False, "label"),
        ("3", False, False, ""),
    ]
    header, label = (
        parts[[p.claim for p in parts].index("Label")],
        parts[[p.claim for p in parts].index("Row")],
    )
    assert header.context_claim_ids == [2] and label.context_claim_ids == [
        2
    ]  # they stand for their table's / row's


def test_a_table_of_figures_is_rendered_from_the_figure_claims_fields():
    claims = [
        Claim(
            1,
            "NVIDIA revenue was USD 35.08 billion",
            "figure",
            [1],
            entity="NVIDIA",
            metric="revenue",
            period="Q3 FY2025",
            value=35.08,
            unit="USD billion",
        ),
        Claim(
            2,
            "Apple revenue was USD 94.93 billion",
            "figure",
            [2],
            entity="Apple",
            metric="revenue",
            period="FY2024Q4",
            value=94.93,
            unit="USD billion",
        ),
        Claim(3, "A fact", "fact", [1]),
    ]
    assert figure_table(claims) == (
        "| | revenue |\n|---|---|\n"
        "| NVIDIA · Q3 FY2025 | 35.08 USD billion [c1] |\n"
        "| Apple · FY2024Q4 | 94.93 USD billion [c2] |\n"
    )
    assert figure_table(claims[2:]) == ""


def test_the_fallback_body_groups_the_verified_claims_under_the_sub_questions():
    claims = [
        Claim(1, "Bloom's taxonomy orders cognitive skills", "fact", [1]),
        Claim(2, "RAG grounds answers", "fact", [2]),
    ]
    body = claims_body(claims, ["What does RAG do?", "How does Bloom's taxonomy order skills?"], "en")
    assert body == (
        "## What does RAG do?\n\n- RAG grounds answers [c2].\n\n"
        "## How does Bloom's taxonomy order skills?\n\n- Bloom's taxonomy orders cognitive skills [c1].\n"
    )
    assert same_text("RAG grounds answers [c2].", "RAG grounds answers")
