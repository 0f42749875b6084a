"""The one module that talks to an LLM, through the `openai` package's Chat Completions.

Works against OpenAI and any OpenAI-compatible server (vLLM, llama.cpp server, Ollama) set by
base URL. What a server does not support (strict json_schema output, json_object output, native
tool calls, reasoning_effort, temperature, seed, max_completion_tokens) is learned from its
refusal once, remembered for that server and model, and not sent again. A refusal is recognised
by its message whatever the HTTP status: llama-cpp-python answers an unknown response_format
with HTTP 500 and a validation message.

Structured replies degrade step by step: strict json_schema → json_object carrying the schema
(llama.cpp servers turn it into a grammar) with the schema in the prompt → plain text with the
schema in the prompt; every step's reply is validated against the schema. A server without
native tool calls (it refuses `tools`, answers a tool request with neither text nor calls, or with
chat-template tokens as text) is asked for its tool choice as one JSON object described by the
tool schemas instead.

Slow is not dead: every reply is streamed, and a call times out when the server sends nothing for
`silence_seconds`, or when one attempt outlives `timeout` (the configured limit, per attempt), not
because a slow model takes long to write a long answer. Every prompt fits the server's context
window (`context_tokens`, set or measured): the answer's room is taken first, then the longest
message texts are cut until the estimate fits; a server that still finds the prompt too long
(llama.cpp's "exceeds the available context size") gets it once more, cut to what it reported.
A reply carrying chat-template control tokens (`<|im_end|>`, `<end_of_turn>`, …) is malformed:
the model is writing the conversation's next turns, and none of it is stored or shown.
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import jsonschema_rs
import openai

ROLES = ("planner", "action", "reflection", "selector", "interpreter", "judge", "chat", "bloom")

# What each role's answer may take (max tokens), sized to what its schema asks for: a plan of a few
# sub-questions, one tool choice, a short verdict; the selection is a few span ids; the
# interpretation a few short items, suggestions and translations of a few spans. A reasoning model gets REASONING_ALLOWANCE on top, which it
# spends thinking before it answers. A small context window lowers these further (fit_prompt).
ROLE_MAX_TOKENS = {
    "planner": 1_200,
    "action": 800,
    "reflection": 800,
    "translation": 600,  # the question and a few sub-questions, each a short query
    "selector": 700,
    "interpreter": 2_000,
    "judge": 400,
    "context": 600,
    "bloom": 500,
    "chat": 2_000,
}
DEFAULT_MAX_TOKENS = 2_000
REASONING_ALLOWANCE = 4_000
# The least an answer is given however small the window, and what is kept back for the chat
# template's own tokens, which no estimate of the messages sees.
MIN_ANSWER_TOKENS = 256
TEMPLATE_MARGIN_TOKENS = 96

# Chat-template control tokens (ChatML, Gemma, Llama 3, Phi, Mistral): in a reply they mean the
# model wrote past its turn. `</s>` counts only where it ends a turn (at the end, or before the
# next turn's marker), since HTML-like text may contain it.
TEMPLATE_TOKENS = re.compile(
    r"<\|(?:im_start|im_end|im_sep|eot_id|start_header_id|end_header_id|begin_of_text|end_of_text|"
    r"endoftext|eom_id|end|user|assistant|system)\|>"
    r"|<(?:start|end)_of_turn>"
    r"|\[/?INST\]"
    r"|</s>(?=\s*(?:<s>|\[INST\]|$))"
)


def template_tokens_in(text: str) -> list[str]:
    """The chat-template control tokens in `text` (the bench counts them in a report's body)."""
    return TEMPLATE_TOKENS.findall(text or "")


class LLMError(Exception):
    """A call that produced nothing usable. `kind` says why, for events and the task's error."""

    kind = "error"


class LLMUnavailable(LLMError):
    kind = "unavailable"  # network, timeout, 429/5xx after the client's own retries


class LLMTruncated(LLMError):
    kind = "truncated"  # finish_reason == "length": never parse half an answer


class LLMEmpty(LLMError):
    kind = "empty"


class LLMMalformed(LLMError):
    kind = "malformed"  # not JSON, or JSON that breaks the schema


class LLMNotConfigured(LLMError):
    kind = "not_configured"


class LLMTemplateTokens(LLMMalformed):
    """The reply holds chat-template control tokens: the model wrote past its own turn."""


class LLMContextExceeded(LLMUnavailable):
    kind = "context_exceeded"  # the prompt cannot be cut to fit the server's window


class LLMRateLimited(LLMUnavailable):
    kind = "rate_limited"  # the endpoint's rate limit left no room before the call's deadline


class RateLimiter(Protocol):
    """The endpoint's shared pace (agent/endpoint_limiter.py, over Redis; the product builds it
    from settings). The client asks it before every request and tells it what each used."""

    def acquire(self, owner: str, tokens: int, deadline: float) -> Any | None:
        """A permit once a request of `tokens` fits, in fair order among owners; None when the
        deadline (time.monotonic()) comes first. The permit has `waited` (seconds)."""

    def settle(self, permit: Any, tokens: int) -> None:
        """What the request used, in place of its estimate (0: the server refused it)."""

    def pause(self, seconds: float) -> float:
        """Hold every caller's requests for `seconds` (a 429's Retry-After)."""


@dataclass
class LLMConfig:
    models: dict[str, str]
    base_url: str = ""
    api_key: str = ""
    timeout: float = 600.0  # one attempt, start to end (the silence limit catches a dead server)
    max_retries: int = 2
    prices: dict[str, list[float]] = field(default_factory=dict)  # model -> [usd/M in, usd/M out]
    max_tokens: dict[str, int] = field(default_factory=dict)  # role -> answer budget (ROLE_MAX_TOKENS)
    reasoning_prefixes: tuple[str, ...] = ("gpt-5", "o1", "o3", "o4")
    seed: int | None = 7
    silence_seconds: float = 60.0  # no streamed byte for this long: the server is stuck
    context_tokens: int = 0  # the server's context window; 0 = unknown, prompts are not cut
    # The endpoint's shared pace (None: calls are not paced, and the SDK retries a 429 itself).
    limiter: RateLimiter | None = None

    def model_for(self, role: str) -> str:
        return self.models.get(role) or self.models.get("default") or "gpt-5.4-mini"

    def answer_tokens(self, role: str, model: str) -> int:
        budget = self.max_tokens.get(role) or ROLE_MAX_TOKENS.get(role, DEFAULT_MAX_TOKENS)
        return budget + (REASONING_ALLOWANCE if model.startswith(self.reasoning_prefixes) else 0)

    def price(self, model: str) -> tuple[float, float]:
        pair = self.prices.get(model) or self.prices.get("default") or [0.0, 0.0]
        return float(pair[0]), float(pair[1])


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageMeter:
    """Sums usage over every call of one research (calls may come from several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = Usage()
        self.by_role: dict[str, Usage] = {}

    def add(self, role: str, prompt: int, completion: int, reasoning: int, cost: float) -> None:
        with self._lock:
            for usage in (self.total, self.by_role.setdefault(role, Usage())):
                usage.prompt_tokens += prompt
                usage.completion_tokens += completion
                usage.reasoning_tokens += reasoning
                usage.cost_usd += cost
                usage.calls += 1

    def carry(self, earlier: Usage) -> None:
        """Count what an earlier part of the same research used (planning, before a plan review)."""
        with self._lock:
            for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd", "calls"):
                setattr(self.total, name, getattr(self.total, name) + getattr(earlier, name))

    @property
    def total_tokens(self) -> int:
        return self.total.total_tokens


@dataclass
class ToolCallRequest:
    id: str
    name: str
    raw_arguments: str
    arguments: dict | None  # None when the arguments were not a JSON object
    parse_error: str = ""


class Reply:
    """A chat completion as the server sent it (its JSON), read by the few fields the engine uses.

    The SDK's response model is not built: its loose construction and the transcript's dump of it
    were ~0.35 ms of CPU per call (measured: docs/bench-history.md), for fields read once. A
    field of the wrong type reads as missing, so an odd server fails as an empty or truncated
    answer, never with a TypeError."""

    __slots__ = ("data", "message", "finish_reason", "queued")

    def __init__(self, data: object) -> None:
        self.data = data if isinstance(data, dict) else {"unexpected": data}
        self.queued = 0.0  # seconds the request waited for the endpoint's rate limit
        choices = self.data.get("choices")
        choice = (
            choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        )
        self.message: dict | None = None
        self.finish_reason = None
        if choice is not None:
            message = choice.get("message")
            self.message = message if isinstance(message, dict) else {}
            self.finish_reason = choice.get("finish_reason")

    @property
    def content(self) -> str:
        content = (self.message or {}).get("content")
        return content if isinstance(content, str) else ""

    @property
    def tool_calls(self) -> list[tuple[str, str, str]]:
        """(id, name, arguments as text) of each function call."""
        calls = []
        for call in (self.message or {}).get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            arguments = function.get("arguments")
            if not isinstance(arguments, str):  # some servers send the object itself
                arguments = "{}" if arguments is None else json.dumps(arguments, ensure_ascii=False)
            calls.append((str(call.get("id") or ""), str(function.get("name") or ""), arguments or "{}"))
        return calls

    def usage(self) -> tuple[int, int, int] | None:
        """(prompt, completion, reasoning) tokens, or None when the server sent no usage."""
        usage = self.data.get("usage")
        if not isinstance(usage, dict):
            return None
        details = usage.get("completion_tokens_details")
        reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else 0
        return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), _count(reasoning)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass
class AssistantTurn:
    content: str
    tool_calls: list[ToolCallRequest]
    message: dict  # the assistant message to append to the conversation


# (base_url, model) -> parameters that server rejected. Shared by every client in the process.
_UNSUPPORTED: dict[tuple[str, str], set[str]] = {}
_UNSUPPORTED_LOCK = threading.Lock()

# Words in a refusal that name the parameter the server refused (checked only for parameters
# that were sent).
_PARAM_HINTS = {
    "json_schema": re.compile(r"json_schema|response_format", re.I),
    "json_object": re.compile(r"json_object|response_format", re.I),
    "tools": re.compile(r"\btools?\b|tool.?choice|tool.?call|function.?call", re.I),
    "reasoning_effort": re.compile(r"reasoning_effort|reasoning effort", re.I),
    "temperature": re.compile(r"temperature", re.I),
    "seed": re.compile(r"\bseed\b", re.I),
    "max_completion_tokens": re.compile(r"max_completion_tokens", re.I),
    "stream_options": re.compile(r"stream_options|include_usage", re.I),
}

Recorder = Callable[[dict], None]

# (base_url, model) -> the context window a server reported when it refused a prompt: later calls
# fit to it at once, when no window was configured or measured.
_WINDOWS: dict[tuple[str, str], int] = {}


def _learned_window(base_url: str, model: str) -> int:
    with _UNSUPPORTED_LOCK:
        return _WINDOWS.get((base_url, model), 0)


def _learn_window(base_url: str, model: str, window: int) -> None:
    with _UNSUPPORTED_LOCK:
        _WINDOWS[(base_url, model)] = window


# One SDK client (and so one HTTP connection pool) per server for the whole process: researches
# run as threads of one worker, and a fresh client per research would open fresh connections.
_CLIENTS: dict[tuple, openai.OpenAI] = {}
_CLIENTS_LOCK = threading.Lock()


def _shared_client(config: LLMConfig) -> openai.OpenAI:
    key = (config.base_url, config.api_key, config.timeout, config.max_retries)
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = openai.OpenAI(
                base_url=config.base_url or None,
                api_key=config.api_key or "not-needed",
                timeout=config.timeout,
                max_retries=config.max_retries,
            )
        return _CLIENTS[key]


class LLMClient:
    def __init__(
        self,
        config: LLMConfig,
        meter: UsageMeter | None = None,
        recorder: Recorder | None = None,
        preamble: str = "",
    ):
        if not config.base_url and not config.api_key:
            raise LLMNotConfigured(
                "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a non-OpenAI server)."
            )
        self.config = config
        self.meter = meter or UsageMeter()
        self.recorder = recorder
        # Admits each request against a research's spending ceiling (agent/engine/budget.py);
        # None outside a research (chat and the light calls reserve per call instead).
        self.gate = None
        # A system text every call of this client carries (the teacher's usage rules): set once
        # per run here, the one place every phase's call passes through, so a phase added later
        # inherits it without knowing about it.
        self.preamble = preamble.strip()
        # Whose turn a paced request takes in the endpoint's fair queue: one research (the runner
        # names it), else this client alone.
        self.rate_owner = uuid.uuid4().hex
        self._client = _shared_client(config)

    # ------------------------------------------------------------------ public calls

    def structured(
        self,
        role: str,
        messages: list[dict],
        schema: dict,
        name: str,
        *,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict:
        """A reply that is one JSON object valid against `schema` (strict json_schema when the
        server supports it, json_object plus the schema in the prompt otherwise)."""
        model = self.config.model_for(role)
        extra = {"_schema": schema, "_schema_name": name}
        reply = self._complete(role, model, messages, extra, max_tokens, timeout)
        return _parse_structured(role, reply.content, schema)

    def with_tools(
        self,
        role: str,
        messages: list[dict],
        tools: list[dict],
        *,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> AssistantTurn:
        model = self.config.model_for(role)
        if tools and "tools" in self._unsupported(model):
            return self._tool_choice_as_json(role, messages, tools, max_tokens, timeout)
        params: dict[str, Any] = {"tools": tools, "tool_choice": "auto"} if tools else {}
        try:
            reply = self._complete(role, model, messages, params, max_tokens, timeout)
        except _ToolsRefused:
            return self._tool_choice_as_json(role, messages, tools, max_tokens, timeout)
        except LLMTemplateTokens:
            if not tools:
                raise
            # llama.cpp with a template that has no tool syntax (Gemma 3) answers a tool request
            # by writing the next turns itself: no native tool calls here; ask for JSON from now on.
            self._remember_unsupported(model, "tools")
            return self._tool_choice_as_json(role, messages, tools, max_tokens, timeout)
        calls = []
        for call_id, name, arguments in reply.tool_calls:
            calls.append(_tool_call(call_id or f"call_{len(calls)}", name, arguments))
        content = reply.content.strip()
        if not calls and not content:
            if tools:
                # llama-cpp-python without a tool-capable chat format answers a tool request with
                # nothing at all: this server has no native tool calls; ask for JSON from now on.
                self._remember_unsupported(model, "tools")
                return self._tool_choice_as_json(role, messages, tools, max_tokens, timeout)
            raise LLMEmpty(f"{role}: the model returned neither text nor tool calls")
        return _assistant_turn(content, calls)

    def _tool_choice_as_json(self, role, messages, tools, max_tokens, timeout) -> AssistantTurn:
        """The tool choice of a server without native tool calls: one JSON object, validated
        against the envelope schema; the arguments are checked by the tool registry as usual."""
        schema = _tool_choice_schema(tools)
        model = self.config.model_for(role)
        instruction = _tool_choice_instruction(tools)
        window = self.config.context_tokens or _learned_window(self.config.base_url, model)
        if window and _text_tokens(instruction) > window // 4:
            # A small window: the tools' names, first sentences and parameters, not their prose.
            instruction = _tool_choice_instruction(tools, compact=True)
        asked = _with_instruction(messages, instruction)
        extra = {"_schema": schema, "_schema_name": "tool_choice", "_strict": False}
        reply = self._complete(role, model, asked, extra, max_tokens, timeout)
        data = _parse_structured(role, reply.content, schema)
        calls = [
            _tool_call(
                f"call_json_{uuid.uuid4().hex[:12]}",
                call["name"],
                json.dumps(call["arguments"], ensure_ascii=False),
            )
            for call in data["tool_calls"]
        ]
        content = data["answer"].strip()
        if not calls and not content:
            raise LLMEmpty(f"{role}: the model chose no tool and wrote no answer")
        return _assistant_turn(content, calls)

    def text(
        self, role: str, messages: list[dict], *, max_tokens: int | None = None, timeout: float | None = None
    ) -> str:
        """A plain text reply (ordinary chat)."""
        model = self.config.model_for(role)
        content = self._complete(role, model, messages, {}, max_tokens, timeout).content.strip()
        if not content:
            raise LLMEmpty(f"{role}: the model returned an empty answer")
        return content

    # ------------------------------------------------------------------ plumbing

    def _unsupported(self, model: str) -> set[str]:
        with _UNSUPPORTED_LOCK:
            return set(_UNSUPPORTED.get((self.config.base_url, model), set()))

    def _remember_unsupported(self, model: str, param: str) -> None:
        with _UNSUPPORTED_LOCK:
            _UNSUPPORTED.setdefault((self.config.base_url, model), set()).add(param)

    def context_window(self, role: str) -> int:
        """The context window a call of `role` must fit: configured, measured, or learned from a
        server's refusal (0: unknown)."""
        model = self.config.model_for(role)
        return self.config.context_tokens or _learned_window(self.config.base_url, model)

    def answer_budget(self, role: str) -> int:
        """The max tokens a call of `role` asks for, before a small window lowers it."""
        return self.config.answer_tokens(role, self.config.model_for(role))

    def _request_params(self, role: str, model: str, extra: dict, budget: int) -> dict:
        unsupported = self._unsupported(model)
        params = dict(extra)
        if "stream_options" not in unsupported:
            params["stream_options"] = {"include_usage": True}  # the last chunk carries the usage
        params["max_tokens" if "max_completion_tokens" in unsupported else "max_completion_tokens"] = budget
        reasoning = model.startswith(self.config.reasoning_prefixes)
        if reasoning and "reasoning_effort" not in unsupported:
            # 'medium' spends most of the budget thinking and leaves an empty answer (source doc).
            params["reasoning_effort"] = "low"
        if not reasoning:
            # Reasoning models only accept their default temperature; others run deterministic.
            if "temperature" not in unsupported:
                params["temperature"] = 0
            if self.config.seed is not None and "seed" not in unsupported:
                params["seed"] = self.config.seed
        return params

    @staticmethod
    def _shape(messages: list[dict], extra: dict, unsupported: set[str]) -> tuple[list[dict], dict]:
        """The messages and output parameters this server accepts, strictest output first."""
        extra = dict(extra)
        schema = extra.pop("_schema", None)
        name = extra.pop("_schema_name", "answer")
        strict = extra.pop("_strict", True)
        if "tools" in unsupported and "tools" not in extra:
            # Tool turns of earlier replies become plain text for a server without tool calls.
            messages = _without_tool_turns(messages)
        if schema is None:
            return messages, extra
        if "json_schema" not in unsupported:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": strict},
            }
            return messages, extra
        # The schema moves into the prompt; the reply is still validated against it.
        messages = _with_instruction(messages, _schema_instruction(schema))
        if "json_object" not in unsupported:
            # llama.cpp servers turn `schema` into a grammar; other servers ignore the key.
            extra["response_format"] = {"type": "json_object", "schema": schema}
        return messages, extra

    def _complete(
        self,
        role: str,
        model: str,
        messages: list[dict],
        extra: dict,
        max_tokens: int | None,
        timeout: float | None,
    ) -> Reply:
        messages = self._with_preamble(messages)
        window = self.config.context_tokens or _learned_window(self.config.base_url, model)
        for _ in range(len(_PARAM_HINTS) + 2):
            sent_messages, shaped = self._shape(messages, extra, self._unsupported(model))
            budget = max_tokens or self.config.answer_tokens(role, model)
            if window:
                sent_messages, budget = fit_prompt(sent_messages, shaped.get("tools"), budget, window)
            params = self._request_params(role, model, shaped, budget)
            started = time.monotonic()
            try:
                reply = self._metered_post(role, model, sent_messages, params, timeout)
                started += reply.queued  # the server's time, not the wait for the rate limit
            except _Silent as exc:
                raise LLMUnavailable(f"{role}: {exc}") from None
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                raise LLMUnavailable(
                    f"{role}: the LLM server did not answer ({type(exc).__name__})"
                ) from None
            except openai.APIStatusError as exc:
                reported = _context_exceeded(_error_message(exc))
                if reported is not None:
                    # Our estimate was short of the server's own count: cut to what it reported.
                    prompt_tokens, server_window = reported
                    _learn_window(self.config.base_url, model, server_window)
                    smaller = _shrunk_window(window, prompt_tokens, server_window)
                    if smaller is None or window == smaller:
                        raise LLMContextExceeded(
                            f"{role}: the prompt does not fit the server's context of {server_window} tokens"
                        ) from None
                    window = smaller
                    continue
                # Whatever the status: llama-cpp-python refuses an unknown response_format with 500.
                refused = self._refused_param(_error_message(exc), params)
                if refused is None:
                    if exc.status_code == 400:
                        raise LLMUnavailable(
                            f"{role}: the LLM server refused the request ({_short(exc)})"
                        ) from None
                    raise LLMUnavailable(f"{role}: the LLM server answered HTTP {exc.status_code}") from None
                self._remember_unsupported(model, refused)
                if refused == "tools":
                    raise _ToolsRefused() from None
                continue
            except openai.OpenAIError as exc:  # anything else the SDK raises is still an LLM failure
                raise LLMUnavailable(f"{role}: {type(exc).__name__}: {_short(exc)}") from None
            self._record(role, model, sent_messages, params, reply, time.monotonic() - started)
            if reply.message is None:
                raise LLMEmpty(f"{role}: the server answered without choices")
            if reply.finish_reason == "length":
                raise LLMTruncated(f"{role}: the answer was cut off at the token limit")
            found = template_tokens_in(reply.content) or template_tokens_in(
                " ".join(arguments for _, _, arguments in reply.tool_calls)
            )
            if found:
                raise LLMTemplateTokens(
                    f"{role}: the answer contains chat-template tokens ({', '.join(sorted(set(found)))[:80]})"
                )
            return reply
        raise LLMUnavailable(f"{role}: the LLM server refused every variant of the request")

    def _metered_post(self, role: str, model: str, messages: list[dict], params: dict, timeout) -> Reply:
        """One request, admitted first by the research's spending ceiling when there is one
        (agent/engine/budget.py: it may lower the answer bound in `params`, or refuse), and
        counted in the meter before its admission is given back."""
        grant = self.gate.admit(role, model, messages, params) if self.gate is not None else None
        reply = None
        try:
            if self.config.limiter is None:
                reply = self._post(model, messages, params, timeout)
            else:
                reply = self._paced_post(role, model, messages, params, timeout)
            self._account(role, model, reply, messages)
            return reply
        finally:
            if grant is not None:
                usage = reply.usage() if reply is not None else None
                self.gate.release(grant, usage[0] if usage else None)

    def _paced_post(self, role: str, model: str, messages: list[dict], params: dict, timeout) -> Reply:
        """One request through the endpoint's shared pace (`config.limiter`).

        It is admitted first, in fair order, within the call's own time limit, so a research's
        time budget counts the wait; it counts what calls like it used lately (_ExpectedTokens)
        until the reply says what it used. The SDK sends it once: its own retries would bypass the pace. A
        429 pauses every process for its Retry-After and the request queues again (up to
        RATE_LIMIT_RETRIES times); what the SDK would retry otherwise (a lost connection, 408,
        409, 5xx) is retried here up to `max_retries` times, each attempt paced again."""
        limiter = self.config.limiter
        limit = timeout if timeout is not None else self.config.timeout
        deadline = time.monotonic() + limit
        bound = int(params.get("max_completion_tokens") or params.get("max_tokens") or 0)
        estimate = estimate_tokens(messages, params.get("tools"))
        learned = (self.config.base_url, model, role)
        tokens = _EXPECTED.tokens(learned, estimate, bound)
        waited, refused, failed = 0.0, 0, 0
        while True:
            # A request admitted with less than a second left could not be answered anyway.
            permit = limiter.acquire(self.rate_owner, tokens, deadline - min(1.0, limit / 2))
            if permit is None:
                raise LLMRateLimited(
                    f"{role}: the model endpoint's rate limit left no room before the call's deadline"
                )
            waited += permit.waited
            try:
                reply = self._post(model, messages, params, max(0.5, deadline - time.monotonic()), retries=0)
            except openai.APIStatusError as exc:
                limiter.settle(permit, 0)  # refused: it used no tokens (it still counts as a request)
                pause = _retry_after(exc.response)
                if exc.status_code == 429 and refused < RATE_LIMIT_RETRIES:
                    refused += 1
                    limiter.pause(pause if pause is not None else min(2.0**refused, 30.0))
                    continue
                if _retryable(exc.status_code) and failed < self.config.max_retries:
                    failed += 1
                    _back_off(failed, pause, deadline)
                    continue
                raise
            except openai.APIConnectionError:
                # What the server did is unknown: the request keeps its estimate in the window.
                if failed < self.config.max_retries and time.monotonic() < deadline:
                    failed += 1
                    _back_off(failed, None, deadline)
                    continue
                raise
            # Any other failure (silence, a broken stream) leaves the permit at its estimate: the
            # server may have used it.
            usage = reply.usage()
            limiter.settle(permit, usage[0] + usage[1] if usage else tokens)
            if usage:
                _EXPECTED.learn(learned, estimate, usage[0], usage[1])
            reply.queued = waited
            if waited:  # kept with the call's other timings (the transcript stores them)
                reply.data["stream"] = {
                    **(reply.data.get("stream") or {}),
                    "queued_seconds": round(waited, 3),
                }
            return reply

    def _with_preamble(self, messages: list[dict]) -> list[dict]:
        """The preamble after the phase's own system prompt, in the same (first) system message:
        the phase's instructions still come first, and servers whose chat template refuses a
        second system message accept it."""
        return _with_instruction(messages, self.preamble) if self.preamble else messages

    def _post(
        self,
        model: str,
        messages: list[dict],
        params: dict,
        timeout: float | None,
        retries: int | None = None,
    ) -> Reply:
        """POST /chat/completions through the SDK's client (its retries, errors and auth), streamed,
        and assembled into the completion a non-streamed call would have returned (`Reply`; the
        transcript records it whole). Not `chat.completions.create`: its request transform walks
        every message against the SDK's TypedDicts, ~10 ms of CPU per call on a research's long
        prompts, to produce the plain JSON these dicts already are (docs/performance.md).

        Two clocks bound one attempt: the socket's read timeout is the silence limit (no byte for
        `silence_seconds`: a server that is alive streams tokens, or at least its headers); the
        attempt as a whole may last `timeout` (the configured limit, or less when the research's
        deadline is nearer), checked between chunks."""
        limit = timeout if timeout is not None else self.config.timeout
        silence = max(0.5, min(self.config.silence_seconds, limit))
        # The request options of the client's public `post` (a plain dict; the SDK's helper that
        # builds it is private).
        options: dict = {
            "security": {"bearer_auth": True},
            "timeout": openai.Timeout(limit, connect=min(10.0, limit), read=silence),
        }
        if timeout is not None and timeout < self.config.timeout:
            # The caller's deadline (a research's time limit) is nearer than a whole attempt: the
            # SDK may not try again past it (a retry would restart both clocks).
            options["max_retries"] = 0
        if retries is not None:
            options["max_retries"] = retries
        body = {"model": model, "messages": messages, **params, "stream": True}
        started = time.monotonic()
        stream = self._client.post(
            "/chat/completions",
            body=body,
            options=options,
            cast_to=object,
            stream=True,
            stream_cls=openai.Stream[object],
        )
        if "text/event-stream" not in stream.response.headers.get("content-type", ""):
            # A server that ignores `stream` answers with the whole completion (or an error page).
            try:
                raw = stream.response.read()
            except openai.APITimeoutError:
                raise _Silent(f"the LLM server went silent for {round(silence)} s") from None
            finally:
                stream.close()
            try:
                return Reply(json.loads(raw))
            except ValueError:
                return Reply(raw.decode("utf-8", "replace"))
        assembly = _Assembly()
        assembly.started = started
        # The attempt that answered starts here: the SDK's earlier attempts (a timeout before the
        # headers, a 429) had their own limit each, the read timeout.
        answered = time.monotonic()
        try:
            for chunk in stream:
                assembly.add(chunk)
                if time.monotonic() - answered > limit:
                    raise _Silent(f"the answer took longer than {round(limit)} s")
        except openai.APITimeoutError:
            raise _Silent(
                f"the LLM server went silent for {round(silence)} s (UEDU_LLM_SILENCE_SECONDS)"
            ) from None
        finally:
            stream.close()
        return Reply(assembly.completion())

    @staticmethod
    def _refused_param(message: str, params: dict) -> str | None:
        for param, pattern in _PARAM_HINTS.items():
            sent = param in params or params.get("response_format", {}).get("type") == param
            if sent and pattern.search(message):
                return param
        return None

    def _account(self, role: str, model: str, reply: Reply, messages: list[dict]) -> None:
        usage = reply.usage()
        if usage is None:
            # A server that reports no usage is still metered (the token limit must hold): by the
            # same conservative estimate that fits prompts to the window.
            prompt = estimate_tokens(messages)
            completion = _text_tokens(reply.content) + sum(
                _text_tokens(name + arguments) for _, name, arguments in reply.tool_calls
            )
            usage = (prompt, completion, 0)
        prompt, completion, reasoning = usage
        price_in, price_out = self.config.price(model)
        cost = (prompt * price_in + completion * price_out) / 1_000_000
        self.meter.add(role, prompt, completion, reasoning, cost)

    def _record(self, role, model, messages, params, reply: Reply, seconds) -> None:
        if self.recorder is None:
            return
        self.recorder(
            {
                "kind": "llm",
                "role": role,
                "model": model,
                # The tools' names, not their schemas (the registry has those; bench/tokens.py counts them).
                "request": {
                    # A copy as sent: the action conversation grows and is compacted in place
                    # before the sink stores this (a replay matches requests by these messages).
                    "messages": [dict(m) for m in messages],
                    **{k: v for k, v in params.items() if k != "tools"},
                    **(
                        {"tool_names": [t["function"]["name"] for t in params["tools"]]}
                        if params.get("tools")
                        else {}
                    ),
                },
                "tools": [t["function"]["name"] for t in params.get("tools", [])],
                "response": reply.data,  # as the server sent it, with the timing of the stream
                "seconds": round(seconds, 3),
            }
        )


