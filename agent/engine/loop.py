"""The research loop: Plan → (Action → Observation → Reflect)* → [Counter-search] → Synthesize
→ [targeted re-search on conflicts, at most twice] → Verify.

A macro plan-and-execute state machine with a ReAct loop inside the evidence phase. It imports
no Django: it receives a toolbox bound to one user and channel, an LLM client, an event sink and
a cancellation check, and returns a ResearchResult. Cancellation and limits are checked before
every LLM call and every tool call.
"""

from __future__ import annotations

import time
from typing import Callable

from . import prompts, schemas
from .errors import Cancelled, LimitReached, PhaseFailed
from .evidence import Gatherer, TurnFailed
from .llm import LLMClient, LLMError, LLMUnavailable
from .sources import SourceRegistry
from .types import EventSink, Limits, ResearchInput, ResearchResult, Source, Toolbox
from .verification import finalize
from .writing import Draft, synthesize


def _lang(code: str) -> str:
    return "en" if code.lower().startswith("en") else "zh"


class ResearchRun:
    def __init__(
        self,
        inp: ResearchInput,
        *,
        llm: LLMClient,
        tools: Toolbox,
        sink: EventSink,
        is_cancelled: Callable[[], bool],
        limits: Limits,
        clock: Callable[[], float] = time.monotonic,
        credibility: Callable[[Source], float] | None = None,
        review_plan: Callable[[dict], dict] | None = None,
    ):
        self.inp, self.llm, self.tools, self.sink = inp, llm, tools, sink
        self.is_cancelled, self.limits, self.clock = is_cancelled, limits, clock
        self.credibility = credibility
        self.review_plan = review_plan
        self.registry = SourceRegistry()
        self.started = clock()
        self.plan: dict = {}
        self.rounds = 0
        self.tool_calls = 0
        self.searches = 0
        self.step_index = 0
        self.limit_hit = ""
        self.retries: list[dict] = []
        self.hypothesis_status: dict[int, str] = {}
        self.conflicts_found = 0
        self.lang = _lang(inp.language)

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
        if self.rounds >= self.limits.max_steps:
            raise LimitReached("max_steps", self.rounds, self.limits.max_steps)
        if self.tool_calls >= self.limits.max_tool_calls:
            raise LimitReached("tool_budget", self.tool_calls, self.limits.max_tool_calls)
        self.checkpoint(enforce_limits=True)

    def hit(self, limit: LimitReached) -> None:
        if not self.limit_hit:
            self.limit_hit = limit.reason
            self.sink.emit("limit_hit", {"reason": limit.reason, "value": limit.value, "limit": limit.limit})

    def call_timeout(self) -> float:
        """No single LLM call may outlive the research's hard deadline."""
        left = self.started + self.limits.max_seconds + self.limits.grace_seconds - self.clock()
        return max(1.0, min(self.llm.config.timeout, left))

    def structured(self, role: str, build: Callable[[bool], list[dict]], schema: dict, name: str, *, enforce_limits=False, max_tokens=None) -> dict:
        """One structured call with the bounded retry: on a truncated, empty or malformed reply,
        retry once with compacted input and a larger budget; then the phase fails cleanly."""
        self.checkpoint(enforce_limits=enforce_limits)
        budget = max_tokens or (
            self.llm.config.synthesizer_max_tokens if role == "synthesizer" else self.llm.config.default_max_tokens
        )
        try:
            return self.llm.structured(role, build(False), schema, name, max_tokens=budget, timeout=self.call_timeout())
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

    def channel_context(self) -> str:
        text = ""
        if self.inp.channel_name:
            text += f"Course channel: {self.inp.channel_name}\n{self.inp.channel_description}\n\n"
        if self.inp.context:
            text += "Research context agreed with the student:\n" + "\n".join(
                f"- {key.replace('_', ' ')}: {value}" for key, value in self.inp.context.items() if value
            ) + "\n\n"
        if self.inp.conversation:
            # Data, not instructions: earlier answers were written from untrusted sources.
            text += ("Earlier conversation this question follows up (context only; its source numbers are "
                     f"not this research's):\n<conversation>\n{self.inp.conversation}\n</conversation>\n\n")
        return text

    # ------------------------------------------------------------------ the state machine

    def run(self) -> ResearchResult:
        gatherer = None
        try:
            self.plan_phase()
            gatherer = Gatherer(self)
            stop_reason = self.evidence_phase(gatherer)
            counter_searches = self.counter_search(gatherer) if self.wants_counter_search() else None
            self.checkpoint(enforce_limits=False)  # a cancel during the last call stops before writing
            draft = synthesize(self)
            if len(self.registry) == 0:
                # The engine's own "nothing to cite" message: nothing to verify, nothing to mark.
                answer, citations = draft.answer, []
                verification = {"status": "no_sources", "claims": [], "counts": {}, "conflicts": [], "retries": self.retries}
                self.sink.emit("verification_done", {"status": "no_sources", "counts": {}, "conflicts": 0, "citations": 0})
            else:
                self.conflicts_found = len(draft.conflicts)
                draft, conflict_rounds = self.resolve_conflicts(gatherer, draft)
                answer, citations, verification = finalize(
                    self, draft, conflict_rounds=conflict_rounds, counter_searches=counter_searches, credibility=self.credibility
                )
        except Cancelled:
            return self._result("cancelled", "cancelled")
        except PhaseFailed as exc:
            return self._result("failed", f"{exc.phase}_failed", error=str(exc))
        finally:
            if gatherer is not None:
                gatherer.close()
        return self._result("completed", stop_reason, answer=answer, citations=citations, verification=verification,
                            invalid=draft.invalid_citations)

    def plan_phase(self) -> None:
        system = prompts.PLANNER.format(tools=prompts.tool_catalogue(self.tools.specs()))

        def build(compact: bool) -> list[dict]:
            context = self.channel_context()
            return [
                {"role": "system", "content": system},
                {"role": "user", "content": f"{context}Student's question:\n{self.inp.question}"},
            ]

        plan = self.structured("planner", build, schemas.PLAN, "research_plan")
        known = self.tools.names()
        for sq in plan["sub_questions"]:
            sq["suggested_tools"] = [t for t in sq["suggested_tools"] if t in known]
        self.plan = plan
        self.limits = self.limits.for_complexity(plan["complexity"])
        self.sink.emit("plan_complete", self.plan_event())
        if self.review_plan is not None:
            # The student may edit the plan before the evidence phase (the product waits here,
            # with a time limit); the engine researches whatever comes back. Time spent waiting
            # for the student does not count against the research's own time limit.
            before = self.clock()
            self.plan = self.review_plan(self.plan)
            self.started += self.clock() - before
            self.checkpoint(enforce_limits=False)

    def plan_event(self) -> dict:
        return {
            "complexity": self.plan["complexity"],
            "sub_questions": [sq["question"] for sq in self.plan["sub_questions"]],
            "suggested_tools": sorted({t for sq in self.plan["sub_questions"] for t in sq["suggested_tools"]}),
            "hypotheses": self.plan["hypotheses"],
            "limits": {"max_steps": self.limits.max_steps, "max_tool_calls": self.limits.max_tool_calls,
                       "max_tokens": self.limits.max_tokens, "max_seconds": self.limits.max_seconds},
        }

    def evidence_phase(self, gatherer: Gatherer) -> str:
        quiet_rounds = failed_turns = error_rounds = 0
        while True:
            try:
                self.check_budget()
            except LimitReached as limit:
                self.hit(limit)
                return "limit_hit"
            try:
                outcome = gatherer.turn()
            except TurnFailed as exc:
                failed_turns += 1
                if failed_turns >= 2:
                    if len(self.registry) == 0:
                        raise PhaseFailed("action", exc.cause) from None
                    return "action_failed"
                continue
            failed_turns = 0
            if not outcome.called:
                return "model_done"
            # A round whose every call failed (invented tool, broken arguments, tool down) says
            # nothing about information gain; the model may correct itself, a bounded number of times.
            error_rounds = 0 if outcome.succeeded else error_rounds + 1
            if error_rounds >= 3:
                return "tool_errors"
            if outcome.succeeded:
                quiet_rounds = 0 if outcome.new_sources else quiet_rounds + 1
            if quiet_rounds >= 2:
                return "no_new_information"
            if self.tool_calls >= self.limits.max_tool_calls or self.rounds >= self.limits.max_steps:
                continue  # the budget check at the top reports the limit
            reflection = gatherer.reflect()
            if reflection["sufficient"]:
                return "sufficient"
            if reflection["hypotheses_settled"]:
                return "hypotheses_settled"  # every tentative claim is supported or refuted: stop early
            gatherer.instruct(
                "Reflection says the evidence is not yet sufficient. Still missing:\n"
                + "\n".join(f"- {m}" for m in reflection["missing"] or ["(unspecified)"])
                + "\nCall tools to fill these gaps, or reply DONE if no tool can."
            )
            gatherer.compact()

    def wants_counter_search(self) -> bool:
        mode = self.inp.counter_search
        return mode == "always" or (mode == "complex" and self.plan.get("complexity") == "complex")

    def counter_search(self, gatherer: Gatherer) -> int:
        """Before writing, look for evidence against the main conclusions (one targeted turn)."""
        claims = self.plan.get("hypotheses") or [sq["question"] for sq in self.plan["sub_questions"]]
        before = self.searches
        try:
            self.check_budget()
        except LimitReached as limit:
            self.hit(limit)
            return 0
        gatherer.instruct(
            "Before the answer is written, search specifically for evidence AGAINST these tentative conclusions "
            "(counter-examples, failed replications, contrary data, critiques):\n"
            + "\n".join(f"- {c}" for c in claims)
            + "\nCall tools now; reply DONE if no tool can find such evidence."
        )
        try:
            gatherer.turn(purpose="counter_search")
        except TurnFailed:
            pass  # reported as "no counter-evidence found in 0 searches"
        return self.searches - before

    def resolve_conflicts(self, gatherer: Gatherer, draft: Draft) -> tuple[Draft, int]:
        """A conflict triggers at most `max_conflict_rounds` targeted re-search rounds (the
        source's 回流次數上限); what is still disputed after that is reported as unresolved."""
        rounds = 0
        while draft.conflicts and rounds < self.limits.max_conflict_rounds:
            try:
                self.check_budget()
            except LimitReached as limit:
                self.hit(limit)
                break
            rounds += 1
            topics = "\n".join(
                f"- {c['topic']}: " + " vs ".join(f"{p['summary']} (sources {p['source_ids']})" for p in c["positions"])
                for c in draft.conflicts
            )
            gatherer.instruct(
                f"The sources disagree on these points (re-search round {rounds} of {self.limits.max_conflict_rounds}):\n{topics}\n"
                "Search for evidence that settles each disagreement: primary data, more authoritative or more recent sources. "
                "Reply DONE if no tool can help."
            )
            try:
                outcome = gatherer.turn(purpose="conflict")
            except TurnFailed:
                break
            if not outcome.called or not outcome.new_sources:
                break  # nothing new to weigh: re-writing would give the same answer
            self.checkpoint(enforce_limits=False)
            draft = synthesize(self)
            self.conflicts_found = max(self.conflicts_found, len(draft.conflicts))
        return draft, rounds

    def _result(self, status, stop_reason, *, answer="", citations=None, verification=None, invalid=0, error="") -> ResearchResult:
        return ResearchResult(
            status=status,
            stop_reason=stop_reason,
            plan=self.plan,
            answer=answer,
            citations=citations or [],
            verification=verification or {},
            limit_hit=self.limit_hit,
            invalid_citations_removed=invalid,
            error=error,
            rounds=self.rounds,
            tool_calls=self.tool_calls,
            searches=self.searches,
            sources_seen=len(self.registry),
        )


def run_research(inp: ResearchInput, **kwargs) -> ResearchResult:
    return ResearchRun(inp, **kwargs).run()
