"""What a real local model server does to a research, reproduced by the scripted
server through the real openai client: a slow model that streams steadily, a server that goes
silent, a context window of 4,096 tokens, chat-template tokens in replies, and a weak model's
failed plan and action turns. The cases that matter end to end run a research on the real stack
(Celery worker, PostgreSQL, the client over HTTP)."""

from __future__ import annotations

import time

import pytest

from agent.engine.llm import (
    LLMClient,
    LLMConfig,
    LLMMalformed,
    LLMUnavailable,
    UsageMeter,
    fit_prompt,
    template_tokens_in,
)
from research.models import ResearchTask
from research.services import lifecycle
from research.tasks import execute_research_task
from tests.support import stack
from tests.support.scripted_llm import CONTEXT_WINDOW, Scenario, ScriptedLLM, prompt_tokens
from tests.support.stack import wait_for

QUESTION = "Compare learning analytics dashboards with question generation by Bloom's taxonomy"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
ASK = [{"role": "system", "content": "You are a helper."}, {"role": "user", "content": "Say something long."}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_external_papers",
            "description": "Search papers.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]


@pytest.fixture
def server():
    server = ScriptedLLM().start()
    yield server
    server.stop()


def client(server, **config) -> LLMClient:
    settings = dict(models={"default": "local"}, base_url=server.url, api_key="x", max_retries=0)
    return LLMClient(LLMConfig(**(settings | config)), UsageMeter())


def long_answer(body) -> dict:
    return {"content": '{"answer": "' + "slow and steady " * 20 + '"}'}


# ---------------------------------------------------------------------- slow is not dead


def test_a_reply_streamed_slowly_but_steadily_for_longer_than_the_silence_limit_succeeds(server):
    server.scenario.chunk_chars, server.scenario.chunk_seconds = 20, 0.25  # 17 chunks, ~4 s
    server.on("chat", long_answer)
    started = time.monotonic()
    data = client(server, silence_seconds=1.0, timeout=30).structured("chat", ASK, SCHEMA, "a")
    assert time.monotonic() - started > 3.0  # three times the silence limit, and still an answer
    assert data["answer"].startswith("slow and steady")


def test_a_server_that_goes_silent_times_out_after_the_silence_limit_not_the_call_limit(server):
    server.scenario.silent_seconds = 20
    server.fail("chat", "silent")
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="went silent for 1 s"):
        client(server, silence_seconds=1.0, timeout=60).structured("chat", ASK, SCHEMA, "a")
    assert time.monotonic() - started < 10


def test_each_attempt_gets_the_configured_limit_not_a_share_of_it(server):
    """Each attempt gets the whole timeout, not a third of it (1 s of 3 here, too short for ~2 s)."""
    server.scenario.chunk_chars, server.scenario.chunk_seconds = 40, 0.2  # ~2 s in all
    server.on("chat", long_answer)
    llm = client(server, silence_seconds=1.0, timeout=3.0, max_retries=2)
    assert llm.structured("chat", ASK, SCHEMA, "a", timeout=3.0)["answer"]
    assert len(server.calls()) == 1


