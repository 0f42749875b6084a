"""The LLM client against servers without strict json_schema output or native tool calls (each
reproduced by a quirk of the scripted server), through the real openai client over HTTP."""

from __future__ import annotations

import json

import pytest

from agent.engine.llm import LLMClient, LLMConfig, LLMMalformed, LLMUnavailable, UsageMeter
from tests.support.fake_http import FakeHTTPServer
from tests.support.fake_http import Reply as HTTPReply
from tests.support.scripted_llm import ScriptedLLM

SCHEMA = {
    "type": "object",
    "properties": {
        "level": {"type": "string", "enum": ["remember", "analyze"]},
        "confidence": {"type": "number"},
    },
    "required": ["level", "confidence"],
}
BLOOM = [
    {"role": "system", "content": "Classify the student's question into Bloom's levels."},
    {"role": "user", "content": "Student's question:\nWhy do dashboards help?"},
]
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
ACTION = [
    {"role": "system", "content": "You are the researcher."},
    {"role": "user", "content": "Student's question:\nWhy do dashboards help?"},
]


@pytest.fixture
def server():
    # A fresh server per test: a server's refusals are remembered per base URL and model.
    server = ScriptedLLM().start()
    yield server
    server.stop()


def client(server, max_retries: int = 0) -> LLMClient:
    return LLMClient(
        LLMConfig(
            models={"default": "local-model"},
            base_url=server.url,
            api_key="x",
            timeout=5,
            max_retries=max_retries,
        ),
        UsageMeter(),
    )


def formats(server, role=None) -> list:
    return [(c.get("response_format") or {}).get("type") for c in server.calls(role)]


def test_a_json_schema_refusal_as_http_500_with_a_message_is_recognised_and_remembered(server):
    server.quirk("json_schema_500")
    llm = client(server, max_retries=2)
    assert llm.structured("bloom", BLOOM, SCHEMA, "bloom") == {
        "level": "analyze",
        "confidence": 0.8,
        "rationale": "scripted",
    }
    first = formats(server)
    # the SDK retries a 500 itself; then the refusal is read from the message and json_object follows
    assert first[-1] == "json_object" and set(first[:-1]) == {"json_schema"}
    sent = server.calls()[-1]
    assert sent["response_format"]["schema"] == SCHEMA  # llama.cpp servers turn it into a grammar
    assert json.dumps(SCHEMA) in sent["messages"][0]["content"]  # in the one system message, not a second one
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]

    llm.structured("bloom", BLOOM, SCHEMA, "bloom")
    assert formats(server)[len(first) :] == ["json_object"]  # remembered: never json_schema again


def test_a_plain_http_500_is_still_an_unavailable_server(server):
    server.fail("*", "http500", times=5)
    with pytest.raises(LLMUnavailable, match="HTTP 500"):
        client(server).structured("bloom", BLOOM, SCHEMA, "bloom")
    assert formats(server) == ["json_schema"]  # nothing was learned from a message that names nothing


def test_without_json_object_the_reply_is_json_in_plain_text_validated_against_the_schema(server):
    server.quirk("json_schema_400", "json_object_refused", "json_object_ignored")
    llm = client(server)
    # the scripted server writes "Sure! Here is the JSON you asked for: ```json {…} ``` Anything else?"
    assert llm.structured("bloom", BLOOM, SCHEMA, "bloom")["level"] == "analyze"
    assert formats(server) == ["json_schema", "json_object", None]
    assert json.dumps(SCHEMA) in server.calls()[-1]["messages"][0]["content"]

    server.on("bloom", lambda body: {"content": 'Sure: {"level": "evaluate", "confidence": 0.5}'})
    with pytest.raises(LLMMalformed, match="breaks the schema"):
        llm.structured("bloom", BLOOM, SCHEMA, "bloom")  # JSON found in prose is still validated


