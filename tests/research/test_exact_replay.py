"""Replays on the real stack: a research recorded by a Celery worker against the scripted server,
replayed by `deep_research_replay` exactly (the recorded model answers, no server asked) and
normally (new model answers, compared fact by fact: by their spans and values)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from research.models import ResearchTask, TranscriptEntry
from research.services import lifecycle, replay
from research.tasks import execute_research_task
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for

pytestmark = pytest.mark.slow

QUESTION = "Compare learning analytics dashboards with question generation by Bloom's taxonomy"
RESEARCH_ROLES = {"planner", "action", "reflection", "selector", "interpreter"}


def recorded_research(personas, capture) -> ResearchTask:
    with capture(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION, queue=False
        )
    execute_research_task.delay(task.pk)
    wait_for(lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, timeout=60, message="the research")
    task.refresh_from_db()
    assert task.status == "completed", task.error
    assert task.citations_json and task.transcript.exists()
    return task


def replay_command(original: ResearchTask, admin, *options: str) -> dict:
    from io import StringIO

    out = StringIO()
    call_command(
        "deep_research_replay",
        str(original.task_uuid),
        "--json",
        "--by",
        admin.username,
        *options,
        stdout=out,
    )
    return json.loads(out.getvalue())


def test_an_exact_replay_reproduces_facts_citations_and_body_without_asking_a_model(
    personas, llm, worker, django_capture_on_commit_callbacks
):
    llm.reset(Scenario(preferred_tools=["search_external_papers"]))
    original = recorded_research(personas, django_capture_on_commit_callbacks)
    # The server now answers quite differently: an exact replay must not hear any of it.
    llm.reset(Scenario(sub_questions=2, tools_per_round=1, select_per_call=0, complexity="simple"))

    with django_capture_on_commit_callbacks(execute=False):
        report = replay_command(original, personas.admin, "--exact")

    replayed = ResearchTask.objects.get(task_uuid=report["replay"])
    assert replayed.is_replay and replayed.replay_of_id == original.pk and replayed.status == "completed"
    assert report["mode"] == "exact" and report["reproduced"] is True
    assert report["facts_match"] and report["citations_match"] and report["body_match"]
    assert replayed.report_json == original.report_json and original.report_json["facts"]
    assert replayed.citations_json == original.citations_json
    assert replayed.final_answer == original.final_answer
    assert not [c for c in llm.calls() if c["_role"] in RESEARCH_ROLES]  # no model was asked
    # every recorded answer was used, once, and the replay's own transcript is the same requests
    assert replayed.transcript.count() == original.transcript.count()

    # (as a multiset: the selection's calls run side by side, stored in the order they finished)
    def requests(task):
        return sorted(
            (role, json.dumps(request, sort_keys=True, ensure_ascii=False))
            for role, request in task.transcript.values_list("role", "request")
        )

    assert requests(replayed) == requests(original)
    assert replayed.cost_usd == 0  # recorded answers cost nothing


def test_an_exact_replay_names_the_first_request_its_transcript_does_not_hold(
    personas, llm, worker, django_capture_on_commit_callbacks
):
    llm.reset(Scenario(preferred_tools=["search_external_papers"]))
    original = recorded_research(personas, django_capture_on_commit_callbacks)
    llm.reset()
    # The teacher has since written usage rules: every request now carries them.
    personas.channel.system_prompt = "Answer in a formal register."
    personas.channel.save(update_fields=["system_prompt"])

    with django_capture_on_commit_callbacks(execute=False), pytest.raises(CommandError) as failure:
        replay_command(original, personas.admin, "--exact")
    message = str(failure.value)
    assert "exact replay failed" in message and "a planner request" in message
    assert "transcript entry #1 in message 0 (system)" in message
    assert "usage rules for this channel" in message  # the words that differ are shown
    assert not [c for c in llm.calls() if c["_role"] in RESEARCH_ROLES]
    replayed = ResearchTask.objects.get(replay_of=original)
    assert replayed.status == "failed"


def test_an_exact_replay_fails_loudly_when_an_answer_is_missing_from_the_transcript(
    personas, llm, worker, django_capture_on_commit_callbacks
):
    llm.reset(Scenario(preferred_tools=["search_external_papers"]))
    original = recorded_research(personas, django_capture_on_commit_callbacks)
    TranscriptEntry.objects.filter(task=original, role="interpreter").delete()

    with django_capture_on_commit_callbacks(execute=False), pytest.raises(CommandError) as failure:
        replay_command(original, personas.admin, "--exact")
    assert "interpreter request, and the original's transcript holds none" in str(failure.value)


def test_a_normal_replay_reports_the_fact_set_overlap_with_the_original(
    personas, llm, worker, django_capture_on_commit_callbacks
):
    llm.reset(Scenario(preferred_tools=["search_external_papers"]))
    original = recorded_research(personas, django_capture_on_commit_callbacks)
    facts = len(replay.fact_keys(original))
    assert facts >= 2

    with django_capture_on_commit_callbacks(execute=False):
        same = replay_command(original, personas.admin)
    assert same["mode"] == "normal"
    assert same["facts_overlap"] == {"original": facts, "replay": facts, "shared": facts, "jaccard": 1.0}

    # A new model that selects only the last span it is offered, which the original did not state.
    def the_last_span(body: dict) -> dict:
        from tests.support.scripted_llm import candidates_in

        span_id = candidates_in(body)[-1][0]
        return {
            "content": json.dumps(
                {"facts": [{"span_ids": [span_id], "hypothesis": 0, "stance": "none"}], "contradictions": []}
            )
        }

    llm.on("selector", the_last_span)
    with django_capture_on_commit_callbacks(execute=False):
        other = replay_command(original, personas.admin)
    overlap = other["facts_overlap"]
    assert overlap["original"] == facts and overlap["shared"] < facts
    assert overlap["jaccard"] < 1.0
