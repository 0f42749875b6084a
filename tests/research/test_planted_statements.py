"""Issue 31 on the real stack: a writer that invents and a verifier that agrees with everything
cannot put one planted statement in the report's body, in English or in Chinese.

The research runs through the real runner on the test database against the scripted server's
`invent` switch (tests/support/planted.py). One statement is planted for each hole, each with its
own token; none may appear in the report's summary, findings (headings, text, claims),
judgement, conflicts or counter-evidence, nor on the rendered result page outside the blocks the
page labels as the AI's words (data-by="model": tests/support/model_blocks.py). The research
still completes with what is verified."""

from __future__ import annotations

import json

import pytest

from research.services import lifecycle, runner
from tests.support.model_blocks import page_outside_model
from tests.support.planted import HOLES, LOSING_VALUE, QUESTION, leaked_holes, planted_registry
from tests.support.scripted_llm import Scenario


@pytest.fixture(params=["en", "zh"])
def planted(request, transactional_db, personas, llm, django_capture_on_commit_callbacks):
    lang = request.param
    llm.reset(Scenario(complexity="simple", invent=lang, asks_for_judgement=True))
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION[lang], queue=False
        )
        runner.execute_task(task.pk, registry=planted_registry(lang))
    task.refresh_from_db()
    return lang, task


def body_of(report: dict) -> dict:
    return {
        "summary": report["summary"],
        "findings": report["findings"],
        "judgement": report["judgement"],
        "conflicts": report["conflicts"],
        "counter_evidence": report["counter_evidence"],
    }


def test_no_planted_statement_reaches_the_report_and_the_research_completes(planted):
    lang, task = planted
    assert task.status == "completed", task.error
    report = task.report_json
    for section, content in body_of(report).items():
        text = json.dumps(content, ensure_ascii=False)
        leaked = leaked_holes(text, lang)
        assert not leaked, f"{section} carries the planted {leaked}"
    # ... and the research completed with what is verified
    findings = "\n".join(f["heading"] + "\n" + f["text"] for f in report["findings"])
    first = (
        "The course enrolled 1,200 students in 2023" if lang == "en" else "本課程在2023年招收了1,200名學生"
    )
    assert first in findings and report["citations"]
    assert report["judgement"] and report["judgement"]["claim_ids"] == [1, 3]
    # the settled conflict: the losing figure only on its own, non-prevailing side, never in the body
    (conflict,) = [c for c in report["conflicts"] if c["found_by"] == "engine"]
    assert conflict["status"] == "resolved"
    losing = [s for n, s in enumerate(conflict["sides"]) if n != conflict["prevailing_side"]]
    assert [s["value"] for s in losing] == [4321]
    assert losing[0]["quotes"] and LOSING_VALUE in losing[0]["quotes"][0]["text"]
    assert LOSING_VALUE not in json.dumps([report["summary"], report["findings"], report["judgement"]])
    # the writer's conflict had no verified claim on one side: it left, and is listed
    assert [c["found_by"] for c in report["conflicts"]] == ["engine"]
    listed = json.dumps(report["not_verified"], ensure_ascii=False)
    for hole in (
        "heading",
        "short sentence",
        "question",
        "table label",
        "extra clause in a partial unit",
        "judgement",
        "assumption",
        "writer conflict",
        "code block",
    ):
        assert HOLES[lang][hole] in listed, f"the planted {hole} is not listed as not verified"
    kinds = {n["kind"] for n in report["not_verified"]}
    assert {"heading", "sentence", "cell", "judgement", "assumption", "conflict", "code"} <= kinds
    # the claim-level holes were failed by code before any model judged them
    reasons = {c["id"]: c["reason"] for c in task.verification_json["evidence_claims"]}
    assert [reasons[i] for i in (1, 2, 3)] == ["", "", ""]
    assert reasons[4] and reasons[5] and reasons[6] and reasons[7]


def test_no_planted_statement_is_on_the_rendered_page_outside_the_ais_labelled_blocks(
    client, personas, planted
):
    lang, task = planted
    client.force_login(personas.student)
    client.cookies["django_language"] = "en" if lang == "en" else "zh-hant"
    page = client.get(f"/deep_research/task/{task.task_uuid}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "report-not-shown" in html
    html = page_outside_model(html)
    leaked = leaked_holes(html, lang)
    assert not leaked, f"the page shows the planted {leaked}"
    assert ("1,200" in html) and ("superseded" in html if lang == "en" else "已被取代" in html)
