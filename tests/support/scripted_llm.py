"""A scripted OpenAI-compatible server on loopback, for tests and benchmarks.

The product's real `openai` client talks to it over HTTP. It recognises which phase is calling
from the system prompt, answers with deterministic, plausible replies built from the request
(the selector points at the candidate spans that share most words with its sub-question, the
interpreter builds its items from the facts' own words), and can be told to misbehave: HTTP 429/500, slowness, truncation, empty or malformed replies,
invented citations and tools, endless tool calls, refusing json_schema.

It can also behave like the local servers people actually run, one switch per quirk
(`quirk(name)`, persistent until `reset()`; see QUIRKS), so that a whole research can be run
against a server without strict json_schema or native tool calls; and, with
`Scenario(mode="schema_filler")`, like a server that knows nothing of the product's prompts and
only fills the JSON Schema each request sends (the first enum value, the fewest array items the
schema allows, empty strings, zeros), and answers a tool request with nothing.

Run in a thread of the test process (`ScriptedLLM().start()`), or as its own process for the
benchmarks: `python -m tests.support.scripted_llm --port 0 --latency 0.2` prints its URL.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The system prompts of the product's phases start with these words (research/engine/prompts.py,
# plus the judge, Bloom and chat prompts of the services).
ROLE_MARKERS = [
    ("planner", "You are the planner"),
    ("action", "You are the researcher"),
    ("reflection", "You are the reflection step"),
    ("translation", "You translate search queries"),
    ("selector", "You are the selection step"),
    ("interpreter", "You are the interpretation step"),
    ("judge", "You decide whether a student's question is worth"),
    ("bloom", "Classify the student's question into Bloom"),
    ("context", "You check whether a research question"),
    ("entailment", "You judge whether the passages entail"),
    ("coverage", "You judge whether an answer addresses a point"),
]


def _tokens(text: str) -> set[str]:
    """English words of 3+ letters and Chinese character pairs: a crude, deterministic stand-in for NLI."""
    text = text.lower()
    words = set(re.findall(r"[a-z]{3,}", text))
    cjk = re.findall(r"[\u3400-\u9fff]", text)
    return words | {a + b for a, b in zip(cjk, cjk[1:])}


def overlap_entails(statement: str, passages: list[str], threshold: float = 0.6) -> bool:
    wanted = _tokens(statement)
    have = _tokens(" ".join(passages))
    return bool(wanted) and len(wanted & have) / len(wanted) >= threshold


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def numbers_agree(statement: str, passages: list[str]) -> bool:
    """Every number of the statement is one of the passages' numbers at the statement's precision
    (also read in billions or millions, as "USD 3,215,000,000" states "3.22 billion"): the
    evaluation judge's stand-in must notice a swapped figure, which word overlap cannot."""
    have = []
    for raw in _NUMBER.findall(" ".join(passages)):
        value = float(raw.replace(",", ""))
        have += [value, value / 1e9, value / 1e6]
    for raw in _NUMBER.findall(statement):
        value = float(raw.replace(",", ""))
        places = len(raw.split(".", 1)[1]) if "." in raw else 0
        if not any(abs(value - h) <= 0.5 * 10**-places + 1e-9 for h in have):
            return False
    return True


FAULTS = {
    "http429",
    "http500",
    "http400",
    "slow",
    "length",
    "empty",
    "malformed",
    "schema",
    "reject_json_schema",
    "invented_citations",
    "unknown_tool",
    "bad_args",
    "endless_tools",
    "no_choices",
    # streams one chunk, then nothing for `Scenario.silent_seconds` (a stuck server)
    "silent",
    # writes the next turns of the conversation after its answer (chat-template tokens in the text)
    "template_tokens",
}

# Behaviours of real OpenAI-compatible servers (persistent, unlike the one-shot faults).
QUIRKS = {
    # refuses response_format json_schema with HTTP 400 (older vLLM and Ollama builds)
    "json_schema_400",
    # refuses it with HTTP 500 and a validation message (llama-cpp-python's `llama_cpp.server`)
    "json_schema_500",
    # refuses response_format json_object as well (HTTP 400)
    "json_object_refused",
    # accepts every response_format but writes prose and fences around its JSON
    "json_object_ignored",
    # answers a request with `tools` with empty content and no tool calls (llama-cpp-python
    # without a tool-capable chat format)
    "no_tool_calls",
    # refuses a request with `tools` with HTTP 400 (Ollama for a model without tool support)
    "tools_400",
    # answers a request with `tools` with chat-template tokens as text and no tool calls
    # (llama.cpp's llama-server with Gemma 3, whose template has no tool syntax)
    "tools_as_template_text",
    # refuses any prompt over CONTEXT_WINDOW tokens with llama.cpp's HTTP 400 (and says so in /props)
    "context_4096",
    # streams without a usage chunk, whatever stream_options asks (older servers)
    "no_stream_usage",
}
CONTEXT_WINDOW = 4096
TEMPLATE_TAIL = "<end_of_turn>\n<start_of_turn>user\nThank you! Now tell me more.<end_of_turn>"
TOOLS_AS_TEMPLATE_TEXT = (
    "I will search for that.<|im_end|>\n<|im_start|>user\nPlease continue.<|im_end|>\n<|im_start|>assistant\n"
)


