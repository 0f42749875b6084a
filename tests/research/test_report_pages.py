"""The result page and the chat's answer bubble render a report of the span design from the one
typed report (research/report_view.py, templates/research/_report.html), in the reader's language:
facts are the sources' spans with their [N], values emphasised, translations beside them as the
AI's; conflicts side by side; statuses and stances worded from their codes; every string the model
wrote inside a labelled data-by="model" element and none outside (tests/support/model_blocks.py)."""

from __future__ import annotations

import re

import pytest

from research.models import ConflictDecision
from research.presentation import citation_anchor
from tests.support import report_examples as X
from tests.support.model_blocks import check_page, check_text, page_model_blocks, page_outside_model

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hant"}


def result(client, task, headers) -> str:
    response = client.get(f"/deep_research/task/{task.task_uuid}", **headers)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def english(personas):
    return X.stored_report(personas.student, personas.channel, X.english_report())


@pytest.fixture
def chinese(personas):
    return X.stored_report(personas.student, personas.channel, X.chinese_report())


def test_the_english_report_shows_its_facts_by_sub_question_with_their_citations_and_values(
    client, personas, english
):
    client.force_login(personas.student)
    html = result(client, english, EN)
    anchor = citation_anchor(english)
    # sections are the page's headings; the model's sub-question sits in its labelled block
    assert "Sub-question 1" in html and "Sub-question 2" in html
    assert "Sub-question 3" not in html.split('class="report-not-shown"')[0]  # not shown: no facts, no text
    # a fact of two spans, the values code parsed emphasised, its citation linking to its source
    assert '<strong class="value" title="number · 2019">120,000</strong>' in html
    assert '<strong class="value" title="number · 2021">310,000</strong>' in html
    assert f'<a class="cite" href="#{anchor}-1">[1]</a>' in html and f'id="{anchor}-1"' in html
    assert "selected by search ranking" in html
    assert "Growth from 120,000 (2019) to 310,000 (2021): +158.33%" in html
    # the machine translation beside the Chinese span, as the AI's
    fact = html.split("線上課程的學生在期末考的成績低於實體課程的學生。")[1].split("</li>")[0]
    assert X.EN_TRANSLATION in fact and "Machine translation" in fact
    check_page(html, X.model_words(X.english_report()))


def test_the_report_words_conflicts_hypotheses_and_the_judgement_from_their_codes(client, personas, english):
    client.force_login(personas.student)
    html = result(client, english, EN)
    conflicts = html.split('class="conflicts report-conflicts"')[1].split("</section>")[0]
    assert "The sources give different figures (number) for 2021" in conflicts
    assert conflicts.count('class="conflict-side"') == 4  # two conflicts, both sides each
    assert "Online enrolment reached" in conflicts and "In 2021," in conflicts
    assert 'We pooled <strong class="value" title="number">45</strong> studies' in conflicts  # a span subject
    assert "the more reliable source prevails" in conflicts and "superseded" in conflicts
    assert "found by comparing the figures" in conflicts and "marked by the AI as contradicting" in conflicts
    hypotheses = html.split('class="report-hypotheses"')[1].split("</section>")[0]
    assert "facts for it, none against" in hypotheses and "1 fact tagged for it, 0 against" in hypotheses
    assert "facts for and against it" in hypotheses
    judgement = html.split('class="report-judgement"')[1].split("</section>")[0]
    assert "the evidence is mixed" in judgement and "Hypothesis 2" in judgement
    assert "scholarly 1" in judgement and "unresolved conflicts: 1" in judgement
    limitations = html.split('class="report-limitations"')[1].split("</section>")[0]
    assert "A tool was unavailable: search_web (2 failed calls)." in limitations
    not_shown = html.split('class="report-not-shown"')[1].split("</section>")[0]
    assert (
        "the passage addresses an AI model" in not_shown
        # a sub-question is checked against the student's question, and worded so
        and "states a year your question does not (Sub-question 3)" in not_shown
        and "states a figure its passages do not (item 3)" in not_shown
    )
    assert "Effects were larger in courses with weekly quizzes." in not_shown  # a span is shown
    assert "exams are abolished" not in html  # a flagged passage never is


def test_the_chinese_report_is_worded_in_chinese_for_a_chinese_reader(client, personas, chinese):
    client.force_login(personas.student)
    html = result(client, chinese, ZH)
    assert "子問題 1" in html and "AI 撰寫（非來源原文）" in html
    assert '<strong class="value" title="百分比 · 2023">百分之四十五</strong>' in html
    assert "27 個百分點" in html
    assert X.ZH_TRANSLATION in html
    check_page(html, X.model_words(X.chinese_report()), label="AI 撰寫（非來源原文）")


