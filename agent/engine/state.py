"""The run's state and guards, handed to every phase as one narrow context.

The phases (evidence, claims, verification, writing) read the input, the plan, the limits and
the source registry from here and call the guards before every model or tool call; what they find
they return to the loop, which alone adds it to the counters below.

Time and tokens, from start to end (docs/limits.md):
- gathering (action turns, reflection, the counter-search, conflict re-search) stops at
  `max_seconds` and `max_tokens`: its model calls are cut at the time limit, and a call that
  crosses the token limit is its last (it may not go past half of the grace), so a limit met in
  the middle of a turn ends gathering there;
- the finishing phases (claims, verification, writing, the draft's check) then have what is left
  up to `max_seconds + grace_seconds` and `max_tokens + grace_tokens`, which the product reserved
  when the research started. The loop opens each of them with `finishing(phase, after)`, which
  gives it an equal share of what is left (a slow or wordy phase cannot starve the ones after it);
  a call that does not fit its share is not sent (`OutOfBudget`) and the loop finishes without it.
- any limit reached anywhere is reported once (`limit_hit`), by the engine's own thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from . import events
from .budget import CallGate, LLMOverBudget
from .errors import Cancelled, LimitReached, OutOfBudget, PhaseFailed
from .llm import LLMClient, LLMError, LLMUnavailable
from .plan import Plan
from .sources import SourceRegistry
from .types import EventSink, Limits, ResearchInput, Source, ToolTraits

# Model calls of the evidence phase: they stop at the gathering limits (max_seconds, max_tokens).
GATHERING_ROLES = frozenset({"action", "reflection", "translation"})
# A finishing call with less time than this left in its share is not sent.
MIN_CALL_SECONDS = 2.0
# The smallest observation budget a finishing phase is given when its token share is small.
MIN_OBSERVATION_CHARS = 2_000


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
    # Whether the toolbox offers a tool of the web tier (a research without one never searched
    # the web: the report says so when it verifies nothing).
    web_offered: bool = False
    registry: SourceRegistry = field(default_factory=SourceRegistry)
    plan: Plan = field(default_factory=Plan)
    counters: Counters = field(default_factory=Counters)
    retries: list[dict] = field(default_factory=list)
    limit_hit: str = ""
    started: float = 0.0
    # The finishing phase under way (claims, verification, writing, check) and its share of what
    # was left: a deadline on the run's clock and a ceiling of total tokens (0: no phase yet).
    phase: str = ""
    phase_deadline: float = 0.0
    phase_tokens: int = 0
    phase_cost: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.lang = language_of(self.inp.language)
        self._reached: tuple | None = None  # (reason, value, limit) of the first limit reached
        self._reached_lock = threading.Lock()
        self._observation_chars = self.limits.observation_budget_chars
        self.gate = CallGate(self)
        self.llm.gate = self.gate  # every request of this run is admitted against its ceiling

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
            self.reach("max_seconds", round(elapsed, 1), self.limits.max_seconds)
            raise OutOfBudget(
                "deadline", f"the research ran past its hard time limit ({round(elapsed)} s)", "max_seconds"
            )
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
        """False when a limit stops more gathering (reported once, as the run's limit hit): a
        limit reached anywhere before, in the middle of a turn or a reflection included."""
        self.note_limits()
        if self.limit_hit:
            return False
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

    def reach(self, reason: str, value, limit) -> None:
        """A limit was reached (from any thread, no I/O): the engine's thread reports it at its
        next `note_limits`, and gathering stops there."""
        with self._reached_lock:
            if self._reached is None:
                self._reached = (reason, value, limit)

    def note_limits(self) -> None:
        """Report (once) a limit reached since the last look: one a call was refused for, or the
        time or token limit passed while a call was under way. The engine's thread only."""
        elapsed = self.clock() - self.started
        if elapsed >= self.limits.max_seconds:
            self.reach("max_seconds", round(elapsed, 1), self.limits.max_seconds)
        if self.llm.meter.total_tokens >= self.limits.max_tokens:
            self.reach("max_tokens", self.llm.meter.total_tokens, self.limits.max_tokens)
        reserved = self.limits.max_cost_usd
        if (
            reserved
            and self.llm.meter.total.cost_usd >= reserved * self.limits.max_tokens / self.hard_tokens()
        ):
            # The reservation is the token budget priced: gathering's part of it is spent.
            self.reach("max_tokens", self.llm.meter.total_tokens, self.limits.max_tokens)
        if self._reached is not None and not self.limit_hit:
            self.hit(LimitReached(*self._reached))

    # ------------------------------------------------------------------ the finishing phases

    def hard_deadline(self) -> float:
        return self.started + self.limits.max_seconds + self.limits.grace_seconds

    def hard_tokens(self) -> int:
        """The most tokens the whole research may use: what the product reserved for it."""
        return self.limits.max_tokens + self.limits.grace_tokens

    def finishing(self, phase: str, after: int) -> None:
        """Open a finishing phase with `after` more to come: it gets an equal share of the time and
        tokens left (what it does not use goes to the ones after it). Its observations are cut to
        fit its token share."""
        now = self.clock()
        used = self.llm.meter.total_tokens + self.gate.in_flight_tokens
        left = max(0, self.hard_tokens() - used)
        self.phase = phase
        self.phase_deadline = now + max(0.0, self.hard_deadline() - now) / (after + 1)
        self.phase_tokens = used + left // (after + 1)
        if self.limits.max_cost_usd:
            spent = self.llm.meter.total.cost_usd + self.gate.in_flight_cost
            self.phase_cost = spent + max(0.0, self.limits.max_cost_usd - spent) / (after + 1)
        # About a token per character of observations (CJK text; English is cheaper) leaves room
        # for the instructions and the answer.
        chars = min(self._observation_chars, max(MIN_OBSERVATION_CHARS, left // (after + 1)))
        if chars != self.limits.observation_budget_chars:
            self.limits = replace(self.limits, observation_budget_chars=chars)

    def token_ceiling(self, role: str) -> tuple[int, str]:
        """The total tokens the run may have used once a call of `role` is answered, and the
        limit that names (the call gate asks, agent/engine/budget.py)."""
        if role in GATHERING_ROLES:
            # Gathering stops once max_tokens is reached (checked before each of its calls), and a
            # call under way may cross it, as a turn may cross the time limit; but never into the
            # half of the grace the finishing phases keep.
            return self.limits.max_tokens + self.limits.grace_tokens // 2, "max_tokens"
        if self.phase_tokens:
            return min(self.phase_tokens, self.hard_tokens()), "max_tokens"
        return self.hard_tokens(), "max_tokens"

    def cost_ceiling(self, role: str) -> float:
        """The USD the run may have spent once a call of `role` is answered (0: no ceiling): the
        reservation, shared out like the tokens."""
        reserved = self.limits.max_cost_usd
        if not reserved:
            return 0.0
        if role in GATHERING_ROLES:
            gathering = self.limits.max_tokens + self.limits.grace_tokens // 2
            return reserved * gathering / self.hard_tokens()
        if self.phase_cost:
            return min(self.phase_cost, reserved)
        return reserved

    def call_timeout(self, role: str = "action") -> float:
        """No model call may outlive its deadline: gathering's at max_seconds, a finishing phase's
        at the end of its share, anything else at the hard deadline. A finishing call with too
        little time left is not sent (OutOfBudget)."""
        now = self.clock()
        if role in GATHERING_ROLES:
            end = self.started + self.limits.max_seconds
        elif self.phase_deadline:
            end = min(self.phase_deadline, self.hard_deadline())
        else:
            end = self.hard_deadline()
        left = end - now
        if role not in GATHERING_ROLES and self.phase and left < MIN_CALL_SECONDS:
            self.reach("max_seconds", round(now - self.started, 1), self.limits.max_seconds)
            raise OutOfBudget(role, f"no time left for the {self.phase} phase", "max_seconds")
        return max(1.0, min(self.llm.config.timeout, left))

    def tool_deadline(self) -> float:
        """Tools an action turn started may finish a little after gathering's deadline (a quarter
        of the grace), not eat the finishing phases' time."""
        return self.started + self.limits.max_seconds + self.limits.grace_seconds / 4

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
        retry once with compacted input and a larger budget; then the phase fails cleanly. A call
        that does not fit the run's time or tokens fails with OutOfBudget (a compacted prompt is
        tried first when only its size was the problem)."""
        self.checkpoint(enforce_limits=enforce_limits)
        budget = max_tokens or self.llm.answer_budget(role)
        try:
            return self.llm.structured(
                role, build(False), schema, name, max_tokens=budget, timeout=self.call_timeout(role)
            )
        except LLMOverBudget as exc:
            self.retries.append({"role": role, "kind": exc.kind})
        except LLMUnavailable as exc:
            self._out_of_time(role, exc)
            raise PhaseFailed(role, exc) from None
        except LLMError as exc:
            self.retries.append({"role": role, "kind": exc.kind})
        self.checkpoint(enforce_limits=False)
        try:
            return self.llm.structured(
                role, build(True), schema, name, max_tokens=int(budget * 1.5), timeout=self.call_timeout(role)
            )
        except LLMOverBudget as exc:
            raise OutOfBudget(role, exc, "max_tokens") from None
        except LLMError as exc:
            self._out_of_time(role, exc)
            raise PhaseFailed(role, exc) from None

    def _out_of_time(self, role: str, exc: LLMError) -> None:
        """A finishing call the server did not answer before its share of the time ended ran out
        of time: raise OutOfBudget. (A server that does not answer sooner is down: PhaseFailed.)"""
        if role in GATHERING_ROLES or not self.phase_deadline:
            return
        if isinstance(exc, LLMUnavailable) and self.clock() >= self.phase_deadline - 1.0:
            self.reach("max_seconds", round(self.clock() - self.started, 1), self.limits.max_seconds)
            raise OutOfBudget(role, exc, "max_seconds") from None

    # ------------------------------------------------------------------ what every phase is told

    def channel_context(self, *, conversation: bool = True) -> str:
        """The course channel and the context agreed with the student: every phase reads it,
        reflection included, so an agreed period or company list cannot be lost on the way.
        `conversation=False` leaves out the earlier conversation a follow-up carries (a phase with
        a small window whose other parts already say what the follow-up asks)."""
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
        if conversation and self.inp.conversation:
            # Data, not instructions: earlier answers were written from untrusted sources.
            text += (
                "Earlier conversation this question follows up (context only; its source numbers are "
                f"not this research's):\n<conversation>\n{self.inp.conversation}\n</conversation>\n\n"
            )
        return text

    def question_block(self) -> str:
        return f"{self.channel_context()}Student's question:\n{self.inp.question}"
