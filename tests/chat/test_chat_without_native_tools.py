"""Ordinary chat against a server without native tool calls (llama-cpp-python's behaviour: empty
content and no tool calls for a request with tools): the tool choice is asked for as JSON, the
tool runs, and the answer is stored."""

from __future__ import annotations

import json

import pytest

from channels_app.models import ChatLog
from chat.services import send_chat_message
from tests.support.corpus_tools import corpus_registry
from tests.support.scripted_llm import ScriptedLLM


@pytest.fixture
def server(settings):
    # A server of its own: what a server cannot do is remembered per base URL for the process.
    server = ScriptedLLM().start().quirk("no_tool_calls", "json_schema_500")
    settings.OPENAI_BASE_URL = server.url
    settings.OPENAI_API_KEY = "test-key"
    settings.UEDU_LLM_MAX_RETRIES = 0
    yield server
    server.stop()


def test_chat_uses_tools_on_a_server_without_native_tool_calls(personas, server):
    def chat(body):
        if any("Result of search_channel_materials" in (m.get("content") or "") for m in body["messages"]):
            return {"content": "Learning analytics measures learner data."}
        return {
            "tool_calls": [{"name": "search_channel_materials", "arguments": {"query": "learning analytics"}}]
        }

    server.on("chat", chat)
    exchange = send_chat_message(
        user=personas.student,
        channel=personas.channel,
        message="What is learning analytics?",
        registry=corpus_registry(),
    )

    assert exchange.response.content == "Learning analytics measures learner data."
    assert ChatLog.objects.filter(user=personas.student, kind="response").count() == 1
    calls = server.calls("chat")
    native, as_json, follow_up = calls[0], calls[1], calls[-1]
    assert native["tools"] and not as_json.get("tools") and not follow_up.get("tools")
    # the JSON choice first met the 500 refusal of json_schema, then went through as json_object
    assert [(c.get("response_format") or {}).get("type") for c in calls] == [
        None,
        "json_schema",
        "json_object",
        None,
    ]
    choice_prompt = as_json["messages"][0]["content"]
    assert "<tools>" in choice_prompt and "search_channel_materials" in choice_prompt
    # the tool's result reaches the model as a plain message, never as a "tool" role it cannot read
    assert all(m["role"] != "tool" for m in follow_up["messages"])
    assert (
        json.loads(follow_up["messages"][-2]["content"])["tool_calls"][0]["name"]
        == "search_channel_materials"
    )