def prompt_tokens(body: dict) -> int:
    """The prompt's size as this server counts it: a CJK character is a token, other text four
    characters a token (tokenizers of real servers count English a little lower)."""
    text = " ".join(str(m.get("content") or "") for m in body.get("messages", []))
    text += " ".join(
        json.dumps(m.get("tool_calls"), ensure_ascii=False)
        for m in body.get("messages", [])
        if m.get("tool_calls")
    )
    if body.get("tools"):
        text += json.dumps(body["tools"], ensure_ascii=False)
    wide = len(re.findall(r"[\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uffef]", text))
    return wide + (len(text) - wide) // 4 + 4 * len(body.get("messages", []))


LLAMA_CPP_VALIDATION_ERROR = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or "
    "'json_object' [type=literal_error, input_value='json_schema', input_type=str]"
)
TOOLS_BLOCK = re.compile(r"<tools>\n(.*?)\n</tools>", re.S)

Handler = Callable[[dict], dict]
# The scripted planner's sub-questions: the question and one of these (words, not numbers: a
# sub-question may state no figure the question lacks).
ASPECTS = ("background", "evidence", "implications", "methods", "examples", "limits")


def role_of(body: dict) -> str:
    system = " ".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "system")
    for role, marker in ROLE_MARKERS:
        if marker in system:
            return role
    return "chat"


def _user_text(body: dict) -> str:
    return "\n".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user")


def _first_user_text(body: dict) -> str:
    for m in body.get("messages", []):
        if m.get("role") == "user":
            return m.get("content") or ""
    return ""


def question_of(body: dict) -> str:
    text = _first_user_text(body)
    match = re.search(r"Student's question:\n(.*?)(?:\n\n|$)", text, re.S)
    return (match.group(1) if match else text).strip()


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.。!?！？])\s*", text.strip())[0][:200].rstrip(".。")


SOURCE_TAG = re.compile(r'<source id="(\d+)"[^>]*?title="([^"]*)"[^>]*>\n(.*?)\n</source>', re.S)


def sources_in(body: dict) -> list[tuple[int, str, str]]:
    return [(int(i), t, txt) for i, t, txt in SOURCE_TAG.findall(_user_text(body))]


def _example_args(tool: dict, question: str) -> dict:
    params = tool["function"].get("parameters", {})
    args = {}
    for name in params.get("required", []):
        spec = params["properties"][name]
        if "enum" in spec:
            args[name] = spec["enum"][0]
        elif spec.get("type") == "integer":
            args[name] = 3
        elif spec.get("type") == "number":
            args[name] = 1.0
        elif spec.get("type") == "boolean":
            args[name] = False
        elif spec.get("type") == "array":
            args[name] = []
        else:
            args[name] = question[:200]
    return args


@dataclass
class Scenario:
    """What the default replies do. Tests change these fields or install handlers per role."""

    complexity: str = "moderate"
    sub_questions: int = 3
    hypotheses: list[str] = field(default_factory=list)
    tools_per_round: int = 2  # parallel tool calls the action phase makes per turn
    preferred_tools: list[str] = field(default_factory=list)  # call these first when offered
    action_rounds: int = 1  # turns with tool calls before saying DONE
    sufficient_after: int = 1  # reflection says sufficient from this round on
    # How many candidate spans each selection call points at (those sharing most words with its
    # sub-question; 0: it selects nothing, and the engine falls back to the search ranking).
    select_per_call: int = 4
    # The selection call also marks its first two chosen spans of different sources as contradicting.
    contradict: bool = False
    # "en" or "zh": the planner, the selector and the interpreter plant a lie of every shape of
    # tests/support/planted.py (the adversary).
    invent: str = ""
    # "schema_filler": know nothing of the prompts; fill the JSON Schema each request sends.
    mode: str = ""
    asks_for_judgement: bool = False
    hypothesis_status: str = "open"  # what reflection says of each planner hypothesis
    judge_keywords: tuple[str, ...] = (
        "比較",
        "compare",
        "分析",
        "analy",
        "規劃",
        "plan",
        "研究",
        "research",
        "整合",
        "why",
        "為什麼",
    )
    latency: dict[str, float] = field(default_factory=dict)  # role -> seconds (key "*" for all)
    # role -> completion tokens to report (a wordy model), never more than the request's answer
    # bound (max_completion_tokens or max_tokens), as a real server would. A handler's reply may
    # say the same for one call with the key "completion_tokens".
    usage: dict[str, int] = field(default_factory=dict)
    # A streamed reply goes out in pieces of `chunk_chars`, `chunk_seconds` apart (a slow model).
    chunk_chars: int = 40
    chunk_seconds: float = 0.0
    silent_seconds: float = 30.0  # how long the "silent" fault stalls
    retry_after: str = "0"  # the Retry-After of the "http429" fault
    # A reply's time grows with what it reads and writes (a real server's), on top of `latency`:
    # the first token after `first_token` + prompt tokens / `prefill_rate`, then the answer's
    # tokens at `decode_rate` per second (streamed at that pace). 0 rates: no such time.
    first_token: float = 0.0
    prefill_rate: float = 0.0
    decode_rate: float = 0.0
    # The provider's limits per `rate_window` seconds (0: none), counted from the usage of every
    # answered request when it arrived; a request over either is answered 429 at once, with the
    # Retry-After that lets it fit, and is not counted.
    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    rate_window: float = 60.0


