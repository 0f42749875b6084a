"""ClassroomGPT: the channel's single-turn assistant, the ordinary chat beside Deep Research.

One message in, one answer out: the channel's system prompt, the student's recent conversation
(earlier Deep Research answers included, with their numbered sources, so a student can ask about
a research result), the shared tool registry offered through function calling for at most one
round, then the answer. Both rows go to the chat log (type 'chat')."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from agent.engine import prompts
from agent.engine.answer import marker_ids, rewrite_markers, scrub_links
from agent.engine.boundaries import url_observed, url_permitted
from agent.engine.llm import LLMError
from agent.engine.sources import SourceRegistry, neutralise, render_tool_result
from agent.engine.types import Source
from agent.llm_factory import metered_client
from agent.tools import REGISTRY
from agent.tools.registry import BoundToolbox, ToolRegistry
from channels_app.models import Channel, ChatLog
from quotas.models import CostReservation
from quotas.roles import chat_daily_limit
from research.citation_view import Passages
from research.models import ResearchTask
from research.services import assistant_policy, follow_up
from research.services.lifecycle import check_member
from research.services.questions import question_language, validate_question
from uedu_dr.bounded_process import refuse_when_busy
from uedu_dr.errors import ServiceError

log = logging.getLogger(__name__)

HISTORY_ROWS = follow_up.HISTORY_ROWS
MAX_TOOL_CALLS = 4

# Must not start like any research phase's prompt: the scripted test LLM tells roles apart by it.
SYSTEM = (
    """You are ClassroomGPT, the teaching assistant of the Uedu course channel "{channel}".
Answer the student's latest message in a single reply, in the language the student wrote in,
clearly and concisely, in Markdown (no raw HTML, no images). You may call the tools offered once
to look things up in the course's materials and Uedu's data; say so when you could not find
something rather than guessing. Earlier messages may include Deep Research answers with numbered
sources [N]; when the student asks about such a result, answer from it and refer to its sources
by their numbers.

"""
    + prompts.UNTRUSTED_RULES
)


class AssistantUnavailable(ServiceError):
    """The model could not answer. The student's message is stored all the same."""

    def __init__(self, message: str, request_log: ChatLog):
        super().__init__("assistant_unavailable", message, status=503)
        self.request_log = request_log


@dataclass
class ChatExchange:
    request: ChatLog
    response: ChatLog


def send_chat_message(
    *,
    user,
    channel: Channel,
    message: str,
    registry: ToolRegistry = REGISTRY,
    follow_up_of: ResearchTask | None = None,
) -> ChatExchange:
    """Store the message, ask the model (one round of tools at most), store the answer with the
    sources its markers point at. `registry` is the product's shared tool registry unless a caller
    brings its own.

    Runs under the same policy as Deep Research (research.services.assistant_policy): the
    channel's web rules and the admin's pins in the tool context, the observed-URL rule for
    fetch_url, the teacher's usage rules on every call; and it is paid for like research: the
    user's daily chat budget (429) and the platform's daily cap (503) are checked, and the worst
    case reserved, before anything is stored or sent.

    `follow_up_of`: the research the student follows up on (follow_up.attachable allowed it): its
    question and answer lead the conversation, and its sources are the ones [N] may cite."""
    message = validate_question(message)
    check_member(user, channel)
    language = question_language(message)
    history = conversation_context(
        user, channel, attach=follow_up_of
    )  # before the new row, which goes in last
    messages = [
        {"role": "system", "content": system_prompt(channel)},
        *history,
        {"role": "user", "content": message},
    ]
    with metered_client(
        CostReservation.Kind.CHAT,
        user=user,
        daily_limit=chat_daily_limit(user),
        preamble=assistant_policy.teacher_rules(channel),
        messages=messages,  # the bound is counted from the prompt, per script
    ) as client:
        request = ChatLog.objects.create(
            channel=channel, user=user, kind=ChatLog.Kind.REQUEST, type=ChatLog.Type.CHAT, content=message
        )
        toolbox = registry.bind(
            assistant_policy.tool_context(user_id=user.pk, channel=channel, language=language)
        )
        turn = ChatTurn(
            toolbox=toolbox,
            student_text="\n".join(m["content"] for m in messages if m["role"] == "user"),
            seen_urls=earlier_source_urls(user, channel),
            earlier_citations=list(follow_up_of.citations_json or [])
            if follow_up_of
            else latest_research_citations(user, channel),
        )
        try:
            answer, citations = turn.answer(client, messages)
        except LLMError as exc:
            log.warning("chat answer failed in channel %s: %s", channel.pk, exc)
            raise AssistantUnavailable(
                _(
                    "The assistant could not answer right now. Your message is saved; please try again in a moment."
                ),
                request,
            ) from exc
    response = ChatLog.objects.create(
        channel=channel,
        user=user,
        kind=ChatLog.Kind.RESPONSE,
        type=ChatLog.Type.CHAT,
        content=answer,
        in_reply_to=request,
        citations_json=citations,
    )
    return ChatExchange(request=request, response=response)


def system_prompt(channel: Channel) -> str:
    # The teacher's rules are not here: the LLM client adds them to every call (its preamble).
    return SYSTEM.format(channel=channel.name)


