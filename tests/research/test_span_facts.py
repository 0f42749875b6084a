"""Facts are spans code located: a research through the real Celery worker, the database and the
scripted model, whose selection step names a span that does not exist beside real ones. The
schema refuses it; every fact the report shows is its source's own words at their offsets in
the stored tool result, and every stored citation shows the first span a fact quotes from it."""

from __future__ import annotations

import json
import os

import pytest
from django.apps import apps

from research.models import ResearchTask
from research.services import lifecycle
from tests.support.scripted_llm import Scenario, select_by_overlap
from tests.support.stack import wait_for

pytestmark = pytest.mark.slow
PLANTED = "99.1"  # a span no source has


def finished(task: ResearchTask, timeout: float = 60) -> ResearchTask:
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, timeout=timeout, message="the research"
    )
    task.refresh_from_db()
    return task


def test_a_span_that_does_not_exist_is_refused_and_every_fact_is_its_sources_words(worker, personas, llm):
    llm.reset(Scenario())
    calls = {"n": 0}

    def selector(body):
        calls["n"] += 1
        data = select_by_overlap(body, 4)
        if calls["n"] == 1:  # the first call also names a span it was not shown
            data["facts"].append({"span_ids": [PLANTED], "hypothesis": 0, "stance": "none"})
        return {"content": json.dumps(data)}

    llm.on("selector", selector)
    apps.get_app_config("catalogue").load_demo_data(open(os.devnull, "w"))  # sources for the catalogue tools
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較教育資料科學課程與研究群的主題"
    )
    task = finished(task)
    assert task.status == "completed", task.error
    report = task.report_json
    assert report["facts"] and PLANTED not in json.dumps(report["facts"])
    # the refused reply was asked again (compacted), and answered within the schema
    assert task.verification_json["retries"] == [{"role": "selector", "kind": "malformed"}]
    observed = {
        s["id"]: s
        for step in task.steps.all()
        for s in (step.result_full or {}).get("sources", [])
        if "id" in s
    }
    number_to_id = {s["number"]: s["source_id"] for s in report["sources"]}
    for span in report["spans"]:
        source = observed[number_to_id[span["source"]]]
        text = source["text"] or source["snippet"]
        assert text[span["location"]["start"] : span["location"]["end"]] == span["text"]
    # the stored citations (the page's and the chat bubble's): the first span of each cited source
    first = {}
    facts = {f["id"]: f for f in report["facts"]}
    in_order = [facts[i] for section in report["sections"] for i in section["facts"]] + report["facts"]
    for fact in in_order:
        for span_id in fact["spans"]:
            first.setdefault(fact["source"], next(s["text"] for s in report["spans"] if s["id"] == span_id))
    for citation in task.citations_json:
        assert citation["quote"] == first.get(citation["number"], "")
