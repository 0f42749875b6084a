"""A research completes end to end (real Celery worker, database, the real openai client over
HTTP) against servers that lack strict json_schema output or native tool calls, each reproduced
by a switch of the scripted server. Each case gets a fresh server and worker: what a server
refused is remembered per process, server and model."""

from __future__ import annotations

import json

import pytest

from research.models import ResearchTask
from research.services import lifecycle
from research.tasks import execute_research_task
from tests.support import stack
from tests.support.scripted_llm import Scenario, ScriptedLLM
from tests.support.stack import wait_for

pytestmark = pytest.mark.slow

# The words match the fake OpenAlex papers (tests/conftest.py), which become the citations.
QUESTION = "Compare learning analytics dashboards with question generation by Bloom's taxonomy"

# name -> quirks of the server, and what the engine must end up sending to it
CASES = {
    "json_schema refused with 400": (("json_schema_400",), "json_object"),
    "json_schema refused with 500 and a message": (("json_schema_500",), "json_object"),
    "json_object refused too": (("json_schema_400", "json_object_refused"), None),
    "json_object ignored (prose around the JSON)": (
        ("json_schema_400", "json_object_ignored"),
        "json_object",
    ),
    "no native tool calls": (("no_tool_calls",), "json_schema"),
    "llama-cpp-python (500 refusal, no tool calls)": (("json_schema_500", "no_tool_calls"), "json_object"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_research_completes_against_a_server_with_this_quirk(
    case, transactional_db, personas, llm, fake_openalex, django_capture_on_commit_callbacks
):
    from tests.conftest import outside_world_env

    quirks, settled_format = CASES[case]
    # the demo channel of `personas` has no materials: the papers of the fake OpenAlex are the evidence
    server = ScriptedLLM(Scenario(preferred_tools=["search_external_papers"])).start().quirk(*quirks)
    worker = stack.start_worker(queues="quirks", **outside_world_env(server, fake_openalex))
    try:
        with django_capture_on_commit_callbacks(execute=False):
            task, _ = lifecycle.task_start(
                user=personas.student, channel=personas.channel, question=QUESTION, queue=False
            )
        execute_research_task.apply_async((task.pk,), queue="quirks")
        wait_for(
            lambda: ResearchTask.objects.get(pk=task.pk).is_terminal,
            timeout=90,
            message="the research to end",
        )
    finally:
        worker.stop()
        server.stop()
    task.refresh_from_db()

    assert task.status == "completed", f"{task.error}\n{worker.log()[-3000:]}"
    assert task.citations_json and task.report_json["facts"]
    assert task.steps.filter(status="ok").count() >= 2  # tools really ran
    structured = [c for c in server.calls() if c["_role"] in ("reflection", "selector", "interpreter")]
    assert structured and {(c.get("response_format") or {}).get("type") for c in structured} == {
        settled_format
    }
    if settled_format != "json_schema":
        # every structured call after the refusal carries its schema in the prompt
        assert all(
            '"$schema"' in c["messages"][0]["content"] or "JSON Schema" in c["messages"][0]["content"]
            for c in structured
        )
    if settled_format == "json_object":
        assert all(
            c["response_format"].get("schema") for c in structured
        )  # grammar-constrained servers use it
    if "no_tool_calls" in quirks:
        tool_requests = [c for c in server.calls("action") if c.get("tools")]
        assert len(tool_requests) == 1  # asked natively once, then as JSON
        as_json = [c for c in server.calls("action") if not c.get("tools")]
        assert as_json and "<tools>" in as_json[0]["messages"][0]["content"]
        names = {
            t["name"]
            for t in json.loads(
                as_json[0]["messages"][0]["content"].split("<tools>\n")[1].split("\n</tools>")[0]
            )
        }
        assert set(task.steps.values_list("tool_name", flat=True)) <= names