# id(schema) -> (the schema, its validator): the schema is kept so that its id is not reused.
_VALIDATORS: dict[int, tuple[dict, object]] = {}


def _validator(schema: dict):
    """Compiled once per schema: building a validator costs more than validating with it.
    jsonschema-rs (Rust) checks a reply in a few microseconds where the pure-Python `jsonschema`
    took ~0.3 ms per reply and ~0.7 ms per report (measured: docs/bench-history.md)."""
    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _VALIDATORS[id(schema)] = (schema, jsonschema_rs.validator_for(schema))
    return cached[1]


def _schema_instruction(schema: dict) -> str:
    return (
        "Answer with one JSON object only, no prose and no code fences, valid against this JSON Schema:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


def _strip_fences(text: str) -> str:
    """Servers in json_object fallback sometimes wrap JSON in ``` fences anyway."""
    match = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)
    return match.group(1) if match else text


def _json_object_in(text: str) -> dict | list:
    """The reply's JSON: the whole text (fences stripped), or else the first JSON object inside
    prose ("Here is the JSON: {…}") from a server that does not constrain its output."""
    text = _strip_fences(text)
    try:
        return json.loads(text)
    except ValueError as exc:
        first_error = exc
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            data, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    raise first_error


def _parse_structured(role: str, content: str | None, schema: dict) -> dict:
    content = (content or "").strip()
    if not content:
        raise LLMEmpty(f"{role}: the model returned an empty answer")
    try:
        data = _json_object_in(content)
    except ValueError as exc:
        raise LLMMalformed(f"{role}: the answer is not JSON ({getattr(exc, 'msg', exc)})") from None
    try:
        _validator(schema).validate(data)
    except jsonschema_rs.ValidationError as exc:
        raise LLMMalformed(f"{role}: the answer breaks the schema ({exc.message[:200]})") from None
    return data


