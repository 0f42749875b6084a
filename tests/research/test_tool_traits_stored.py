"""Tool traits on the real stack: a research run by the real runner on the test database with
tools of new names counts searches and checks filed figures by the tools' declared traits, and
stores what it found."""

from __future__ import annotations

import pytest

from research.models import ResearchStep
from research.services import lifecycle, runner
from tests.support.scripted_llm import Scenario
from tests.support.trait_tools import filed_registry, journals_registry, rounded_claim


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
def test_a_tool_of_filed_figures_of_a_new_name_gets_the_exact_check_in_the_stored_report(
    transactional_db, personas, llm, django_capture_on_commit_callbacks, exact
):
    llm.reset(Scenario(complexity="simple"))
    llm.on("claims", rounded_claim)
    with django_capture_on_commit_callbacks(execute=False):
        task = research(personas, filed_registry(exact=exact), "What was NVIDIA's revenue last quarter?")
    (claim,) = task.verification_json["evidence_claims"]
    assert claim["verdict"] == ("unsupported" if exact else "supported")
    assert (claim["reason"] == "figure_not_in_source") is exact