def test_a_server_that_answers_tool_requests_with_nothing_is_asked_for_the_choice_as_json(server):
    server.quirk("no_tool_calls")
    server.on(
        "action",
        lambda body: (
            {"tool_calls": [{"name": "search_external_papers", "arguments": {"query": "dashboards"}}]}
            if not any(m["role"] == "assistant" for m in body["messages"])
            else {"content": "DONE"}
        ),
    )
    llm = client(server)

    turn = llm.with_tools("action", ACTION, TOOLS)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("search_external_papers", {"query": "dashboards"})
    ]
    native, as_json = server.calls()
    assert native["tools"] and "tools" not in as_json
    assert "<tools>" in as_json["messages"][0]["content"] and '"query"' in as_json["messages"][0]["content"]
    assert (
        as_json["response_format"]["type"] == "json_schema"
    )  # this server has strict output, only no tool calls

    # The engine appends the call and its result; the next turn goes straight to JSON, with the
    # tool turns written as plain messages this server's chat template understands.
    conversation = [
        *ACTION,
        turn.message,
        {"role": "tool", "tool_call_id": turn.tool_calls[0].id, "content": "<observations>…"},
    ]
    final = llm.with_tools("action", conversation, TOOLS)
    assert final.tool_calls == [] and final.content == "DONE"
    last = server.calls()[-1]
    assert "tools" not in last and [m["role"] for m in last["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
    ]
    assert json.loads(last["messages"][2]["content"])["tool_calls"][0]["name"] == "search_external_papers"
    assert "Result of search_external_papers" in last["messages"][3]["content"]


def test_a_server_that_refuses_tools_is_asked_for_the_choice_as_json(server):
    server.quirk("tools_400")
    turn = client(server).with_tools("action", ACTION, TOOLS)
    assert turn.tool_calls and turn.tool_calls[0].name == "search_external_papers"
    assert [bool(c.get("tools")) for c in server.calls()] == [True, False]


def _completion(message: dict, usage: object) -> bytes:
    return json.dumps(
        {
            "id": "c1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage,
        }
    ).encode()


def test_odd_replies_read_as_what_they_say_and_the_transcript_keeps_them_as_sent():
    """The client reads the server's JSON itself (no SDK response model): arguments sent as an
    object, a call without an id, token counts of the wrong type, content that is not text, a body
    that is not JSON. Each is read as what it says or fails as an LLMError, never a TypeError."""
    from agent.engine.llm import LLMEmpty

    odd_call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "search_external_papers", "arguments": {"query": "dashboards"}},
            }
        ],
    }
    replies = [
        (
            _completion(
                odd_call, {"prompt_tokens": "12", "completion_tokens": 7, "completion_tokens_details": None}
            ),
            "application/json",
        ),
        (
            _completion({"role": "assistant", "content": [{"type": "text", "text": "hi"}]}, None),
            "application/json",
        ),
        (b"upstream proxy error", "text/plain"),
        (b'{"choices": "none"}', "application/json"),
    ]

    def next_reply(request) -> HTTPReply:
        body, content_type = replies.pop(0)
        return HTTPReply(body=body, headers={"Content-Type": content_type})

    # Raw bytes on the wire: replies no well-behaved server sends, which the scripted server never does.
    with FakeHTTPServer() as raw:
        raw.route("/v1/chat/completions", next_reply)
        recorded: list[dict] = []
        llm = LLMClient(
            LLMConfig(
                models={"default": "m"},
                base_url=f"{raw.url}/v1",
                api_key="x",
                timeout=5,
                max_retries=0,
                prices={"m": [1.0, 2.0]},
            ),
            UsageMeter(),
            recorder=recorded.append,
        )
        turn = llm.with_tools("action", ACTION, TOOLS)
        assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
            ("call_0", "search_external_papers", {"query": "dashboards"})
        ]
        # A token count that is not a number counts as none, the details' absence as no reasoning.
        usage = llm.meter.total
        assert (usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens, usage.calls) == (
            0,
            7,
            0,
            1,
        )
        assert usage.cost_usd == pytest.approx(7 * 2.0 / 1_000_000)
        # The transcript keeps the reply as the server sent it.
        assert recorded[0]["response"]["choices"][0]["message"] == odd_call
        assert recorded[0]["response"]["usage"]["prompt_tokens"] == "12"

        with pytest.raises(LLMEmpty):  # content parts instead of text: nothing to read as an answer
            llm.text("chat", BLOOM)
        with pytest.raises(LLMEmpty, match="without choices"):
            llm.text("chat", BLOOM)
        assert recorded[-1]["response"] == {"unexpected": "upstream proxy error"}
        with pytest.raises(LLMEmpty, match="without choices"):
            llm.text("chat", BLOOM)
        # None of the three sent a usage: each is still metered, by the client's own estimate of
        # its prompt (a token limit must hold against a server that reports nothing).
        assert llm.meter.total.calls == 4
        assert llm.meter.total.prompt_tokens > 3 * 20 and llm.meter.total.completion_tokens == 7