# A 429 is retried through the shared pause this many times before the call fails.
RATE_LIMIT_RETRIES = 8


class _ExpectedTokens:
    """What a paced request will count, learned from what the server reported for the last
    calls of the same server, model and role.

    Reserving the upper bound (the prompt estimate, which counts three characters a token, plus
    the whole answer bound) would hold two or three times what a call uses for as long as it
    runs: with calls of a few seconds and a one-minute window, a fifth of the limit lost. So a
    request reserves its prompt estimate scaled by the largest ratio of reported to estimated
    prompt tokens seen lately, and the largest answer seen lately, each with a margin and never
    above the bound. A call that uses more than expected is settled at what it used; should the
    provider refuse the next one meanwhile, its 429 pauses everyone (never a failure). Before
    any report, the bound."""

    RECENT = 32
    MARGIN = 1.25

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prompt: dict[tuple, deque] = {}
        self._answer: dict[tuple, deque] = {}

    def tokens(self, key: tuple, estimate: int, bound: int) -> int:
        with self._lock:
            ratios, answers = self._prompt.get(key[:2]), self._answer.get(key)
            ratio = max(ratios) * self.MARGIN if ratios else 1.0
            answer = min(bound, math.ceil(max(answers) * self.MARGIN)) if answers and bound else bound
        return math.ceil(estimate * ratio) + answer

    def learn(self, key: tuple, estimate: int, prompt: int, completion: int) -> None:
        with self._lock:
            if estimate > 0:
                self._prompt.setdefault(key[:2], deque(maxlen=self.RECENT)).append(prompt / estimate)
            self._answer.setdefault(key, deque(maxlen=self.RECENT)).append(completion)


