"""A failed check never empties the body, and nothing verified still completes the research
(issues 31 and 32), on the real stack: the runner, the test database, the scripted server and
the result page in the reader's language."""

from __future__ import annotations

import json

import pytest
from django.utils.html import escape

from research.services import lifecycle, runner
from tests.support.corpus_tools import corpus_registry
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
    said = {
        "en": "The written answer could not be checked, so the report shows the verified claims themselves.",
        "zh": "撰寫的答案無法查核，因此本報告直接列出已驗證的主張。",
    }[lang]
    assert said in html and verified[0]["text"] in html


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
    assert task.final_answer == "" and report["findings"] == [] and report["summary"] == ""
    consulted = [s["title"] for s in limitation["detail"]["sources"]]
    assert "Learning analytics overview" in consulted

    client.force_login(personas.student)
    client.cookies["django_language"] = LANGUAGE_COOKIE[lang]
    html = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    said = {
        "en": "No statement could be verified from the sources found.",
        "zh": "從找到的來源中，沒有任何陳述能獲得驗證。",
    }[lang]
    assert said in html
    assert all(escape(title) in html for title in consulted)
