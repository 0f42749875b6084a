"""A failed check never empties the body, and nothing verified still completes the research
(issues 31 and 32), on the real stack: the runner, the test database, the scripted server and
the result page in the reader's language."""

from __future__ import annotations

import json

import pytest
from django.utils.html import escape

from research.services import lifecycle, runner
from tests.support.corpus_tools import corpus_registry
from tests.support.model_blocks import page_outside_model
from tests.support.scripted_llm import Scenario, claims_in

QUESTION = {
    "en": "Compare learning analytics and Bloom's taxonomy in course design",
    "zh": "比較學習分析與布魯姆分類在課程設計中的角色",
}
LANGUAGE_COOKIE = {"en": "en", "zh": "zh-hant"}


def run_task(personas, capture, lang):
    with capture(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION[lang], queue=False
        )
        runner.execute_task(task.pk, registry=corpus_registry())
    task.refresh_from_db()
    return task


def pairing_writer(body):
    """Two claims per sentence, joined by "while": every word is a claim's, so code lets the
    sentence through and the verifier model must judge it."""
    given = claims_in(body)
    pairs = [given[i : i + 2] for i in range(0, len(given), 2)]
    lines = [
        " while ".join(c["text"] for c in pair) + "".join(f"[{c['id']}]" for c in pair) + "."
        for pair in pairs
    ]
    return {
        "content": json.dumps(
            {
                "answer": "\n\n".join(lines),
                "summary": "",
                "citations": [],
                "conflicts": [],
                "counter_evidence": [],
                "judgement": None,
            }
        )
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_when_the_draft_check_fails_the_body_is_the_verified_claims_with_their_citations(
    client, transactional_db, personas, llm, django_capture_on_commit_callbacks, lang
):
    llm.reset(Scenario(complexity="simple"))
    llm.on("synthesizer", pairing_writer)
    llm.fail("verifier", "http500", times=50)  # the verifier is down for the whole draft check
    task = run_task(personas, django_capture_on_commit_callbacks, lang)
    assert task.status == "completed", task.error
    report = task.report_json
    assert {"code": "draft_check_failed", "detail": {}} in report["limitations"]
    verified = [c for c in task.verification_json["evidence_claims"] if c["verdict"] == "supported"]
    assert len(verified) >= 2
    body = "\n".join(f["text"] for f in report["findings"])
    # every verified claim, under a sub-question of the plan, each with its citation
    for claim in verified:
        assert claim["text"] in body
    sub_questions = [sq["question"] for sq in task.plan_json["sub_questions"]]
    assert report["findings"] and all(f["heading"] in sub_questions for f in report["findings"])
    assert report["citations"] and all(f"[{c['id']}]" in body for c in report["citations"])
    assert " while " not in body  # the writer's unchecked sentences are not the body

    client.force_login(personas.student)
    client.cookies["django_language"] = LANGUAGE_COOKIE[lang]
    html = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    said = {"en": "Facts from the sources", "zh": "來源中的事實"}[lang]
    quotes = [c["quote"] for c in report["citations"] if c["quote"]]
    assert said in html and quotes and escape(quotes[0]) in html  # the facts: the sources' words
    assert " while " not in page_outside_model(html)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_when_nothing_can_be_verified_the_research_completes_and_says_so_in_the_readers_language(
    client, transactional_db, personas, llm, django_capture_on_commit_callbacks, lang
):
    llm.reset(Scenario(complexity="simple", verdict="unsupported", reword_claims=True))
    task = run_task(personas, django_capture_on_commit_callbacks, lang)
    assert task.status == "completed", task.error
    assert llm.calls("synthesizer") == []
    report = task.report_json
    (limitation,) = [x for x in report["limitations"] if x["code"] == "no_verified_claims"]
    assert report["findings"] == [] and report["summary"] == ""
    # the stored answer is not empty: it says so, in the research's language
    assert {"en": "## Nothing could be verified", "zh": "## 無法驗證任何內容"}[lang] in task.final_answer
    consulted = [s["title"] for s in limitation["detail"]["sources"]]
    assert "Learning analytics overview" in consulted

    client.force_login(personas.student)
    client.cookies["django_language"] = LANGUAGE_COOKIE[lang]
    html = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    said = {
        "en": "No passage of the sources could be verified as answering the question",
        "zh": "找到的來源中沒有任何段落能被驗證為回答了這個問題",
    }[lang]
    assert said in html
    consulted_list = html.split('<ul class="consulted">')[1].split("</ul>")[0]
    assert all(f">{escape(title)}</a>" in consulted_list for title in consulted)  # links to their passages