_EXPECTED = _ExpectedTokens()


def _retryable(status: int) -> bool:
    """What the SDK itself retries: request timeout, conflict, rate limit and server errors."""
    return status in (408, 409, 429) or status >= 500


def _retry_after(response) -> float | None:
    """Seconds a refusal asks us to wait: OpenAI's `retry-after-ms`, else `Retry-After` in
    seconds or as an HTTP date; None when it says nothing usable."""
    headers = getattr(response, "headers", None) or {}
    try:
        return max(0.0, float(headers["retry-after-ms"]) / 1000)
    except (KeyError, TypeError, ValueError):
        pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _back_off(attempt: int, asked: float | None, deadline: float) -> None:
    """Sleep before a retry as the SDK would (the server's Retry-After up to a minute, else 0.5 s
    doubling to 8 s, less a random quarter), never past the deadline."""
    delay = asked if asked is not None and 0 < asked <= 60 else min(0.5 * 2 ** (attempt - 1), 8.0)
    delay *= 1 - 0.25 * random.random()
    time.sleep(max(0.0, min(delay, deadline - time.monotonic())))


class _Silent(Exception):
    """One attempt ran out of time: the server went silent, or outlived the attempt's limit."""


class _Assembly:
    """A streamed completion put back together: content, tool calls by index, the finish
    reason and the usage (the last chunk, when the server sends one)."""

    def __init__(self) -> None:
        self.meta: dict = {}
        self.content: list[str] = []
        self.calls: dict[int, dict] = {}
        self.finish_reason = None
        self.usage = None
        self.choices_seen = False
        self.chunks = 0
        self.started = time.monotonic()
        self.first_token_seconds: float | None = None  # prompt processing, as the client sees it

    def add(self, chunk: object) -> None:
        if not isinstance(chunk, dict):
            return
        self.chunks += 1
        for key in ("id", "created", "model", "system_fingerprint"):
            if key in chunk and key not in self.meta:
                self.meta[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self.choices_seen = True
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            if self.first_token_seconds is None and (delta.get("content") or delta.get("tool_calls")):
                self.first_token_seconds = round(time.monotonic() - self.started, 3)
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                if not isinstance(part, dict):
                    continue
                index = part.get("index") if isinstance(part.get("index"), int) else len(self.calls)
                call = self.calls.setdefault(
                    index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
                if part.get("id"):
                    call["id"] = str(part["id"])
                function = part.get("function")
                if isinstance(function, dict):
                    if isinstance(function.get("name"), str):
                        call["function"]["name"] += function["name"]
                    arguments = function.get("arguments")
                    if isinstance(arguments, str):
                        call["function"]["arguments"] += arguments
                    elif isinstance(arguments, dict):  # some servers send the object itself
                        call["function"]["arguments"] += json.dumps(arguments, ensure_ascii=False)

    def completion(self) -> dict:
        """The chat.completion object a non-streamed call would have returned."""
        data: dict[str, Any] = {"object": "chat.completion", **self.meta, "choices": []}
        if self.choices_seen:
            message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) or None}
            if self.calls:
                message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
            data["choices"] = [{"index": 0, "message": message, "finish_reason": self.finish_reason}]
        if self.usage is not None:
            data["usage"] = self.usage
        data["stream"] = {"chunks": self.chunks, "first_token_seconds": self.first_token_seconds}
        return data