class ScriptedLLM:
    def __init__(self, scenario: Scenario | None = None) -> None:
        self.scenario = scenario or Scenario()
        self.handlers: dict[str, Handler] = {}
        self.faults: dict[str, deque] = defaultdict(deque)
        self.quirks: set[str] = set()
        self.requests: list[dict] = []
        # What GET /models lists (a preflight checks that the researcher's and judge's models are
        # served); any model name is answered all the same.
        self.served: list[str] = ["scripted"]
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._window: deque = deque()  # (arrived, tokens) of the requests the rate limits count
        self.rate_limited = 0  # requests answered 429 for the rate limits
        self.counted_tokens = 0  # tokens of every request the rate limits counted

    # ------------------------------------------------------------------ control

    def reset(self, scenario: Scenario | None = None) -> None:
        with self._lock:
            self.scenario = scenario or Scenario()
            self.handlers.clear()
            self.faults.clear()
            self.quirks.clear()
            self.requests.clear()
            self.served = ["scripted"]
            self._window.clear()
            self.rate_limited = 0
            self.counted_tokens = 0

    def quirk(self, *names: str) -> ScriptedLLM:
        """Behave like a server with these quirks (QUIRKS) from now until reset()."""
        assert set(names) <= QUIRKS, names
        with self._lock:
            self.quirks.update(names)
        return self

    def fail(self, role: str, fault: str, times: int = 1) -> None:
        """Make the next `times` calls of `role` ('*' for any) misbehave with `fault`."""
        assert fault in FAULTS, fault
        with self._lock:
            self.faults[role].extend([fault] * times)

    def on(self, role: str, handler: Handler) -> None:
        """Answer `role` with handler(request_body) -> {"content": …}, {"tool_calls": [...]} or
        {"http_status": 500} (the server fails the call)."""
        self.handlers[role] = handler

    def calls(self, role: str | None = None) -> list[dict]:
        with self._lock:
            return [r for r in self.requests if role is None or r["_role"] == role]

    # ------------------------------------------------------------------ server

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self, port: int = 0) -> ScriptedLLM:
        llm = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; without this, Nagle + delayed ACK add ~40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload, headers = llm.handle(self.path, body)
                if status == 200 and body.get("stream") and "choices" in payload:
                    self._stream(body, payload, headers)
                    return
                if status == 200 and "choices" in payload:
                    time.sleep(sum(llm.modelled_seconds(payload)))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _stream(self, body: dict, payload: dict, headers: dict) -> None:
                """The completion as Server-Sent Events, as OpenAI-compatible servers stream it."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                scenario = llm.scenario
                chunks = llm.chunks(body, payload, headers.get("X-Fault", ""))
                prefill, decode = llm.modelled_seconds(payload)
                time.sleep(prefill)
                try:
                    for number, chunk in enumerate(chunks):
                        if number and scenario.chunk_seconds:
                            time.sleep(scenario.chunk_seconds)
                        if number and decode:  # the answer's tokens come at the decode rate
                            time.sleep(decode / max(1, len(chunks) - 1))
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                        self.wfile.flush()
                        if number == 0 and headers.get("X-Fault") == "silent":
                            time.sleep(scenario.silent_seconds)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/props"):  # llama.cpp's server properties
                    window = CONTEXT_WINDOW if "context_4096" in llm.quirks else 32768
                    payload = {"default_generation_settings": {"n_ctx": window}, "total_slots": 1}
                elif self.path.startswith("/_stats"):  # for benchmarks running the server as a process
                    payload = {
                        "requests": len(llm.requests),
                        "by_role": {},
                        "rate_limited": llm.rate_limited,
                        "counted_tokens": llm.counted_tokens,
                    }
                    for r in list(llm.requests):
                        payload["by_role"][r["_role"]] = payload["by_role"].get(r["_role"], 0) + 1
                else:
                    payload = {"object": "list", "data": [{"id": m, "object": "model"} for m in llm.served]}
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), RequestHandler)
        self._server.daemon_threads = True
        self._server.request_queue_size = 256
        threading.Thread(target=self._server.serve_forever, daemon=True, name="scripted-llm").start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # ------------------------------------------------------------------ replies

    def handle(self, path: str, body: dict) -> tuple[int, dict, dict]:
        if path.rstrip("/").endswith("/embeddings"):
            return 200, self._embeddings(body), {}
        role = role_of(body)
        arrived = time.monotonic()
        with self._lock:
            record = dict(body, _role=role, _t=arrived)
            self.requests.append(record)
            fault = None
            for key in (role, "*"):
                if self.faults[key]:
                    fault = self.faults[key].popleft()
                    break
            latency = self.scenario.latency.get(role, self.scenario.latency.get("*", 0.0))
        status, payload, headers = self._answer(role, body, fault)
        if status == 200 and isinstance(payload.get("usage"), dict):
            wait = self._over_rate_limit(arrived, payload["usage"])
            if wait is not None:  # a provider refuses at once, before any latency
                record["_rate_limited"] = True
                return (
                    429,
                    {"error": {"message": "Rate limit reached for tokens per min", "type": "tokens"}},
                    {"Retry-After": str(wait)},
                )
        if latency:
            time.sleep(latency)
        return status, payload, headers

    def modelled_seconds(self, completion: dict) -> tuple[float, float]:
        """(time to the first token, time writing the answer) of a reply, by the latency model."""
        s, usage = self.scenario, completion.get("usage") or {}
        prefill = s.first_token + (usage.get("prompt_tokens", 0) / s.prefill_rate if s.prefill_rate else 0.0)
        decode = usage.get("completion_tokens", 0) / s.decode_rate if s.decode_rate else 0.0
        return prefill, decode

    def _over_rate_limit(self, arrived: float, usage: dict) -> int | None:
        """None when the request fits the rate limits (it is counted), else the whole seconds
        until it would."""
        s = self.scenario
        if not (s.requests_per_minute or s.tokens_per_minute):
            return None
        tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
        with self._lock:
            while self._window and self._window[0][0] <= arrived - s.rate_window:
                self._window.popleft()
            used = sum(t for _, t in self._window)
            over_requests = len(self._window) + 1 - s.requests_per_minute if s.requests_per_minute else 0
            over_tokens = used + tokens - s.tokens_per_minute if s.tokens_per_minute else 0
            if over_requests <= 0 and over_tokens <= 0:
                self._window.append((arrived, tokens))
                self.counted_tokens += tokens
                return None
            self.rate_limited += 1
            for at, counted in self._window:
                over_requests -= 1
                over_tokens -= counted
                if over_requests <= 0 and over_tokens <= 0:
                    return max(1, math.ceil(at + s.rate_window - arrived))
            return max(1, math.ceil(s.rate_window))

    def _answer(self, role: str, body: dict, fault: str | None) -> tuple[int, dict, dict]:
        if fault == "slow":
            time.sleep(30)
        if fault == "http429":
            return (
                429,
                {"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                {"Retry-After": self.scenario.retry_after},
            )
        if fault == "http500":
            return 500, {"error": {"message": "internal error", "type": "server_error"}}, {}
        if fault == "http400":
            return (
                400,
                {"error": {"message": "Bad request: something unrelated", "type": "invalid_request_error"}},
                {},
            )
        if fault == "reject_json_schema" and body.get("response_format", {}).get("type") == "json_schema":
            return (
                400,
                {
                    "error": {
                        "message": "response_format json_schema is not supported by this server",
                        "type": "invalid_request_error",
                    }
                },
                {},
            )
        if "context_4096" in self.quirks and prompt_tokens(body) > CONTEXT_WINDOW:
            n = prompt_tokens(body)
            return (
                400,
                {
                    "error": {
                        "code": 400,
                        "message": f"request ({n} tokens) exceeds the available context size "
                        f"({CONTEXT_WINDOW} tokens), try increasing it",
                        "type": "exceed_context_size_error",
                    }
                },
                {},
            )
        if fault == "no_choices":
            return (
                200,
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model"),
                    "choices": [],
                },
                {},
            )

        output = (body.get("response_format") or {}).get("type")
        if output == "json_schema" and "json_schema_400" in self.quirks:
            return (
                400,
                {
                    "error": {
                        "message": "response_format json_schema is not supported",
                        "type": "invalid_request_error",
                    }
                },
                {},
            )
        if output == "json_schema" and "json_schema_500" in self.quirks:
            return (
                500,
                {"error": {"message": LLAMA_CPP_VALIDATION_ERROR, "type": "internal_server_error"}},
                {},
            )
        if output == "json_object" and "json_object_refused" in self.quirks:
            return (
                400,
                {
                    "error": {
                        "message": "Unsupported response_format type: json_object",
                        "type": "invalid_request_error",
                    }
                },
                {},
            )
        if body.get("tools") and "tools_400" in self.quirks:
            return (
                400,
                {
                    "error": {
                        "message": "registry.ollama.ai/library/gemma3:1b does not support tools",
                        "type": "api_error",
                    }
                },
                {},
            )
        if body.get("tools") and "no_tool_calls" in self.quirks:
            return 200, self._completion(body, {"content": ""}, "stop"), {}
        if body.get("tools") and "tools_as_template_text" in self.quirks:
            return 200, self._completion(body, {"content": TOOLS_AS_TEMPLATE_TEXT}, "stop"), {}

        system = " ".join(
            m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "system"
        )
        offered = TOOLS_BLOCK.search(system) if not body.get("tools") else None
        if (
            offered and self.scenario.mode != "schema_filler"
        ):  # the tool choice asked for as JSON (a server without native tool calls)
            tools = [{"type": "function", "function": t} for t in json.loads(offered.group(1))]
            asked = dict(body, tools=tools)
            reply = self.handlers[role](asked) if role in self.handlers else self._default(role, asked, fault)
            choice = {
                "tool_calls": [
                    {"name": c["name"], "arguments": c["arguments"]} for c in reply.get("tool_calls") or []
                ],
                "answer": reply.get("content") or "",
            }
            reply = {"content": json.dumps(choice, ensure_ascii=False)}
        else:
            reply = self.handlers[role](body) if role in self.handlers else self._default(role, body, fault)
        if reply.get("http_status"):  # a handler can make the server itself fail this call
            status = reply["http_status"]
            return status, {"error": {"message": "internal error", "type": "server_error"}}, {}
        if (
            "json_object_ignored" in self.quirks
            and output != "json_schema"
            and (reply.get("content") or "").startswith("{")
        ):
            reply["content"] = (
                f"Sure! Here is the JSON you asked for:\n```json\n{reply['content']}\n```\nAnything else?"
            )
        finish = reply.pop("finish_reason", None)
        wordy = reply.pop("completion_tokens", None) or self.scenario.usage.get(role)
        if fault == "length":
            reply, finish = {"content": (reply.get("content") or "")[:40]}, "length"
        elif fault == "empty":
            reply = {"content": ""}
        elif fault == "malformed":
            reply = {"content": '{"answer": "unterminated'}
        elif fault == "schema":
            reply = {"content": json.dumps({"unexpected": True})}
        elif fault == "template_tokens":
            reply = dict(reply, content=(reply.get("content") or "") + TEMPLATE_TAIL)
        return (
            200,
            self._completion(body, reply, finish, wordy),
            ({"X-Fault": fault} if fault == "silent" else {}),
        )

    def chunks(self, body: dict, completion: dict, fault: str = "") -> list[dict]:
        """The completion cut into streamed chunks: the role, the content in pieces, each tool
        call (name first, then its arguments in pieces), the finish reason, then the usage when
        the request asked for it."""
        size = max(1, self.scenario.chunk_chars)
        base = {k: completion[k] for k in ("id", "created", "model") if k in completion}
        base["object"] = "chat.completion.chunk"

        def chunk(delta: dict, finish=None) -> dict:
            return dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

        out = []
        choices = completion.get("choices") or []
        if choices:
            message = choices[0]["message"]
            out.append(chunk({"role": "assistant", "content": ""}))
            content = message.get("content") or ""
            out += [chunk({"content": content[i : i + size]}) for i in range(0, len(content), size)]
            for index, call in enumerate(message.get("tool_calls") or []):
                head = {"index": index, "id": call["id"], "type": "function"}
                out.append(
                    chunk(
                        {
                            "tool_calls": [
                                dict(head, function={"name": call["function"]["name"], "arguments": ""})
                            ]
                        }
                    )
                )
                arguments = call["function"]["arguments"]
                out += [
                    chunk(
                        {"tool_calls": [{"index": index, "function": {"arguments": arguments[i : i + size]}}]}
                    )
                    for i in range(0, len(arguments), size)
                ]
            out.append(chunk({}, choices[0]["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage") and "no_stream_usage" not in self.quirks:
            out.append(dict(base, choices=[], usage=completion.get("usage")))
        if not out:
            out.append(dict(base, choices=[]))
        return out

    def _completion(self, body: dict, reply: dict, finish: str | None, wordy: int | None = None) -> dict:
        message = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = [
                {
                    "id": f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {
                        "name": c["name"],
                        "arguments": c["arguments"]
                        if isinstance(c["arguments"], str)
                        else json.dumps(c["arguments"], ensure_ascii=False),
                    },
                }
                for c in reply["tool_calls"]
            ]
        prompt_tokens = len(json.dumps(body.get("messages", []), ensure_ascii=False)) // 4
        completion_tokens = len(json.dumps(message, ensure_ascii=False)) // 4 + 5
        if wordy:
            bound = body.get("max_completion_tokens") or body.get("max_tokens") or wordy
            completion_tokens = max(completion_tokens, min(wordy, bound))
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish or ("tool_calls" if reply.get("tool_calls") else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        }

    def _embeddings(self, body: dict) -> dict:
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        dim = int(body.get("dimensions") or 384)
        data = []
        for i, text in enumerate(inputs):
            vec = [0.0] * dim
            for token in re.findall(r"\w", str(text).lower()):
                vec[hash(token) % dim] += 1.0
            norm = sum(v * v for v in vec) ** 0.5 or 1.0
            data.append({"object": "embedding", "index": i, "embedding": [v / norm for v in vec]})
        return {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }

    def _default(self, role: str, body: dict, fault: str | None) -> dict:
        s = self.scenario
        if s.mode == "schema_filler":
            return fill_schema(body)
        if s.invent and role in ("planner", "selector", "interpreter"):
            from tests.support import planted

            return planted.REPLIES[role](s.invent, body, self)
        question = question_of(body)
        if role == "planner":
            tools = re.findall(
                r"^- (\w+):",
                " ".join(m.get("content") or "" for m in body["messages"] if m["role"] == "system"),
                re.M,
            )
            subs = [
                {"question": f"{question} — {ASPECTS[i % len(ASPECTS)]}", "suggested_tools": tools[:2]}
                for i in range(s.sub_questions)
            ]
            return {
                "content": json.dumps(
                    {
                        "complexity": s.complexity,
                        "sub_questions": subs,
                        "hypotheses": s.hypotheses,
                        "rationale": "scripted",
                        "asks_for_judgement": s.asks_for_judgement,
                    }
                )
            }
        if role == "action":
            turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
            tools = body.get("tools") or []
            if fault == "unknown_tool":
                return {"tool_calls": [{"name": "delete_everything", "arguments": {"confirm": True}}]}
            if fault == "bad_args":
                name = tools[0]["function"]["name"] if tools else "search_channel_materials"
                return {"tool_calls": [{"name": name, "arguments": '{"query": oops'}]}
            last_user = next(
                (m.get("content") or "" for m in reversed(body["messages"]) if m["role"] == "user"), ""
            )
            # A compliant model searches when told to look for counter-evidence or to settle a conflict.
            targeted = "AGAINST these tentative conclusions" in last_user or "sources disagree" in last_user
            if not tools or (turns >= s.action_rounds and fault != "endless_tools" and not targeted):
                return {"content": "DONE"}
            ordered = sorted(
                tools,
                key=lambda t: (
                    t["function"]["name"] not in s.preferred_tools,
                    s.preferred_tools.index(t["function"]["name"])
                    if t["function"]["name"] in s.preferred_tools
                    else 0,
                ),
            )
            chosen = ordered[: s.tools_per_round]
            suffix = f" {turns + 1}" if turns else ""
            return {
                "tool_calls": [
                    {"name": t["function"]["name"], "arguments": _example_args(t, question + suffix)}
                    for t in chosen
                ]
            }
        if role == "reflection":
            # Count this research's reflections (researches run concurrently in benchmarks).
            round_no = sum(1 for r in self.calls("reflection") if question_of(r) == question)
            sufficient = round_no >= s.sufficient_after
            return {
                "content": json.dumps(
                    {
                        "sufficient": sufficient,
                        "missing": [] if sufficient else ["more evidence"],
                        "covered_sub_questions": [1],
                        "hypotheses": [
                            {"index": i + 1, "status": s.hypothesis_status} for i in range(len(s.hypotheses))
                        ],
                        "reasoning": "scripted",
                    }
                )
            }
        if role == "selector":
            return {"content": json.dumps(select_by_overlap(body, s.select_per_call, s.contradict))}
        if role == "interpreter":
            return {"content": json.dumps(interpret_from_facts(body), ensure_ascii=False)}
        if role == "judge":
            text = question.lower() if question else _user_text(body).lower()
            worth = any(k in text for k in s.judge_keywords) and len(text) > 15
            return {
                "content": json.dumps(
                    {
                        "worth_it": worth,
                        "confidence": 0.9 if worth else 0.05,
                        "reasons": [
                            "scripted: needs several sources" if worth else "scripted: a single fact"
                        ],
                    }
                )
            }
        if role == "bloom":
            return {"content": json.dumps({"level": "analyze", "confidence": 0.8, "rationale": "scripted"})}
        if role == "translation":
            from tests.support import scripted_translation

            return {"content": json.dumps(scripted_translation.reply(_user_text(body)), ensure_ascii=False)}
        if role == "entailment":
            payload = re.search(r"<observations>\n(.*)\n</observations>", _user_text(body), re.S)
            items = json.loads(payload.group(1)) if payload else []
            return {
                "content": json.dumps(
                    {
                        "results": [
                            {
                                "id": i["id"],
                                "entailed": overlap_entails(i["statement"], i["passages"])
                                and numbers_agree(i["statement"], i["passages"]),
                            }
                            for i in items
                        ]
                    }
                )
            }
        if role == "coverage":
            # The evaluation's rubric question: the point's words in the answer's sentences
            # (whether its figures are right is the entailment question's business).
            payload = re.search(r"<observations>\n(.*)\n</observations>", _user_text(body), re.S)
            items = json.loads(payload.group(1)) if payload else []
            results = [
                {"id": i["id"], "addressed": overlap_entails(i["statement"], i["passages"])} for i in items
            ]
            return {"content": json.dumps({"results": results})}
        if role == "context":
            vague = any(
                w in question.lower() for w in ("最近", "近年", "recent", "latest", "nowadays")
            ) and not re.search(r"\d{4}", question)
            questions = (
                [
                    {
                        "key": "time_range",
                        "question": "Which years should the research cover?",
                        "default": "2021-2026",
                    }
                ]
                if vague
                else []
            )
            # A comparison of companies that names none of them, nor the figures: ask which.
            unnamed = any(w in question.lower() for w in ("公司", "companies")) and not re.search(
                r"[A-Z][a-z]+", question
            )
            if unnamed:
                questions += [
                    {
                        "key": "entities",
                        "question": "Which companies should be compared?",
                        "default": "NVIDIA, Apple",
                    },
                    {"key": "metrics", "question": "Which figures?", "default": "revenue, gross margin"},
                ]
            return {"content": json.dumps({"needs_clarification": bool(questions), "questions": questions})}
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        if schema:  # any other structured request (check_llm's probe): the least valid object
            return {"content": json.dumps(_least_valid(schema))}
        return {"content": f"Scripted answer to: {_user_text(body)[-200:]}"}


# ---------------------------------------------------------------------- the selection and the interpretation

SPAN_LINE = re.compile(r"^\[(\d+\.\d+)\] (.*)$", re.M)
FACT_LINE = re.compile(r"^\[F(\d+)\] (.*)$", re.M)
NEGATION = re.compile(r"\b(not|no|never|none)\b|不|沒有|未", re.I)


def observations_of(body: dict) -> str:
    match = re.search(r"<observations>\n(.*)\n</observations>", _user_text(body), re.S)
    return match.group(1) if match else ""


def candidates_in(body: dict) -> list[tuple[str, str]]:
    """The (span id, text) a selection request offers, in its order."""
    return SPAN_LINE.findall(observations_of(body))


def sub_question_of(body: dict) -> str:
    """The sub-question a selection request asks about (the question for "as a whole")."""
    text = _user_text(body)
    match = re.search(r"^Sub-question \d+: (.*)$", text, re.M)
    return match.group(1) if match else question_of(body)


def hypotheses_of(body: dict) -> list[str]:
    text = _user_text(body)
    block = re.search(r"Hypotheses:\n((?:\d+\. .*\n?)+)", text)
    return re.findall(r"^\d+\. (.*)$", block.group(1), re.M) if block else []


def selection(span_ids: list[str], contradictions: list[tuple[str, str]] = ()) -> dict:
    """A selection step's reply naming these spans (each a fact of its own) and these pairs."""
    facts = [{"span_ids": [i], "hypothesis": 0, "stance": "none"} for i in list(dict.fromkeys(span_ids))[:8]]
    pairs = [{"span_ids": [a, b]} for a, b in list(contradictions)[:3]]
    return {"content": json.dumps({"facts": facts, "contradictions": pairs})}


