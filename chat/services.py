"""ClassroomGPT: the channel's single-turn assistant, the ordinary chat beside Deep Research.

One message in, one answer out: the channel's system prompt, the student's recent conversation
(earlier Deep Research answers included, with their numbered sources, so a student can ask about
a research result), the shared tool registry offered through function calling for at most one
round, then the answer. Both rows go to the chat log (type 'chat')."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from django.utils.translation import gettext as _

from channels_app.models import Channel, ChatLog
from agent.engine import prompts
from agent.engine.answer import scrub_links
from agent.engine.llm import LLMError
from agent.engine.sources import neutralise, render_source
from research.models import ResearchTask
from research.services.lifecycle import check_member, validate_question
from agent.llm_factory import make_client
from research.services.runner import question_language
from agent.tools import REGISTRY, ToolContext
from agent.tools.registry import BoundToolbox, ToolRegistry
from uedu_dr.errors import ServiceError

log = logging.getLogger(__name__)

# How much of the conversation goes back to the model with each new message.
HISTORY_ROWS = 20
HISTORY_CHARS = 24_000
ANSWER_CHARS = 8_000
MAX_TOOL_CALLS = 4

# Must not start like any research phase's prompt: the scripted test LLM tells roles apart by it.
SYSTEM = """You are ClassroomGPT, the teaching assistant of the Uedu course channel "{channel}".
Answer the student's latest message in a single reply, in the language the student wrote in,
clearly and concisely, in Markdown (no raw HTML, no images). You may call the tools offered once
to look things up in the course's materials and Uedu's data; say so when you could not find
something rather than guessing. Earlier messages may include Deep Research answers with numbered
sources [N]; when the student asks about such a result, answer from it and refer to its sources
by their numbers.

""" + prompts.UNTRUSTED_RULES

TEACHER_RULES = "\n\nThe course teacher's instructions for this channel (follow them):\n{rules}"


class AssistantUnavailable(ServiceError):
    """The model could not answer. The student's message is stored all the same."""

    def __init__(self, message: str, request_log: ChatLog):
        super().__init__("assistant_unavailable", message, status=503)
        self.request_log = request_log


@dataclass
class ChatExchange:
    request: ChatLog
    response: ChatLog


def send_chat_message(*, user, channel: Channel, message: str, registry: ToolRegistry = REGISTRY) -> ChatExchange:
    """Store the message, ask the model (one round of tools at most), store the answer.
    `registry` is the product's shared tool registry unless a caller brings its own."""
    message = validate_question(message)
    check_member(user, channel)
    history = conversation_context(user, channel)  # before the new row, which goes in last
    request = ChatLog.objects.create(
        channel=channel, user=user, kind=ChatLog.Kind.REQUEST, type=ChatLog.Type.CHAT, content=message
    )
    messages = [{"role": "system", "content": system_prompt(channel)}, *history, {"role": "user", "content": message}]
    toolbox = registry.bind(
        ToolContext(
            user_id=user.pk,
            channel_id=channel.pk,
            web_tools_enabled=channel.web_tools_enabled,
            language=question_language(message),
        )
    )
    try:
        answer = _answer(messages, toolbox)
    except LLMError as exc:
        log.warning("chat answer failed in channel %s: %s", channel.pk, exc)
        raise AssistantUnavailable(
            _("The assistant could not answer right now. Your message is saved; please try again in a moment."),
            request,
        ) from exc
    response = ChatLog.objects.create(
        channel=channel, user=user, kind=ChatLog.Kind.RESPONSE, type=ChatLog.Type.CHAT, content=answer, in_reply_to=request
    )
    return ChatExchange(request=request, response=response)


def system_prompt(channel: Channel) -> str:
    text = SYSTEM.format(channel=channel.name)
    if channel.system_prompt.strip():
        text += TEACHER_RULES.format(rules=channel.system_prompt.strip())
    return text


def _answer(messages: list[dict], toolbox: BoundToolbox) -> str:
    """The model's reply, with any link or image it was not shown dropped: URLs of the sources the
    tools returned, and URLs in the conversation itself, stay; an address planted in a tool's text
    does not (the same rule as Deep Research answers)."""
    client = make_client()
    specs = toolbox.specs()
    allowed = _conversation_urls(messages)
    if not specs:
        return scrub_links(client.text("chat", messages), allowed)[0]
    turn = client.with_tools("chat", messages, specs)
    if not turn.tool_calls:
        return scrub_links(turn.content, allowed)[0]
    # One round of tool calls, then the answer: ordinary chat is a quick exchange, not research.
    messages = [*messages, turn.message]
    for number, call in enumerate(turn.tool_calls):
        if number >= MAX_TOOL_CALLS:
            content = "Not run: too many tool calls in one turn."
        else:
            content, urls = _run_tool(toolbox, call)
            allowed |= urls
        messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return scrub_links(client.text("chat", messages), allowed)[0]


_URL = re.compile(r"https?://[^\s)<>\]\"']+")


def _conversation_urls(messages: list[dict]) -> set[str]:
    return {url for m in messages if m["role"] != "tool" for url in _URL.findall(m.get("content") or "")}


def _run_tool(toolbox: BoundToolbox, call) -> tuple[str, set[str]]:
    if call.arguments is None:
        return f"Tool error: invalid arguments ({call.parse_error})", set()
    try:
        result = toolbox.call(call.name, call.arguments)
    except Exception as exc:  # a broken tool is something to tell the model, not a failed chat
        log.warning("chat tool %s failed: %s", call.name, exc)
        return f"Tool error: {type(exc).__name__}", set()
    if not result.ok:
        return f"Tool error: {neutralise(result.error)}", set()
    if result.sources:
        blocks = [render_source(i, s, full=True, max_chars=2000) for i, s in enumerate(result.sources, start=1)]
        return "<observations>\n" + "\n".join(blocks) + "\n</observations>", {s.url for s in result.sources if s.url}
    data = json.dumps(result.data, ensure_ascii=False, default=str)[:4000] if result.data is not None else "no results"
    return f"<observations>\n{neutralise(data)}\n</observations>", set()


def conversation_context(user, channel: Channel) -> list[dict]:
    """The student's recent turns in this channel as chat messages, oldest first, within budget.
    A finished Deep Research answer comes with its numbered source list; researches that did not
    finish leave only the question."""
    rows = list(
        ChatLog.objects.filter(user=user, channel=channel)
        .select_related("deep_research_task")
        .order_by("-created_at", "-id")[:HISTORY_ROWS]
    )
    messages: list[dict] = []
    used = 0
    for row in rows:  # newest first, so the budget keeps the most recent turns
        content = _context_text(row)
        if content is None:
            continue
        if used + len(content) > HISTORY_CHARS:
            break
        used += len(content)
        role = "user" if row.kind == ChatLog.Kind.REQUEST else "assistant"
        messages.append({"role": role, "content": content})
    messages.reverse()
    return messages


def _context_text(row: ChatLog) -> str | None:
    if row.kind == ChatLog.Kind.REQUEST:
        return row.content
    if row.type == ChatLog.Type.CHAT:
        return row.content[:ANSWER_CHARS]
    task = row.deep_research_task
    if task is None or task.status != ResearchTask.Status.COMPLETED:
        return None
    sources = "\n".join(
        f"[{c.get('number')}] {c.get('title', '')}" + (f" — {c['url']}" if c.get("url") else "")
        for c in task.citations_json
    )
    text = f"Deep Research answer:\n{task.final_answer[:ANSWER_CHARS]}"
    return text + (f"\n\nSources:\n{sources}" if sources else "")