# ---------------------------------------------------------------------- prompts that fit the window

_WIDE = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
_TRIM_NOTE = "\n…(cut here to fit the model's context window)…"


def text_tokens(text: str) -> int:
    """The conservative token count prompts are fitted with (a phase that sizes its own input
    to a small window counts the same way)."""
    return _text_tokens(text)


def _text_tokens(text: str) -> int:
    """A conservative token count: a CJK character is about a token; other text is counted at
    three characters a token (English runs nearer four, JSON and numbers nearer three)."""
    if not text:
        return 0
    wide = len(_WIDE.findall(text))
    return wide + (len(text) - wide + 2) // 3


def estimate_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    total = sum(8 + _text_tokens(m.get("content") or "") for m in messages)
    for message in messages:
        for call in message.get("tool_calls") or []:
            total += 8 + _text_tokens(json.dumps(call, ensure_ascii=False))
    if tools:
        total += _text_tokens(json.dumps(tools, ensure_ascii=False))
    return total


def fit_prompt(
    messages: list[dict], tools: list[dict] | None, answer_tokens: int, window: int
) -> tuple[list[dict], int]:
    """The messages cut to fit `window` with room for the answer, and the answer's max tokens.

    The answer keeps its role's budget up to a third of the window (never less than
    MIN_ANSWER_TOKENS); then the longest message text loses its middle until the estimate fits.
    The first system message (the phase's instructions and the schema) is cut last."""
    answer = max(MIN_ANSWER_TOKENS, min(answer_tokens, window // 3))
    room = window - answer - TEMPLATE_MARGIN_TOKENS
    excess = estimate_tokens(messages, tools) - room
    if excess <= 0:
        return messages, answer
    fitted = [dict(m) for m in messages]
    for _ in range(4 * len(fitted) + 4):
        if excess <= 0:
            break
        candidates = [
            i for i, m in enumerate(fitted) if isinstance(m.get("content"), str) and len(m["content"]) > 400
        ]
        later = [i for i in candidates if not (i == 0 and fitted[0].get("role") == "system")]
        if not (later or candidates):
            break
        index = max(later or candidates, key=lambda i: _text_tokens(fitted[i]["content"]))
        text = fitted[index]["content"]
        tokens = _text_tokens(text)
        keep_ratio = max(0.0, (tokens - excess - 16) / tokens)
        keep = max(300, int(len(text) * keep_ratio) - 8)
        if keep >= len(text):
            keep = len(text) - 200
        # The middle goes: a message starts with its context and ends with what it asks for
        # (the question, the latest observations), and both must survive.
        head = keep * 2 // 5
        fitted[index]["content"] = text[:head] + _TRIM_NOTE + "\n" + text[len(text) - (keep - head) :]
        excess = estimate_tokens(fitted, tools) - room
    if excess > 0:
        raise LLMContextExceeded(f"the prompt does not fit the context window of {window} tokens")
    return fitted, answer


_EXCEEDED = re.compile(
    r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)"
    r"|maximum context length is (\d+) tokens.*?(\d+) (?:input )?tokens",
    re.S,
)


def _context_exceeded(message: str) -> tuple[int, int] | None:
    """(prompt tokens, window) from a server's "too long" refusal (llama.cpp, vLLM), or None."""
    match = _EXCEEDED.search(message)
    if match is None:
        return None
    if match.group(1):
        return int(match.group(1)), int(match.group(2))
    return int(match.group(4)), int(match.group(3))


def _shrunk_window(window: int, prompt_tokens: int, server_window: int) -> int | None:
    """The window to fit to next after a server refused a prompt as too long: its own window when
    ours was unknown or larger; else ours, smaller by how far the server's count ran over our
    estimate, and a tenth more. None when nothing sensible is left."""
    if not window or window > server_window:
        return server_window
    smaller = int(window * min(1.0, server_window / max(prompt_tokens, 1)) * 0.9)
    return smaller if smaller > 2 * MIN_ANSWER_TOKENS else None


class _ToolsRefused(Exception):
    """The server refused the `tools` parameter: the caller asks for the choice as JSON."""


def _tool_call(call_id: str, name: str, raw: str) -> ToolCallRequest:
    try:
        parsed = json.loads(raw)
        error = "" if isinstance(parsed, dict) else "arguments are not a JSON object"
    except ValueError as exc:
        parsed, error = None, f"arguments are not valid JSON ({exc.msg})"
    return ToolCallRequest(
        id=call_id,
        name=name,
        raw_arguments=raw[:4000],
        arguments=parsed if isinstance(parsed, dict) else None,
        parse_error=error,
    )


def _assistant_turn(content: str, calls: list[ToolCallRequest]) -> AssistantTurn:
    assistant: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        assistant["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments}}
            for c in calls
        ]
    return AssistantTurn(content=content, tool_calls=calls, message=assistant)


def _tool_choice_schema(tools: list[dict]) -> dict:
    return _tool_choice_schema_for(tuple(t["function"]["name"] for t in tools))


@functools.lru_cache(maxsize=64)
def _tool_choice_schema_for(names: tuple[str, ...]) -> dict:
    """One schema object per tool set, so its compiled validator is reused (see _validator)."""
    return {
        "type": "object",
        "properties": {
            "tool_calls": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "enum": list(names)},
                        "arguments": {"type": "object"},
                    },
                    "required": ["name", "arguments"],
                },
            },
            "answer": {"type": "string"},
        },
        "required": ["tool_calls", "answer"],
    }