@dataclass
class ChatTurn:
    """One chat answer: one round of tools, the sources they returned numbered [1]…[N] across the
    round, then the answer, whose links and markers must point at what was shown."""

    toolbox: BoundToolbox
    student_text: str
    seen_urls: set[str]
    # The sources of the latest research in the conversation: an answer about it (no tools
    # called) may cite them by their numbers, and the bubble lists them.
    earlier_citations: list[dict] = field(default_factory=list)
    sources: SourceRegistry = field(default_factory=SourceRegistry)

    def answer(self, client, messages: list[dict]) -> tuple[str, list[dict]]:
        specs = self.toolbox.specs()
        allowed = _conversation_urls(messages)
        if not specs:
            return self._clean(client.text("chat", messages), allowed)
        turn = client.with_tools("chat", messages, specs)
        if not turn.tool_calls:
            return self._clean(turn.content, allowed)
        # One round of tool calls, then the answer: ordinary chat is a quick exchange, not research.
        messages = [*messages, turn.message]
        for number, call in enumerate(turn.tool_calls):
            if number >= MAX_TOOL_CALLS:
                content = "Not run: too many tool calls in one turn."
            else:
                content = self._run_tool(call)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        allowed |= {s.url for _, s in self.sources.items() if s.url}
        return self._clean(client.text("chat", messages), allowed)

    def _run_tool(self, call) -> str:
        if call.arguments is None:
            return f"Tool error: invalid arguments ({call.parse_error})"
        for param in self.toolbox.observed_url_params(call.name):
            value = call.arguments.get(param)
            seen = self.seen_urls | {s.url for _, s in self.sources.items() if s.url}
            if isinstance(value, str) and not url_observed(
                value, seen_urls=seen, student_text=self.student_text
            ):
                return (
                    f"Tool error: not run — {neutralise(value[:200])} is no address the student wrote or a source "
                    "showed in this conversation; only those may be opened."
                )
        try:
            # This runs in the web process, a person waiting: a page the tool would parse while
            # every parse slot is taken is refused at once with the tool's message, not queued
            # behind others' parses (uedu_dr.parse_slots).
            with refuse_when_busy():
                result = self.toolbox.call(call.name, call.arguments)
        except Exception as exc:  # a broken tool is something to tell the model, not a failed chat
            log.warning("chat tool %s failed: %s", call.name, exc)
            return f"Tool error: {type(exc).__name__}"
        ctx = self.toolbox.ctx
        # The same boundary as research: a source from a domain the channel refuses is not shown.
        kept = [
            s
            for s in result.sources
            if not s.url or url_permitted(s.url, ctx.allowed_domains, ctx.denied_domains)
        ]
        numbered = [(self.sources.add(s)[0], s) for s in kept]
        return render_tool_result(result, numbered, max_chars=2000)

    def _clean(self, text: str, allowed: set[str]) -> tuple[str, list[dict]]:
        """Links the model was not shown go (the same rule as Deep Research answers); markers
        pointing at no source of this turn go too; the citations list what the markers name."""
        text = scrub_links(text, allowed)[0]
        if len(self.sources):
            citations = [_citation(n, s) for n, s in self.sources.items()]
        else:
            citations = [c for c in self.earlier_citations if isinstance(c.get("number"), int)]
        numbers = {c["number"] for c in citations}
        text, _ = rewrite_markers(text, {n: (n if n in numbers else None) for n in marker_ids(text)})
        cited = set(marker_ids(text))
        return text, [c for c in citations if c["number"] in cited]


# How much of a cited source's text a chat answer keeps: what a sentence citing it is checked
# against when the answer is shown (chat/answer_spans.py).
SOURCE_TEXT_CHARS = 20_000


def _citation(number: int, source: Source) -> dict:
    """A chat source in the shape of a research answer's citation (the bubble renders both alike),
    with the text it was shown, which a sentence citing it must be a span of."""
    return {
        "number": number,
        "source_id": number,
        "title": source.title,
        "url": source.url,
        "source_tool": source.source_tool,
        "snippet": source.snippet,
        "tier": source.tier,
        "origin": source.origin,
        "locator": source.locator,
        "text": (source.text or source.snippet or "")[:SOURCE_TEXT_CHARS],
    }


_URL = re.compile(r"https?://[^\s)<>\]\"']+")


def _conversation_urls(messages: list[dict]) -> set[str]:
    return {url for m in messages if m["role"] != "tool" for url in _URL.findall(m.get("content") or "")}


def latest_research_citations(user, channel: Channel) -> list[dict]:
    """The citations of the student's latest research in the channel, each with the text of the
    passage the research read (what a chat sentence citing it must be a span of)."""
    task = (
        ResearchTask.objects.filter(user=user, channel=channel, status=ResearchTask.Status.COMPLETED)
        .order_by("-finished_at", "-pk")
        .only("pk", "citations_json")
        .first()
    )
    if task is None:
        return []
    passages = Passages(task)
    return [
        dict(c, text=passages.text(str(c.get("url") or ""), str(c.get("title") or ""))[:SOURCE_TEXT_CHARS])
        for c in task.citations_json or []
        if isinstance(c, dict)
    ]


def earlier_source_urls(user, channel: Channel) -> set[str]:
    """URLs of the sources the student's earlier answers in this channel showed (a research's
    citations, a chat answer's sources): fetch_url may open those."""
    urls: set[str] = set()
    rows = ChatLog.objects.filter(user=user, channel=channel, kind=ChatLog.Kind.RESPONSE).select_related(
        "deep_research_task"
    )
    for row in rows.order_by("-created_at", "-id")[:HISTORY_ROWS]:
        citations = row.deep_research_task.citations_json if row.deep_research_task else row.citations_json
        urls |= {c["url"] for c in citations or [] if isinstance(c, dict) and c.get("url")}
    return urls


def conversation_context(user, channel: Channel, *, attach: ResearchTask | None = None) -> list[dict]:
    """The student's recent turns in this channel as chat messages (research.services.follow_up)."""
    return follow_up.conversation_messages(user, channel, attach=attach)