def _bigrams(text: str) -> set[str]:
    words = re.findall(r"[a-z]{3,}", text.lower())
    return {a + " " + b for a, b in zip(words, words[1:])}


def select_by_overlap(body: dict, per_call: int, contradict: bool = False) -> dict:
    """A plausible selector: the candidates sharing the most words and bigrams with the
    sub-question (ties: the order offered), each tagged for the hypothesis it shares most words
    with (against it when the span negates), and nothing that shares no word."""
    # It reads both languages (a tiny dictionary's worth): a Chinese sub-question finds English spans.
    asked = sub_question_of(body)
    asked += "\n" + translate(asked, "en") + "\n" + translate(asked, "zh")
    wanted = _tokens(asked)
    pairs = _bigrams(asked)
    scored = []
    for order, (span_id, text) in enumerate(candidates_in(body)):
        score = len(wanted & _tokens(text)) + 2 * len(pairs & _bigrams(text))
        if score:
            scored.append((-score, order, span_id, text))
    chosen = sorted(scored)[: max(0, per_call)]
    hypotheses = hypotheses_of(body)
    facts = []
    for _, _, span_id, text in chosen:
        tag, stance = 0, "none"
        overlaps = [len(_tokens(h) & _tokens(text)) for h in hypotheses]
        if overlaps and max(overlaps) >= 2:
            tag = overlaps.index(max(overlaps)) + 1
            stance = "against" if NEGATION.search(text) else "for"
        facts.append({"span_ids": [span_id], "hypothesis": tag, "stance": stance})
    contradictions = []
    if contradict:
        by_source = list(dict.fromkeys(f["span_ids"][0] for f in facts))
        firsts = {}
        for span_id in by_source:
            firsts.setdefault(span_id.split(".")[0], span_id)
        if len(firsts) >= 2:
            contradictions.append({"span_ids": list(firsts.values())[:2]})
    return {"facts": facts, "contradictions": contradictions}