TOOL_CHOICE_MARKER = "Tools you can call by answering with JSON"


def _tool_choice_instruction(tools: list[dict], compact: bool = False) -> str:
    described = [
        {
            "name": t["function"]["name"],
            "description": _first_sentence(t["function"].get("description", ""))
            if compact
            else t["function"].get("description", ""),
            "parameters": _bare_parameters(t["function"].get("parameters", {}))
            if compact
            else t["function"].get("parameters", {}),
        }
        for t in tools
    ]
    return (
        f"{TOOL_CHOICE_MARKER} (each tool's arguments follow its JSON Schema):\n<tools>\n"
        + json.dumps(described, ensure_ascii=False)
        + '\n</tools>\nTo call tools, answer {"tool_calls": [{"name": "…", "arguments": {…}}], "answer": ""}; '
        'to answer without tools, {"tool_calls": [], "answer": "your answer"}.'
    )


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0][:160]


def _bare_parameters(parameters: dict) -> dict:
    """A parameters schema without its descriptions (types, enums, required and bounds stay)."""
    properties = {
        name: {k: v for k, v in spec.items() if k != "description"}
        for name, spec in (parameters.get("properties") or {}).items()
    }
    return {**{k: v for k, v in parameters.items() if k != "description"}, "properties": properties}