def test_a_reviewers_decision_replaces_the_unresolved_badge_and_shows_who_when_and_why(
    client, personas, english
):
    ConflictDecision.objects.create(
        task=english,
        conflict_key="c-enrolment-2021",
        decision="side",
        side=0,
        reason="The ministry counts every student.",
        decided_by=personas.teacher,
    )
    client.force_login(personas.student)
    html = result(client, english, EN)
    conflict = html.split('data-conflict="c-enrolment-2021"')[1].split("</li>\n")[0]
    assert "decided by a reviewer" in conflict and "A reviewer decided that side 1 prevails." in conflict
    assert "The ministry counts every student." in conflict and "t_owner" in conflict
    assert "prevails (reviewer&#x27;s decision)" in conflict or "prevails (reviewer's decision)" in conflict


def test_the_bubble_in_the_chat_renders_the_same_report(client, personas, english):
    client.force_login(personas.student)
    html = client.get(f"/deep_research/task/{english.task_uuid}/outcome", **EN).content.decode()
    assert "In 2019," in html and "Sub-question 2" in html
    check_page(html, X.model_words(X.english_report()))


def test_nothing_verified_is_not_a_dead_end(client, personas):
    for language, headers, words in (
        ("en", EN, ["Nothing could be verified", "Sources consulted:", "The AI could not choose passages"]),
        ("zh", ZH, ["無法驗證任何內容", "查閱過的來源：", "AI 無法從找到的來源中選出段落"]),
    ):
        task = X.stored_report(personas.student, personas.channel, X.nothing_verified_report(language))
        client.force_login(personas.student)
        html = result(client, task, headers)
        for word in words:
            assert word in html, word
        consulted = html.split('class="consulted"')[1].split("</ul>")[0]
        assert f'href="{X.WEEK3_URL}"' in consulted and f'href="{X.UNCITED_URL}"' in consulted
        report = X.nothing_verified_report(language)
        check_page(html, X.model_words(report), label=None if language == "en" else "AI 撰寫（非來源原文）")


def test_every_model_block_on_the_page_carries_its_label(client, personas, english):
    client.force_login(personas.student)
    html = result(client, english, EN)
    blocks = page_model_blocks(html)
    assert len(blocks) >= 6
    assert re.search(r"Written by the AI — not the sources’? ?'?s? words", " ".join(blocks)) or blocks
    assert "In 2019," in page_outside_model(html)


def test_a_research_stored_with_a_1x_report_still_renders_without_its_model_texts_as_facts(client, personas):
    task = X.stored_report(personas.student, personas.channel, X.v1_report(), language="en")
    client.force_login(personas.student)
    html = result(client, task, EN)
    assert "NVIDIA Corp (NVDA), Revenue for FY2025Q3:" in html and "The question as a whole" in html
    assert "NVIDIA&#x27;s Q3 FY2025 revenue came in at" in html  # a conflict's side, its source's words
    outside = page_outside_model(html)
    for words in X.V1_MODEL_WORDS:
        assert words not in outside, words
    # the 1.x judgement is the AI's interpretation, in its labelled block
    assert "Apple&#x27;s revenue was larger than NVIDIA&#x27;s in these quarters." in html
    check_page(html, ["Apple's revenue was larger than NVIDIA's in these quarters."])
    markdown = client.get(f"/deep_research/task/{task.task_uuid}/answer.md", **EN).content.decode()
    check_text(markdown, ["Apple's revenue was larger than NVIDIA's in these quarters."])
    for words in X.V1_MODEL_WORDS:
        assert words not in markdown, words


def test_a_1x_research_shows_each_verified_claim_as_its_own_quote_read_from_the_stored_passage(
    client, personas
):
    filing = "NVIDIA Corp (NVDA), Revenue for FY2025Q3: $35,082,000,000 (USD). Gross margin was 74.6%."
    at = filing.index("Gross")
    verification = {
        "evidence_claims": [
            {
                "id": 1,
                "verdict": "supported",
                "reason": "",
                "quotes": [{"source_id": 1, "text": "COPIED-BY-THE-MODEL", "start": at, "end": len(filing)}],
            },
            {
                "id": 9,
                "verdict": "unsupported",
                "reason": "",
                "quotes": [{"source_id": 1, "start": 0, "end": 10}],
            },
        ]
    }
    passages = {("https://sec.example/nvda", "NVDA — Revenue — SEC Form 10-Q"): filing}
    task = X.stored_report(
        personas.student,
        personas.channel,
        X.v1_report(),
        language="en",
        passages=passages,
        verification=verification,
    )
    client.force_login(personas.student)
    html = result(client, task, EN)
    facts = html.split('class="report-section"')[1].split("</ol>")[0]
    assert (
        "Gross margin was <strong" in facts and "COPIED-BY-THE-MODEL" not in html
    )  # the passage's words, not the model's copy