# A tiny bilingual dictionary for the scripted translations: enough to make a translation look
# like one, while every number and name stays as it is (what the engine checks).
DICTIONARY = {
    "zh": {
        "learning analytics": "學習分析",
        "bloom's taxonomy": "布魯姆分類法",
        "students": "學生",
        "course": "課程",
        "data": "資料",
    },
    "en": {
        "學習分析": "learning analytics",
        "布魯姆分類法": "Bloom's taxonomy",
        "布魯姆分類": "Bloom's taxonomy",
        "學生": "students",
        "課程": "course",
        "資料": "data",
    },
}


def translate(text: str, to: str = "") -> str:
    """The dictionary's words of `text` in `to` ("en" or "zh"; either way when not given)."""
    out = text
    for language in [to] if to else ["en", "zh"]:
        for source, target in sorted(DICTIONARY[language].items(), key=lambda kv: -len(kv[0])):
            out = re.sub(re.escape(source), target, out, flags=re.I)
    return out


def interpret_from_facts(body: dict) -> dict:
    """A plausible interpreter that adds nothing: reasoning and an assumption made of the facts'
    own first words, two suggestions made of the question's words, and a
    dictionary translation of each span it is asked to translate."""
    text = observations_of(body)
    facts = FACT_LINE.findall(text)
    items = []
    for n, (fact_id, words) in enumerate(facts[:3]):
        head = " ".join(words.split()[:8]) if " " in words else words[:20]
        items.append({"kind": "assumption" if n == 2 else "reasoning", "text": head, "facts": [int(fact_id)]})
    question = question_of(body).rstrip("?？ ")
    # Two narrower questions made of its words.
    if not question:
        suggestions = []
    elif re.search(r"[\u3400-\u9fff]", question):
        suggestions = [f"課程教材如何說明{question}？", f"哪些來源討論{question}？"]
    else:
        suggestions = [
            f"{question}, according to the course materials?",
            f"Which sources discuss this: {question}?",
        ]
    translations = []
    listed = text.split("Spans to translate into", 1)
    if len(listed) == 2:
        to = "en" if listed[1].lstrip().startswith("English") else "zh"
        translations = [
            {"span": span_id, "text": translate(words, to)} for span_id, words in SPAN_LINE.findall(listed[1])
        ]
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    wanted = set(schema.get("properties") or {"items": 1, "suggestions": 1, "translations": 1})
    reply = {"items": items, "suggestions": suggestions, "translations": translations}
    return {k: v for k, v in reply.items() if k in wanted}