def _with_instruction(messages: list[dict], text: str) -> list[dict]:
    """`text` added to the system message: many chat templates (Mistral, Gemma) refuse a second
    system message or one that is not first."""
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0], content=f"{messages[0].get('content') or ''}\n\n{text}")
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def _without_tool_turns(messages: list[dict]) -> list[dict]:
    """Earlier tool calls as assistant JSON and tool results as user text, consecutive user
    messages merged (chat templates of servers without tool calls want alternating roles)."""
    names = {}
    flat: list[dict] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                names[call["id"]] = call["function"]["name"]
                try:
                    arguments = json.loads(call["function"]["arguments"] or "{}")
                except ValueError:
                    arguments = call["function"]["arguments"]
                calls.append({"name": call["function"]["name"], "arguments": arguments})
            content = json.dumps(
                {"tool_calls": calls, "answer": message.get("content") or ""}, ensure_ascii=False
            )
            flat.append({"role": "assistant", "content": content})
            continue
        if role == "tool":
            name = names.get(message.get("tool_call_id"), "tool")
            message = {
                "role": "user",
                "content": f"Result of {name} ({message.get('tool_call_id')}):\n{message.get('content') or ''}",
            }
            role = "user"
        if role == "user" and flat and flat[-1]["role"] == "user":
            flat[-1] = {"role": "user", "content": f"{flat[-1]['content']}\n\n{message.get('content') or ''}"}
            continue
        flat.append(message)
    return flat


