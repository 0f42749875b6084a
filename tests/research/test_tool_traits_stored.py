"""Tool traits on the real stack: a research run by the real runner on the test database with
tools of new names counts searches and names the tools of filed figures by the tools' declared
traits, and stores what it found."""

from __future__ import annotations

import pytest

from research.models import ResearchStep
from research.services import lifecycle, runner
from tests.support.scripted_llm import Scenario
from tests.support.trait_tools import FILING, filed_registry, journals_registry


def research(personas, registry, question):
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question=question, queue=False
    )
    runner.execute_task(task.pk, registry=registry)
    task.refresh_from_db()
    assert task.status == "completed", task.error
    return task


def test_a_search_tool_of_a_new_name_is_counted_in_the_stored_counter_search(
    transactional_db, personas, llm, django_capture_on_commit_callbacks
):
    llm.reset(Scenario(complexity="complex", tools_per_round=2))
    with django_capture_on_commit_callbacks(execute=False):
        task = research(personas, journals_registry(), "比較學習分析與布魯姆分類法")
    counter = ResearchStep.objects.filter(task=task, phase="counter_search")
    assert set(counter.values_list("tool_name", flat=True)) == {"lookup_journals", "open_syllabus"}
    assert task.verification_json["counter_searches"] == counter.filter(tool_name="lookup_journals").count()


@pytest.mark.parametrize("exact", [True, False])
def test_a_tool_of_filed_figures_of_a_new_name_is_named_to_the_researcher_and_its_figure_stored(
    transactional_db, personas, llm, django_capture_on_commit_callbacks, exact
):
    llm.reset(Scenario(complexity="simple"))
    with django_capture_on_commit_callbacks(execute=False):
        task = research(personas, filed_registry(exact=exact), "What was NVIDIA's revenue last quarter?")
    (span,) = task.report_json["spans"]
    assert span["text"] == FILING and span["location"] == {"page": "", "start": 0, "end": len(FILING)}
    assert 35_082_000_000 in [v["value"] for v in task.report_json["values"]]
    action = task.transcript.filter(role="action").first().request["messages"][0]["content"]
    assert ("(quarterly_filing)" in action) is exact