def fill_schema(body: dict) -> dict:
    """A server that knows nothing of the prompts: the JSON Schema the request sends (strict
    json_schema, or json_object carrying it), filled with the least it allows; a request without
    one (a tool request, a chat) gets no text and no tool call."""
    response_format = body.get("response_format") or {}
    schema = (response_format.get("json_schema") or {}).get("schema") or response_format.get("schema")
    if not schema:
        return {"content": ""}
    return {"content": json.dumps(_least_valid(schema, schema), ensure_ascii=False)}


def _least_valid(schema: dict, root: dict | None = None):
    root = root if root is not None else schema
    if "$ref" in schema:  # a local reference, "#/$defs/name"
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return _least_valid(target, root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return _least_valid(schema["anyOf"][0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {name: _least_valid(schema["properties"][name], root) for name in schema.get("required", [])}
    if kind == "array":
        return [_least_valid(schema.get("items") or {}, root) for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return {"boolean": False, "null": None, "string": ""}.get(kind, "")


def main() -> None:  # pragma: no cover - used by bench scripts
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per LLM call, every role")
    parser.add_argument("--action-rounds", type=int, default=1)
    parser.add_argument("--tools-per-round", type=int, default=2)
    parser.add_argument(
        "--sufficient-after", type=int, default=1, help="reflection says sufficient from this round on"
    )
    parser.add_argument(
        "--quirk",
        action="append",
        default=[],
        choices=sorted(QUIRKS),
        help="behave like a server with this quirk",
    )
    parser.add_argument("--complexity", default="moderate", choices=["simple", "moderate", "complex"])
    parser.add_argument(
        "--prefer", action="append", default=[], help="call this tool first when it is offered (repeatable)"
    )
    parser.add_argument("--first-token", type=float, default=0.0, help="seconds before the first token")
    parser.add_argument("--prefill-rate", type=float, default=0.0, help="prompt tokens read per second")
    parser.add_argument("--decode-rate", type=float, default=0.0, help="answer tokens written per second")
    parser.add_argument("--tokens-per-minute", type=int, default=0, help="answer 429 above this")
    parser.add_argument("--requests-per-minute", type=int, default=0, help="answer 429 above this")
    parser.add_argument("--rate-window", type=float, default=60.0, help="the rate limits' window, seconds")
    args = parser.parse_args()
    server = ScriptedLLM(
        Scenario(
            latency={"*": args.latency},
            action_rounds=args.action_rounds,
            tools_per_round=args.tools_per_round,
            sufficient_after=args.sufficient_after,
            complexity=args.complexity,
            preferred_tools=args.prefer,
            first_token=args.first_token,
            prefill_rate=args.prefill_rate,
            decode_rate=args.decode_rate,
            tokens_per_minute=args.tokens_per_minute,
            requests_per_minute=args.requests_per_minute,
            rate_window=args.rate_window,
        )
    ).start(args.port)
    server.quirk(*args.quirk)
    print(server.url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    main()