def _error_message(exc: openai.APIStatusError) -> str:
    body = getattr(exc, "body", None)
    detail = json.dumps(body, ensure_ascii=False) if body is not None else ""
    return f"{exc} {detail}"


def _short(exc: Exception) -> str:
    return str(exc).replace("\n", " ")[:200]


def server_context_tokens(config: LLMConfig, timeout: float = 3.0) -> int:
    """The server's context window as it reports it, or 0: llama.cpp's GET /props
    (`default_generation_settings.n_ctx`, the window of one slot), vLLM's GET /v1/models
    (`max_model_len`), llama.cpp's /v1/models (`meta.n_ctx`). OpenAI and Ollama say nothing."""
    if not config.base_url:
        return 0
    client = openai.OpenAI(
        base_url=config.base_url, api_key=config.api_key or "not-needed", timeout=timeout, max_retries=0
    )
    root = re.sub(r"/v1/?$", "", config.base_url.rstrip("/"))
    try:
        for url in (f"{root}/props", "/models"):
            try:
                data = client.get(url, cast_to=object)
            except openai.OpenAIError:
                continue
            if not isinstance(data, dict):
                continue
            settings = data.get("default_generation_settings")
            if isinstance(settings, dict) and _count(settings.get("n_ctx")):
                return _count(settings.get("n_ctx"))
            for model in data.get("data") or []:
                if not isinstance(model, dict):
                    continue
                meta = model.get("meta") if isinstance(model.get("meta"), dict) else {}
                window = _count(model.get("max_model_len")) or _count(meta.get("n_ctx"))
                if window:
                    return window
        return 0
    finally:
        client.close()


def list_models(config: LLMConfig, timeout: float = 3.0) -> list[str]:
    """The model ids the server lists (GET /models), asked once with a short timeout: the launcher
    and /healthz say whether a model answers before anyone starts a research."""
    if not config.base_url and not config.api_key:
        raise LLMNotConfigured("No LLM is configured.")
    client = openai.OpenAI(
        base_url=config.base_url or None,
        api_key=config.api_key or "not-needed",
        timeout=timeout,
        max_retries=0,
    )
    try:
        return [model.id for model in client.models.list()]
    except (openai.APITimeoutError, openai.APIConnectionError) as exc:
        raise LLMUnavailable(f"the LLM server did not answer ({type(exc).__name__})") from None
    except openai.APIStatusError as exc:
        raise LLMUnavailable(
            f"the LLM server answered HTTP {exc.status_code} to GET /models ({_short(exc)})"
        ) from None
    except openai.OpenAIError as exc:
        raise LLMUnavailable(f"{type(exc).__name__}: {_short(exc)}") from None
    finally:
        client.close()
