"""The text renderings of a report (research/report_text.py) say what the page says, in the
reader's language, and mark the AI's words the same way: the Markdown download, the API's answer
and report, the terminal answer of `manage.py deep_research`, the notification e-mail and the chat
log row a research leaves. Every string the model wrote is inside a blockquote headed by the AI's
label and none is outside (tests/support/model_blocks.py); nothing verified still says why, lists
the sources consulted and the AI's suggested questions."""

from __future__ import annotations

import io
import json

import pytest
from django.core import mail
from django.utils import translation

from channels_app.models import ChatLog
from research.management.commands.deep_research import Command
from research.services import notifications
from tests.support import report_examples as X
from tests.support.model_blocks import ZH_LABEL, check_text, text_outside_model

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hant"}


def download(client, task, headers) -> str:
    response = client.get(f"/deep_research/task/{task.task_uuid}/answer.md", **headers)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    return response.content.decode()


def sections(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("## ")]


def test_the_markdown_download_quotes_the_facts_and_labels_the_ais_words(client, personas):
    report = X.english_report()
    task = X.stored_report(personas.student, personas.channel, report)
    client.force_login(personas.student)
    text = download(client, task, EN)
    assert sections(text) == [
        "## Facts from the sources",
        "## Conflicts between sources",
        "## Hypotheses",
        "## Judgement",
        "## Counter-evidence",
        "## The AI’s interpretation",
        "## Questions the AI suggests",
        "## Limitations",
        "## The question in the materials' languages",
        "## Not shown",
        "## Sources",
        "## Also consulted",
    ]
    assert "### Sub-question 1" in text and "### Sub-question 2" in text
    assert (
        "- “In 2019, **120,000** students enrolled in at least one online course. "
        "In 2021, **310,000** students enrolled in at least one online course.” [1]"
    ) in text
    assert "- Computed: Growth from 120,000 (2019) to 310,000 (2021): +158.33% [1]" in text
    assert "(selected by search ranking)" in text
    assert "**The sources give different figures (number) for 2021** — unresolved" in text
    assert "Hypothesis 2: facts for and against it (1 fact tagged for it, 1 against)" in text
    assert "**the evidence is mixed** (Hypothesis 2)" in text
    assert "2. Week 3: Online learning — <http://testserver/channels/course-a/materials/12/#p3>" in text
    check_text(text, X.model_words(report))
    assert "exams are abolished" not in text
    # the plan's translation of the question, as the AI's
    assert "> - Chinese: 線上課程修課人數的變化" in text


def test_the_chinese_download_is_worded_in_chinese(client, personas):
    report = X.chinese_report()
    task = X.stored_report(personas.student, personas.channel, report)
    client.force_login(personas.student)
    text = download(client, task, ZH)
    assert "## 來源中的事實" in text and "### 子問題 1" in text
    assert (
        "“2023年，有**百分之四十五**的大學生曾使用生成式AI。2024年，這個比例上升到**百分之七十二**。” [1]"
        in text
    )
    assert "差：+27 個百分點" in text
    check_text(text, X.model_words(report), label=ZH_LABEL)


@pytest.mark.parametrize("language, headers, label", [("en", EN, None), ("zh", ZH, ZH_LABEL)])
def test_nothing_verified_says_why_lists_the_sources_and_offers_narrower_questions(
    client, personas, language, headers, label
):
    report = X.nothing_verified_report(language)
    task = X.stored_report(personas.student, personas.channel, report)
    client.force_login(personas.student)
    text = download(client, task, headers)
    why = "The AI could not choose passages" if language == "en" else "AI 無法從找到的來源中選出段落"
    assert why in text
    assert "<http://testserver/channels/course-a/materials/12/#p3>" in text and f"<{X.UNCITED_URL}>" in text
    for question in X.NOTHING_SUGGESTIONS[language]:
        assert question.replace("?", "?") in text.replace("\\", "")
    check_text(text, X.model_words(report), label=label, shown=report.suggestions.items)
    # the API's answer carries the same, in the requester's language
    answer = client.get(f"/api/deep_research/task/{task.task_uuid}", **headers).json()["answer"]
    assert why in answer and X.UNCITED_URL in answer
    check_text(answer, X.model_words(report), label=label, shown=report.suggestions.items)


def test_the_api_answers_in_the_requesters_language_and_serves_the_typed_report(client, personas):
    report = X.english_report()
    task = X.stored_report(personas.student, personas.channel, report)
    client.force_login(personas.student)
    english = client.get(f"/api/deep_research/task/{task.task_uuid}", **EN).json()["answer"]
    chinese = client.get(f"/api/deep_research/task/{task.task_uuid}", **ZH).json()["answer"]
    assert "## Facts from the sources" in english and "## 來源中的事實" in chinese
    check_text(english, X.model_words(report))
    check_text(chinese, X.model_words(report), label=ZH_LABEL)
    served = client.get(f"/api/deep_research/task/{task.task_uuid}/report", **EN).json()
    assert served == report.to_json()
    # every model-written string sits in an object marked "by": "model"
    outside = {
        k: v for k, v in served.items() if k not in ("plan", "interpretation", "translations", "suggestions")
    }
    for words in X.model_words(report):
        assert words not in json.dumps(outside, ensure_ascii=False), words
    assert all(
        served[block]["by"] == "model" for block in ("plan", "interpretation", "translations", "suggestions")
    )


def test_the_terminal_prints_the_report_in_the_researchs_language(personas):
    report = X.chinese_report()
    task = X.stored_report(personas.student, personas.channel, report)
    out = io.StringIO()
    command = Command(stdout=out)
    with translation.override("en"):  # the operator's shell: the research's language wins
        command._report(task)
    text = out.getvalue()
    assert "## 來源中的事實" in text and "百分之四十五" in text and "status=completed" in text
    check_text(text, X.model_words(report), label=ZH_LABEL)
    nothing = X.stored_report(personas.student, personas.channel, X.nothing_verified_report("en"))
    out = io.StringIO()
    Command(stdout=out)._report(nothing)
    assert "## Nothing could be verified" in out.getvalue() and X.UNCITED_URL in out.getvalue()
    assert X.NOTHING_SUGGESTIONS["en"][0] in out.getvalue().replace("\\", "")


def test_the_email_carries_the_report_with_the_ais_words_labelled(personas, settings):
    notifications.set_email_when_done(personas.student, True)
    report = X.english_report()
    task = X.stored_report(personas.student, personas.channel, report)
    assert notifications.research_finished(task) is True
    (message,) = mail.outbox
    assert f"/deep_research/task/{task.task_uuid}" in message.body
    assert "In 2019, **120,000** students enrolled" in message.body
    check_text(message.body, X.model_words(report))


def test_the_chat_log_row_of_a_research_is_its_report_in_the_researchs_language(personas):
    report = X.chinese_report()
    task = X.stored_report(personas.student, personas.channel, report)
    row = ChatLog.objects.get(deep_research_task=task, kind="response")
    assert row.content == task.final_answer
    assert "## 來源中的事實" in row.content
    check_text(row.content, X.model_words(report), label=ZH_LABEL)
    assert "百分之四十五" in " ".join(text_outside_model(row.content, ZH_LABEL))
