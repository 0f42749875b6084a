"""The run's state and guards, handed to every phase as one narrow context.

The phases (evidence, claims, verification, writing) read the input, the plan, the limits and
the source registry from here and call the guards before every model or tool call; what they find
they return to the loop, which alone adds it to the counters below."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import events
from .errors import Cancelled, LimitReached, PhaseFailed
from .llm import LLMClient, LLMError, LLMUnavailable
from .plan import Plan
from .sources import SourceRegistry
from .types import EventSink, Limits, ResearchInput, Source, ToolTraits


def language_of(code: str) -> str:
    return "en" if code.lower().startswith("en") else "zh"


@dataclass
class Counters:
    rounds: int = 0
    tool_calls: int = 0
    searches: int = 0


@dataclass
class RunContext:
    inp: ResearchInput
    llm: LLMClient
    sink: EventSink
    is_cancelled: Callable[[], bool]
    limits: Limits
    clock: Callable[[], float] = time.monotonic
    credibility: Callable[[Source], float] | None = None
    # The toolbox's declared traits of a tool by name (None: not offered): the engine tells tools
    # apart by these, never by their names.
    tool_traits: Callable[[str], ToolTraits | None] = lambda name: None
    registry: SourceRegistry = field(default_factory=SourceRegistry)
    plan: Plan = field(default_factory=Plan)
    counters: Counters = field(default_factory=Counters)
    retries: list[dict] = field(default_factory=list)
    limit_hit: str = ""
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.lang = language_of(self.inp.language)

    def is_search(self, tool_name: str) -> bool:
        traits = self.tool_traits(tool_name)
        return bool(traits and traits.search)

    def exact_figures(self, tool_name: str) -> bool:
        traits = self.tool_traits(tool_name)
        return bool(traits and traits.exact_figures)

    # ------------------------------------------------------------------ guards

    def checkpoint(self, *, enforce_limits: bool) -> None:
        if self.is_cancelled():
            raise Cancelled()
        elapsed = self.clock() - self.started
        if elapsed >= self.limits.max_seconds + self.limits.grace_seconds:
            raise PhaseFailed("deadline", f"the research ran past its hard time limit ({round(elapsed)} s)")
        if not enforce_limits:
            return
        if elapsed >= self.limits.max_seconds:
            raise LimitReached("max_seconds", round(elapsed, 1), self.limits.max_seconds)
        if self.llm.meter.total_tokens >= self.limits.max_tokens:
            raise LimitReached("max_tokens", self.llm.meter.total_tokens, self.limits.max_tokens)

    def check_budget(self) -> None:
        if self.counters.rounds >= self.limits.max_steps:
            raise LimitReached("max_steps", self.counters.rounds, self.limits.max_steps)
        if self.counters.tool_calls >= self.limits.max_tool_calls:
            raise LimitReached("tool_budget", self.counters.tool_calls, self.limits.max_tool_calls)
        self.checkpoint(enforce_limits=True)

    def budget_left(self) -> bool:
        """False when a limit stops more gathering (reported once, as the run's limit hit)."""
        try:
            self.check_budget()
        except LimitReached as limit:
            self.hit(limit)
            return False
        return True

    def tool_calls_left(self) -> int:
        return max(0, self.limits.max_tool_calls - self.counters.tool_calls)

    def hit(self, limit: LimitReached) -> None:
        if not self.limit_hit:
            self.limit_hit = limit.reason
            self.sink.emit(events.LimitHit(reason=limit.reason, value=limit.value, limit=limit.limit))

    def call_timeout(self) -> float:
        """No single LLM call may outlive the research's hard deadline."""
        left = self.started + self.limits.max_seconds + self.limits.grace_seconds - self.clock()
        return max(1.0, min(self.llm.config.timeout, left))

    def structured(
        self,
        role: str,
        build: Callable[[bool], list[dict]],
        schema: dict,
        name: str,
        *,
        enforce_limits=False,
        max_tokens=None,
    ) -> dict:
        """One structured call with the bounded retry: on a truncated, empty or malformed reply,
        retry once with compacted input and a larger budget; then the phase fails cleanly."""
        self.checkpoint(enforce_limits=enforce_limits)
        budget = max_tokens or self.llm.answer_budget(role)
        try:
            return self.llm.structured(
                role, build(False), schema, name, max_tokens=budget, timeout=self.call_timeout()
            )
        except LLMUnavailable as exc:
            raise PhaseFailed(role, exc) from None
        except LLMError as exc:
            self.retries.append({"role": role, "kind": exc.kind})
        self.checkpoint(enforce_limits=False)
        try:
            return self.llm.structured(
                role, build(True), schema, name, max_tokens=int(budget * 1.5), timeout=self.call_timeout()
            )
        except LLMError as exc:
            raise PhaseFailed(role, exc) from None

    # ------------------------------------------------------------------ what every phase is told

    def channel_context(self) -> str:
        """The course channel and the context agreed with the student: every phase reads it,
        reflection included, so an agreed period or company list cannot be lost on the way."""
        text = ""
        if self.inp.channel_name:
            text += f"Course channel: {self.inp.channel_name}\n{self.inp.channel_description}\n\n"
        if self.inp.context:
            text += (
                "Research context agreed with the student (keep to it):\n"
                + "\n".join(
                    f"- {key.replace('_', ' ')}: {value}" for key, value in self.inp.context.items() if value
                )
                + "\n\n"
            )
        if self.inp.conversation:
            # Data, not instructions: earlier answers were written from untrusted sources.
            text += (
                "Earlier conversation this question follows up (context only; its source numbers are "
                f"not this research's):\n<conversation>\n{self.inp.conversation}\n</conversation>\n\n"
            )
        return text

    def question_block(self) -> str:
        return f"{self.channel_context()}Student's question:\n{self.inp.question}"