def test_a_streamed_reply_is_assembled_with_its_tool_calls_usage_and_kept_whole_in_the_transcript(server):
    server.scenario.chunk_chars = 3  # tool arguments arrive in pieces
    server.on(
        "action",
        lambda body: {
            "tool_calls": [{"name": "search_external_papers", "arguments": {"query": "dashboards in class"}}]
        },
    )
    recorded = []
    llm = LLMClient(
        LLMConfig(models={"default": "local"}, base_url=server.url, api_key="x", max_retries=0),
        UsageMeter(),
        recorder=recorded.append,
    )
    turn = llm.with_tools("action", [{"role": "system", "content": "You are the researcher"}, ASK[1]], TOOLS)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("search_external_papers", {"query": "dashboards in class"})
    ]
    sent = server.calls()[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    response = recorded[0]["response"]
    assert (
        response["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        == '{"query": "dashboards in class"}'
    )
    assert (
        response["usage"]["prompt_tokens"] > 0
        and llm.meter.total.prompt_tokens == response["usage"]["prompt_tokens"]
    )
    assert recorded[0]["request"]["messages"] == sent["messages"]


def test_a_server_that_streams_no_usage_is_metered_by_estimate(server):
    server.quirk("no_stream_usage")
    server.on("chat", long_answer)
    llm = client(server)
    llm.structured("chat", ASK, SCHEMA, "a")
    assert llm.meter.total.calls == 1
    assert llm.meter.total.prompt_tokens > 0 and llm.meter.total.completion_tokens > 0


# ---------------------------------------------------------------------- template tokens


def test_template_tokens_are_found_where_they_end_a_turn_only():
    assert template_tokens_in("fine<end_of_turn>\n<start_of_turn>user") == [
        "<end_of_turn>",
        "<start_of_turn>",
    ]
    assert template_tokens_in("a<|im_end|>\n<|im_start|>user") == ["<|im_end|>", "<|im_start|>"]
    assert template_tokens_in("done<|eot_id|><|start_header_id|>user") == [
        "<|eot_id|>",
        "<|start_header_id|>",
    ]
    assert template_tokens_in("the answer.</s>") == ["</s>"]
    assert template_tokens_in("HTML has <s>struck</s> text and <|> alone") == []


def test_a_structured_reply_with_template_tokens_is_malformed(server):
    server.fail("chat", "template_tokens")
    server.on("chat", long_answer)
    with pytest.raises(LLMMalformed, match="chat-template tokens"):
        client(server).structured("chat", ASK, SCHEMA, "a")


def test_a_tool_request_answered_with_template_text_steps_down_to_the_json_tool_choice(server):
    server.quirk("tools_as_template_text")
    system = [{"role": "system", "content": "You are the researcher"}, ASK[1]]
    llm = client(server)
    turn = llm.with_tools("action", system, TOOLS)
    assert turn.tool_calls and turn.tool_calls[0].name == "search_external_papers"
    assert not template_tokens_in(turn.content)
    assert [bool(c.get("tools")) for c in server.calls()] == [True, False]
    llm.with_tools("action", system, TOOLS)  # remembered: no more native tool requests
    assert [bool(c.get("tools")) for c in server.calls()] == [True, False, False]


# ---------------------------------------------------------------------- the context window


def test_fit_prompt_cuts_the_middle_of_the_longest_message_and_keeps_room_for_the_answer():
    question = "Student's question:\nWhat do dashboards do?"
    messages = [
        {"role": "system", "content": "You are the planner. " * 20},
        {"role": "user", "content": "Course context. " + "filler words " * 4000 + question},
    ]
    fitted, answer = fit_prompt(messages, None, 6000, 4096)
    assert answer == 4096 // 3
    assert fitted[0] == messages[0]  # the instructions are cut last
    assert fitted[1]["content"].startswith("Course context.") and fitted[1]["content"].endswith(question)
    assert "cut here to fit" in fitted[1]["content"]
    assert prompt_tokens({"messages": fitted}) + answer <= 4096


def test_a_prompt_over_the_window_is_cut_to_fit_what_the_server_reports(server):
    """No window configured: the server's refusal says how big it is, the call is sent again cut
    to it, and later calls are cut at once."""
    server.quirk("context_4096")
    server.on("chat", long_answer)
    big = [ASK[0], {"role": "user", "content": "Observations: " + "dashboards help students " * 1500}]
    llm = client(server)
    assert llm.structured("chat", big, SCHEMA, "a")["answer"]
    assert [prompt_tokens(c) > CONTEXT_WINDOW for c in server.calls()] == [True, False]
    llm.structured("chat", big, SCHEMA, "a")
    assert len(server.calls()) == 3 and prompt_tokens(server.calls()[-1]) <= CONTEXT_WINDOW


# ---------------------------------------------------------------------- on the real stack


def run_on_worker(personas, server, fake_openalex, capture, **env):
    from tests.conftest import outside_world_env

    worker = stack.start_worker(
        queues="realmodel", ready_timeout=180, **(outside_world_env(server, fake_openalex) | env)
    )
    try:
        with capture(execute=False):
            task, _ = lifecycle.task_start(
                user=personas.student, channel=personas.channel, question=QUESTION, queue=False
            )
        execute_research_task.apply_async((task.pk,), queue="realmodel")
        wait_for(
            lambda: ResearchTask.objects.get(pk=task.pk).is_terminal,
            timeout=120,
            message="the research to end",
        )
    finally:
        worker.stop()
    task.refresh_from_db()
    return task, worker


@pytest.mark.slow
def test_a_research_completes_within_a_4096_token_window_with_template_tokens_in_replies(
    transactional_db, personas, fake_openalex, django_capture_on_commit_callbacks
):
    """llama-server with a small model: a 4,096-token context (measured from /props), tool
    requests answered with template text, an interpretation that once writes the next turn
    itself. The papers found have long abstracts: the reflection's prompt that carries them must
    be cut, and the selection shows as many of their spans as fit, uncut."""
    from tests.support.fake_openalex import FakeOpenAlex, work

    long = "Dashboards help students reflect on their learning when the figures are explained. " * 80
    papers = FakeOpenAlex(
        [
            work(
                f"W{i}",
                f"Learning analytics dashboards, study {i}",
                year=2023,
                countries=["tw"],
                abstract=long,
            )
            for i in range(1, 4)
        ]
    ).start()
    server = ScriptedLLM(Scenario(preferred_tools=["search_external_papers"])).start()
    server.quirk("context_4096", "tools_as_template_text")
    server.fail("interpreter", "template_tokens")
    try:
        task, worker = run_on_worker(
            personas, server, papers, django_capture_on_commit_callbacks, UEDU_LLM_SILENCE_SECONDS=5
        )
    finally:
        server.stop()
        papers.stop()
    assert task.status == "completed", f"{task.error}\n{worker.log()[-3000:]}"
    calls = [c for c in server.calls() if c["_role"] != "chat"]
    assert all(prompt_tokens(c) <= CONTEXT_WINDOW for c in calls)  # not one refusal
    assert all(c["max_completion_tokens"] + prompt_tokens(c) <= CONTEXT_WINDOW for c in calls)
    carrying_abstracts = [c for c in calls if c["_role"] == "reflection"]  # the abstracts
    uncut = [
        (c["_role"], prompt_tokens(c))
        for c in carrying_abstracts
        if "cut here to fit" not in str(c["messages"])
    ]
    assert carrying_abstracts and not uncut
    selections = server.calls("selector")
    assert selections and not any("cut here to fit" in str(c["messages"]) for c in selections)
    assert task.steps.filter(status="ok").count() >= 1  # tools ran, chosen as JSON
    assert len(server.calls("interpreter")) == 2  # the reply with template tokens was retried
    assert task.report_json["facts"] and not template_tokens_in(str(task.report_json))


@pytest.mark.slow
def test_a_research_against_a_slow_steady_server_completes_past_the_silence_limit(
    transactional_db, personas, fake_openalex, django_capture_on_commit_callbacks
):
    server = ScriptedLLM(
        Scenario(preferred_tools=["search_external_papers"], chunk_chars=30, chunk_seconds=0.4)
    ).start()
    try:
        task, worker = run_on_worker(
            personas,
            server,
            fake_openalex,
            django_capture_on_commit_callbacks,
            UEDU_LLM_SILENCE_SECONDS=1,
            UEDU_LLM_TIMEOUT_SECONDS=120,
            UEDU_DR_MAX_SECONDS=300,
        )
    finally:
        server.stop()
    assert task.status == "completed", f"{task.error}\n{worker.log()[-3000:]}"
    selection = server.calls("selector")[0]
    assert selection["stream"] is True
    assert task.report_json["facts"]


@pytest.mark.slow
def test_a_failed_action_turn_and_a_failed_plan_end_in_an_answer_not_a_failed_research(
    transactional_db, personas, fake_openalex, django_capture_on_commit_callbacks
):
    """The planner's two replies are malformed: the question becomes the plan. The second action
    turn is cut off at the token limit: the gathering ends with the first turn's sources, the
    failed turn is a step of its own, and the selection and the interpretation still run."""
    server = ScriptedLLM(
        Scenario(preferred_tools=["search_external_papers"], action_rounds=3, sufficient_after=9)
    ).start()
    server.fail("planner", "malformed", times=2)
    answered = []

    def action(body):
        answered.append(1)
        if len(answered) == 2:
            return {"content": "I will now search for", "finish_reason": "length"}
        return server._default("action", body, None)

    server.on("action", action)
    try:
        task, worker = run_on_worker(personas, server, fake_openalex, django_capture_on_commit_callbacks)
    finally:
        server.stop()
    assert task.status == "completed", f"{task.error}\n{worker.log()[-3000:]}"
    assert task.plan_json["sub_questions"] == [{"question": QUESTION, "suggested_tools": []}]
    assert task.stop_reason == "action_failed"
    assert task.steps.filter(status="ok").exists()
    failed = task.steps.get(status="error")
    assert "cut off" in failed.error
    assert server.calls("selector") and server.calls("interpreter") and task.report_json["facts"]
    codes = [item["code"] for item in task.report_json.get("limitations", [])]
    assert "plan_fallback" in codes and "action_failed" in codes


@pytest.mark.slow
def test_a_model_that_cannot_choose_a_tool_still_gets_its_question_searched_by_the_engine(
    transactional_db, personas, fake_openalex, django_capture_on_commit_callbacks
):
    """Every action turn rambles to the token limit (the 270M model on the JSON tool choice): after
    the second, the engine itself runs the plan's sub-question through the best-ranked search tool
    that needs only a query, and the selection and the interpretation run on what it found."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from channels_app.materials import index_material, material_upload
    from tests.support.documents import pdf_bytes

    handout = [
        "Learning analytics dashboards show students their own activity so they can reflect on it.",
        "Question generation by Bloom's taxonomy writes questions at each of the six cognitive levels.",
    ]
    material, _ = material_upload(
        channel=personas.channel,
        user=personas.channel.owner,
        uploaded_file=SimpleUploadedFile("week3.pdf", pdf_bytes(handout)),
        enqueue=False,
    )
    index_material(material.pk)
    server = ScriptedLLM(Scenario(preferred_tools=["search_external_papers"])).start()
    server.on("action", lambda body: {"content": '{"tool": "search_', "finish_reason": "length"})
    try:
        task, worker = run_on_worker(personas, server, fake_openalex, django_capture_on_commit_callbacks)
    finally:
        server.stop()
    assert task.status == "completed", f"{task.error}\n{worker.log()[-3000:]}"
    assert task.stop_reason == "action_failed"
    assert task.steps.filter(status="error").count() == 2  # the two failed turns, each a step
    searched = list(task.steps.exclude(status="error"))
    sub_questions = [sq["question"] for sq in task.plan_json["sub_questions"]]
    assert sorted(s.args["query"] for s in searched) == sorted(sub_questions)
    # The course's own materials rank first (tier "internal", first in the toolbox), and found it.
    assert {s.tool_name for s in searched} == {"search_channel_materials"}
    assert any((s.result_full or {}).get("sources") for s in searched)
    assert server.calls("selector") and server.calls("interpreter") and task.report_json["facts"]
    codes = [item["code"] for item in task.report_json.get("limitations", [])]
    assert "action_failed" in codes and "searched_by_code" in codes


@pytest.mark.slow
def test_a_selection_a_weak_model_cannot_finish_ends_in_facts_the_ranking_chose_not_a_failed_research(
    transactional_db, personas, fake_openalex, django_capture_on_commit_callbacks
):
    """The selection rambles to its token limit twice for every sub-question (the 270M model
    rambled on the claims it had to copy): the research still completes, with the spans the
    search ranking chose, and says why."""
    server = ScriptedLLM(Scenario(preferred_tools=["search_external_papers"])).start()
    server.on("selector", lambda body: {"content": '{"facts": [{"span_ids": ["1.', "finish_reason": "length"})
    try:
        task, worker = run_on_worker(personas, server, fake_openalex, django_capture_on_commit_callbacks)
    finally:
        server.stop()
    assert task.status == "completed", f"{task.error}\n{worker.log()[-3000:]}"
    targets = len(task.plan_json["sub_questions"])
    assert len(server.calls("selector")) == 2 * targets  # each tried again once, then given up
    codes = {item["code"]: item["detail"] for item in task.report_json["limitations"]}
    assert codes["selection_failed"] == {"kind": "truncated", "calls": targets}
    assert "selected_by_search_ranking" in codes
    facts = task.report_json["facts"]
    assert facts and {f["selected_by"] for f in facts} == {"search_ranking"}
    assert task.steps.filter(status="ok").exists()  # what it consulted is kept
