"""The research's spending ceiling, checked before every model request it sends.

A research reserves its worst case once, when it starts (the product prices `max_tokens +
grace_tokens` at the dearest rate, or a fixed amount, and passes that as `max_cost_usd`). Its
calls must stay inside that reservation whatever the phase, so every request is admitted here
first, by the LLM client itself (`LLMClient.gate`), right before it is sent:

- its prompt is estimated (UTF-8 bytes / 3, never less than what this run's server has counted
  per byte so far), and its answer bound is the max tokens the request carries;
- the request is admitted only if what the run has used, plus the worst case of the requests
  still in flight (verification sends batches side by side), plus this one's worst case, fits the
  ceiling the run gives its role (for action and reflection, the gathering limit plus at most half
  the grace; for claims, verification and writing, the finishing phase's share of what is left:
  `RunContext.token_ceiling`) and the cost reservation;
- the answer bound is lowered to what is left when that is less than the role's usual one; when
  fewer than MIN_COMPLETION_TOKENS are left, the request is refused (`LLMOverBudget`) and the run
  is told which limit was reached.

What a server bills is what it reports; the estimate is an upper bound for the byte-level BPE
tokenisers of the models we run (a token is at least one byte, most English tokens are four), and
it learns a server that counts more per byte than that from its first answers. The gate does no
I/O and emits nothing: it may run in a phase's helper threads."""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from .llm import LLMError


class RunContext(Protocol):
    """What the gate reads of the run (state.RunContext, which owns the gate: a protocol here,
    so that the two modules do not import each other)."""

    llm: Any

    def token_ceiling(self, role: str) -> tuple[int, str]: ...

    def cost_ceiling(self, role: str) -> float | None: ...

    def reach(self, reason: str, used: float, ceiling: float) -> None: ...


MIN_COMPLETION_TOKENS = 256
BYTES_PER_TOKEN = 3
# Chat templates add a few tokens around every message.
TOKENS_PER_MESSAGE = 8


class LLMOverBudget(LLMError):
    """The request does not fit what is left of the research's token or cost budget."""

    kind = "over_budget"


@dataclass
class Grant:
    tokens: int
    cost: float
    prompt_bytes: int


def message_bytes(messages: list[dict], tools: list | None = None) -> tuple[int, int]:
    """(UTF-8 bytes of the messages' text and the tool schemas, number of messages)."""
    size = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            size += len(content.encode())
        elif content is not None:
            size += len(json.dumps(content, ensure_ascii=False).encode())
        if message.get("tool_calls"):
            size += len(json.dumps(message["tool_calls"], ensure_ascii=False).encode())
    if tools:
        size += len(json.dumps(tools, ensure_ascii=False).encode())
    return size, len(messages)


class CallGate:
    def __init__(self, run: RunContext) -> None:
        self.run = run
        self._lock = threading.Lock()
        self.in_flight_tokens = 0
        self.in_flight_cost = 0.0
        self.tokens_per_byte = 1 / BYTES_PER_TOKEN

    def estimate(self, prompt_bytes: int, messages: int) -> int:
        return math.ceil(prompt_bytes * self.tokens_per_byte) + TOKENS_PER_MESSAGE * messages

    def admit(self, role: str, model: str, messages: list[dict], params: dict) -> Grant:
        """Admit one request (lowering its answer bound in `params` when less is left) or raise
        LLMOverBudget."""
        run = self.run
        key = "max_tokens" if "max_tokens" in params else "max_completion_tokens"
        wanted = int(params.get(key) or 0)
        prompt_bytes, count = message_bytes(messages, params.get("tools"))
        prompt = self.estimate(prompt_bytes, count)
        price_in, price_out = run.llm.config.price(model)
        ceiling, reason = run.token_ceiling(role)
        with self._lock:
            used = run.llm.meter.total_tokens + self.in_flight_tokens
            room = ceiling - used - prompt
            max_cost = run.cost_ceiling(role)
            if max_cost and price_out > 0:
                cost_used = run.llm.meter.total.cost_usd + self.in_flight_cost
                left_usd = max_cost - cost_used - prompt * price_in / 1_000_000
                room = min(room, int(left_usd * 1_000_000 / price_out))
            answer = min(wanted, room) if wanted else room
            if answer < MIN_COMPLETION_TOKENS:
                run.reach(reason, used, ceiling)
                raise LLMOverBudget(
                    f"{role}: the request (about {prompt} prompt tokens) does not fit the "
                    f"{max(0, ceiling - used)} tokens left of the research's budget"
                )
            cost = (prompt * price_in + answer * price_out) / 1_000_000
            self.in_flight_tokens += prompt + answer
            self.in_flight_cost += cost
        params[key] = answer
        return Grant(tokens=prompt + answer, cost=cost, prompt_bytes=prompt_bytes)

    def release(self, grant: Grant, prompt_tokens: int | None = None) -> None:
        """The request is over (its usage, if any, is in the meter already). `prompt_tokens`: what
        the server counted, to learn a tokeniser that counts more per byte than the estimate."""
        with self._lock:
            self.in_flight_tokens -= grant.tokens
            self.in_flight_cost -= grant.cost
            if prompt_tokens and grant.prompt_bytes:
                self.tokens_per_byte = max(self.tokens_per_byte, prompt_tokens / grant.prompt_bytes)
