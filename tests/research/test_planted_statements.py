"""The adversary on the real stack: a lying model (tests/support/planted.py) plants its lies
through the plan, the selection and the interpretation, in English and in Chinese; the research
runs through the real runner on the test database. No lie reaches a fact on any surface: the
stored report outside the AI's blocks, the stored citations, the verification record, the
ledger rows, the stored events, the task API, the report API, the result page outside
its labelled data-by="model" blocks (tests/support/model_blocks.py); a lie that states a
figure, a year, a name or a negation reaches no surface at all, the AI's blocks included. The
research still completes with what its sources say. (The engine alone: tests/agent/test_adversary.py.)"""

from __future__ import annotations

import json

import pytest

from research.models import ResearchClaim, ResearchEvent
from research.services import lifecycle, runner
from tests.support.model_blocks import EN_LABEL, ZH_LABEL, page_outside_model, text_outside_model
from tests.support.planted import AI_ONLY, QUESTION, leaked_holes, planted_registry
from tests.support.scripted_llm import Scenario

AI_BLOCKS = ("plan", "interpretation", "translations", "suggestions")


@pytest.fixture(params=["en", "zh"])
def planted(request, transactional_db, personas, llm, django_capture_on_commit_callbacks):
    lang = request.param
    llm.reset(Scenario(invent=lang))
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION[lang], queue=False
        )
        runner.execute_task(task.pk, registry=planted_registry(lang))
    task.refresh_from_db()
    return lang, task


def test_no_lie_reaches_a_stored_fact_record_or_row_and_the_research_completes(planted):
    lang, task = planted
    assert task.status == "completed", task.error
    report = task.report_json
    records = {
        "report outside the AI's blocks": {k: v for k, v in report.items() if k not in AI_BLOCKS},
        "citations": task.citations_json,
        "verification record": task.verification_json,
        "ledger": list(ResearchClaim.objects.filter(task=task).values_list("text", "reason")),
        "events": list(ResearchEvent.objects.filter(task=task).values_list("data", flat=True)),
    }
    for where, content in records.items():
        leaked = leaked_holes(json.dumps(content, ensure_ascii=False), lang)
        assert not leaked, f"{where} carries the planted {leaked}"
    ai = json.dumps({k: report[k] for k in AI_BLOCKS}, ensure_ascii=False)
    assert [h for h in leaked_holes(ai, lang) if h not in AI_ONLY] == []
    # ... and the research completed with what its sources say, the handbook over the blog
    texts = [s["text"] for s in report["spans"]]
    assert any("1,200" in t for t in texts) and report["sections"]
    (conflict,) = [c for c in report["conflicts"] if c["found_by"] == "values"]
    assert (
        conflict["status"] == "resolved"
        and conflict["sides"][conflict["prevailing_side"]]["tier"] == "internal"
    )
    assert report["judgement"] is not None
    # each lie is on the ledger as a dropped row with no text
    kinds = set(ResearchClaim.objects.filter(task=task, action="dropped").values_list("kind", flat=True))
    assert {"sub_question", "hypothesis", "reasoning", "assumption", "suggestion", "translation"} <= kinds
    assert (
        not ResearchClaim.objects.filter(task=task, action="dropped", kind="reasoning")
        .exclude(text="")
        .exists()
    )


def test_no_lie_is_served_by_the_api_and_none_stating_a_figure_year_name_or_negation_is_on_the_page(
    client, personas, planted
):
    lang, task = planted
    client.force_login(personas.student)
    for url in (
        f"/api/deep_research/task/{task.task_uuid}",
        f"/api/deep_research/task/{task.task_uuid}/report",
    ):
        served = client.get(url)
        assert served.status_code == 200
        data = served.json()
        data.pop("plan", None)  # the task's working plan and the report's plan block are the AI's
        if "report" in data:
            data["report"] = {k: v for k, v in data["report"].items() if k not in AI_BLOCKS}
        for block in AI_BLOCKS:
            data.pop(block, None)
        if "answer" in data:  # the report's Markdown: the AI's words are in its labelled quotes
            answer = "\n".join(text_outside_model(data.pop("answer"), EN_LABEL))
            data["answer outside the AI's quotes"] = "\n".join(text_outside_model(answer, ZH_LABEL))
        leaked = leaked_holes(json.dumps(data, ensure_ascii=False), lang)
        assert not leaked, f"{url} serves the planted {leaked}"
    client.cookies["django_language"] = "en" if lang == "en" else "zh-hant"
    page = client.get(f"/deep_research/task/{task.task_uuid}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "report-not-shown" in html
    # the ledger lists what was kept out, by kind and reason, in grey: nothing shown is doubtful
    ledger = html[html.index('id="ledger"') :]
    ledger = ledger[: ledger.index("</section>")]
    assert "not-shown" in ledger and "doubtful" not in ledger
    leaked = leaked_holes(page_outside_model(html), lang)
    assert not leaked, f"the page shows the planted {leaked} outside the AI's blocks"
    leaked = [h for h in leaked_holes(html, lang) if h not in AI_ONLY]
    assert not leaked, f"the page shows the planted {leaked}"
