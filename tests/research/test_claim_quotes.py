"""Claims quote their sources, and code checks the quotes: a research through the real Celery
worker, the database and the scripted model, whose claims step plants a claim with a quote that
is in no passage while its verifier agrees with everything."""

from __future__ import annotations

import json
import os

import pytest
from django.apps import apps

from research.models import ResearchTask
from research.services import lifecycle
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for

pytestmark = pytest.mark.slow
PLANTED = "Zqxv"  # a token no passage contains


def finished(task: ResearchTask, timeout: float = 60) -> ResearchTask:
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, timeout=timeout, message="the research"
    )
    task.refresh_from_db()
    return task


def test_a_claim_whose_quote_is_in_no_passage_fails_without_a_model_call_and_stays_out(worker, personas, llm):
    # A writer that writes every claim it is given and a verifier that agrees with everything:
    # only code stands between the planted claim and the report.
    llm.reset(Scenario(cite_per_answer=99, verdict="supported"))

    def extractor(body):
        data = json.loads(llm._default("claims", body, None)["content"])
        source_id = data["claims"][0]["source_ids"][0]
        data["claims"].append(
            {
                "text": f"Enrolment tripled thanks to the {PLANTED} grant",
                "kind": "fact",
                "entity": "",
                "metric": "",
                "period": "",
                "value": None,
                "unit": "",
                "source_ids": [source_id],
                "quotes": [
                    {"source_id": source_id, "text": f"Enrolment tripled thanks to the {PLANTED} grant."}
                ],
                "confidence": 0.99,
            }
        )
        return {"content": json.dumps(data, ensure_ascii=False)}

    llm.on("claims", extractor)
    apps.get_app_config("catalogue").load_demo_data(open(os.devnull, "w"))  # sources for the catalogue tools
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較教育資料科學課程與研究群的主題"
    )
    task = finished(task)
    assert task.status == "completed", task.error

    claims = task.verification_json["evidence_claims"]
    (planted,) = [c for c in claims if PLANTED in c["text"]]
    assert (planted["verdict"], planted["reason"], planted["verified_by"]) == (
        "unsupported",
        "quote_not_found",
        "code",
    )
    assert planted["quotes"][0]["start"] == planted["quotes"][0]["end"] == -1
    # no model read it: not the verifier, not the writer
    asked = json.dumps(
        [c["messages"] for c in llm.calls("verifier") + llm.calls("synthesizer")], ensure_ascii=False
    )
    assert PLANTED not in asked
    # and it is nowhere in what the student reads
    assert PLANTED not in task.final_answer and PLANTED not in json.dumps(
        task.report_json, ensure_ascii=False
    )

    # the faithful claims were located, restate their quotes and were verified by code alone
    faithful = [c for c in claims if PLANTED not in c["text"]]
    assert faithful and all(c["verdict"] == "supported" and c["verified_by"] == "code" for c in faithful)
    observed = {
        s["id"]: s
        for step in task.steps.all()
        for s in (step.result_full or {}).get("sources", [])
        if "id" in s
    }
    for claim in faithful:
        (quote,) = claim["quotes"]
        source = observed[quote["source_id"]]
        text = source["text"] or source["snippet"]
        assert " ".join(text[quote["start"] : quote["end"]].split()) == " ".join(quote["text"].split())
    # each citation of the report shows the span its claims quote, at its offsets in the source
    citations = task.report_json["citations"]
    assert citations
    for citation in citations:
        source = observed[citation["source_id"]]
        location = citation["location"]
        assert (
            citation["quote"]
            and (source["text"] or source["snippet"])[location["start"] : location["end"]]
            == (citation["quote"])
        )
    # the stored citations (the page's and the chat bubble's) carry them too
    assert [c["quote"] for c in task.citations_json] == [c["quote"] for c in citations]
