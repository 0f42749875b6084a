"""The research loop: Plan → Evidence (Action → Observation → Reflect)* → [Counter-search] →
Claims → Verification → [targeted re-search on unresolved conflicts, at most twice] → Writing →
check of the draft → Report.

A macro plan-and-execute state machine with a ReAct loop inside the evidence phase. It imports
no Django: it receives a toolbox bound to one user and channel, an LLM client, an event sink and
a cancellation check, and returns a ResearchResult. Cancellation and limits are checked before
every LLM call and every tool call. The phases get the run's narrow context (state.RunContext)
and return what they found; only this module adds it to the run's counters.

A limit reached anywhere (time, tokens, steps, tool calls; in planning, a turn, a reflection, the
counter-search or a finishing phase) ends gathering, is reported once (`limit_hit`), and the
research still answers with what it has. The finishing phases run on what is left of the time
and tokens, grace included, each on its share (state.RunContext.finishing); a phase that does not
fit is skipped: no claims drawn (`claims_not_drawn`), claims left unchecked
(`verification_incomplete`), or a body that is the verified claims themselves
(`written_from_claims`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from . import claims as claims_phase
from . import conflicts as conflict_rules
from . import events, prompts, schemas
from .claims import ClaimSet
from .errors import Cancelled, OutOfBudget, PhaseFailed
from .evidence import Gatherer, TurnFailed, TurnOutcome
from .llm import LLMClient, LLMError, LLMUnavailable
from .plan import Plan, SubQuestion
from .report import empty_report, finalize
from .state import RunContext
from .types import EventSink, Limits, ResearchInput, ResearchResult, Source, Toolbox
from .verification import verify_claims
from .writing import CounterSearch, Draft, synthesize


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
        stop_after_plan: bool = False,
        plan: Plan | None = None,
        spent_seconds: float = 0.0,
    ):
        """`stop_after_plan`: return a "planned" result once the plan is made (the product then
        waits for the student's review without holding a worker). `plan`: a plan made (and maybe
        edited) earlier; the run skips planning and starts gathering evidence for it.
        `spent_seconds`: the time an earlier part of the same research already used, which counts
        against its time limit (the wait for the review does not)."""
        self.ctx = RunContext(
            inp=inp,
            llm=llm,
            sink=sink,
            is_cancelled=is_cancelled,
            limits=limits,
            clock=clock,
            credibility=credibility,
            tool_traits=tools.traits,
        )
        self.ctx.started -= spent_seconds
        self.tools = tools
        self.stop_after_plan = stop_after_plan
        self.given_plan = plan
        self.hypothesis_status: dict[int, str] = {}
        self.failures: list[dict] = []
        self.claims = ClaimSet()
        self.contradictions: list[dict] = []
        self.incomplete = False
        # Finishing phases skipped for want of time or tokens (a limitation each, in the report).
        self.skipped: list[str] = []
        self.failed_turns: list[str] = []  # the kinds of LLM error that ended action turns
        self.plan_fallback = False
        self.searched_by_code = False  # the model could not choose a tool; the engine searched

    # ------------------------------------------------------------------ the state machine

    def run(self) -> ResearchResult:
        ctx = self.ctx
        gatherer = None
        try:
            if self.given_plan is not None:
                self.adopt_plan(self.given_plan)
            else:
                self.plan_phase()
            ctx.note_limits()  # a limit the planning reached is reported now; gathering will not start
            if self.stop_after_plan:
                ctx.checkpoint(enforce_limits=False)  # a cancel during planning ends the run here
                return self._result("planned", "plan_review")
            gatherer = Gatherer(ctx, self.tools)
            stop_reason = self.evidence_phase(gatherer)
            counter = self.counter_search(gatherer) if self.wants_counter_search() else CounterSearch()
            ctx.note_limits()
            self.cancel_point()
            if len(ctx.registry) == 0:
                draft = synthesize(ctx, self.claims, [], counter)
                # The engine's own "nothing to cite" message: nothing to verify, nothing to mark.
                ctx.sink.emit(
                    events.VerificationDone(status="no_sources", counts={}, conflicts=0, citations=0)
                )
                return self._result(
                    "completed",
                    stop_reason,
                    answer=draft.answer,
                    verification={
                        "status": "no_sources",
                        "claims": [],
                        "counts": {},
                        "conflicts": [],
                        "retries": ctx.retries,
                    },
                    report=empty_report(ctx, draft.answer, self.limitations()),
                )
            conflicts = self.claims_and_verification(gatherer)
            conflicts, conflict_rounds = self.resolve_conflicts(gatherer, conflicts)
            self.cancel_point()  # a cancel during the last call stops before writing
            draft = self.writing(conflicts, counter)
            ctx.finishing("check", after=0)
            finished = finalize(
                ctx,
                draft,
                self.claims,
                conflicts,
                conflict_rounds=conflict_rounds,
                counter=counter,
                hypothesis_status=self.hypothesis_status,
                limitations=self.limitations(),
                incomplete=self.incomplete,
            )
        except Cancelled:
            return self._result("cancelled", "cancelled")
        except PhaseFailed as exc:
            return self._result("failed", f"{exc.phase}_failed", error=str(exc))
        finally:
            if gatherer is not None:
                gatherer.close()
        ctx.note_limits()  # a limit the draft's check reached
        if ctx.limit_hit and not any(item["code"] == "limit_hit" for item in finished.report["limitations"]):
            finished.report["limitations"].append({"code": "limit_hit", "detail": {"reason": ctx.limit_hit}})
        report = finished.verification
        ctx.sink.emit(
            events.VerificationDone(
                status=report.status,
                counts=report.counts,
                conflicts=report.conflicts_shown,
                conflict_rounds=report.conflict_rounds,
                invalid_citations_removed=report.invalid_citations_removed,
                citations=len(finished.citations),
                web_only_claims=report.web_only_claims,
                removed=report.removed,
                not_verified=len(finished.report["not_verified"]),
            )
        )
        return self._result(
            "completed",
            stop_reason,
            answer=finished.answer,
            citations=finished.citations,
            verification=report.as_json(),
            invalid=report.invalid_citations_removed,
            report=finished.report,
        )

    def plan_phase(self) -> None:
        ctx = self.ctx
        system = prompts.PLANNER.format(tools=prompts.tool_catalogue(self.tools.specs()))

        def build(compact: bool) -> list[dict]:
            return [{"role": "system", "content": system}, {"role": "user", "content": ctx.question_block()}]

        try:
            plan = Plan.from_json(ctx.structured("planner", build, schemas.PLAN, "research_plan"))
        except PhaseFailed as exc:
            if not isinstance(exc.cause, LLMError) or isinstance(exc.cause, LLMUnavailable):
                raise  # a server that does not answer (or a deadline) is not a weak plan
            # A planner that failed twice (a weak model's malformed or cut-off plan, a server that
            # went silent): the question itself is the one sub-question, and the run goes on.
            plan = Plan(complexity="simple", sub_questions=[SubQuestion(ctx.inp.question)])
            self.plan_fallback = True
        self.adopt_plan(plan)
        ctx.sink.emit(self.plan_event())

    def adopt_plan(self, plan: Plan) -> None:
        """The plan the run researches, and the budgets of its complexity."""
        plan.keep_tools(self.tools.names())
        self.ctx.plan = plan
        self.ctx.limits = self.ctx.limits.for_complexity(plan.complexity)

    def plan_event(self) -> events.PlanComplete:
        plan, limits = self.ctx.plan, self.ctx.limits
        return events.PlanComplete(
            complexity=plan.complexity,
            sub_questions=[sq.question for sq in plan.sub_questions],
            suggested_tools=sorted({t for sq in plan.sub_questions for t in sq.suggested_tools}),
            hypotheses=plan.hypotheses,
            limits={
                "max_steps": limits.max_steps,
                "max_tool_calls": limits.max_tool_calls,
                "max_tokens": limits.max_tokens,
                "max_seconds": limits.max_seconds,
            },
        )

    def turn(self, gatherer: Gatherer, purpose: str = "evidence") -> TurnOutcome:
        """One action turn; its calls count against the run's budgets."""
        self.ctx.counters.rounds += 1
        outcome = gatherer.turn(self.ctx.counters.rounds, purpose)
        self.ctx.counters.tool_calls += outcome.tool_calls
        self.ctx.counters.searches += outcome.searches
        self.failures.extend(outcome.failures)
        return outcome

    def evidence_phase(self, gatherer: Gatherer) -> str:
        ctx = self.ctx
        quiet_rounds = failed_turns = error_rounds = 0
        while True:
            if not ctx.budget_left():
                return "limit_hit"
            try:
                outcome = self.turn(gatherer)
            except TurnFailed as exc:
                if not ctx.budget_left():
                    return "limit_hit"  # the turn was cut at the time limit or refused at the token limit
                # A weak or slow model's bad turn (cut off, malformed, silent) ends the gathering
                # with what was found: the claims and the writing still run on it. Only when
                # nothing was found yet does the model get a second try.
                failed_turns += 1
                self.record_failed_turn(gatherer, exc)
                if len(ctx.registry):
                    return "action_failed"
                if failed_turns >= 2:
                    if isinstance(exc.cause, LLMUnavailable):
                        # No server to talk to is not a research that found nothing.
                        raise PhaseFailed("action", exc.cause) from None
                    # A model that answers but cannot choose a tool (a small local model) would
                    # leave nothing to draw claims from: the engine searches each sub-question itself.
                    self.search_by_code(gatherer)
                    return "action_failed"
                continue
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
            if (
                ctx.counters.tool_calls >= ctx.limits.max_tool_calls
                or ctx.counters.rounds >= ctx.limits.max_steps
            ):
                continue  # the budget check at the top reports the limit
            reflection = gatherer.reflect(self.hypothesis_status)
            self.hypothesis_status = reflection["hypothesis_status"]
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

    def search_by_code(self, gatherer: Gatherer) -> None:
        if not self.ctx.budget_left() or self.ctx.tool_calls_left() <= 0:
            return
        self.ctx.counters.rounds += 1
        outcome = gatherer.search_by_code(self.ctx.counters.rounds)
        if outcome is None:
            return
        self.ctx.counters.tool_calls += outcome.tool_calls
        self.ctx.counters.searches += outcome.searches
        self.failures.extend(outcome.failures)
        self.searched_by_code = True

    def record_failed_turn(self, gatherer: Gatherer, exc: TurnFailed) -> None:
        """The failed turn as a step of its own (status "error"), so the steps say where the
        gathering stopped and why, and as a limitation of the report."""
        gatherer.step_index += 1
        sink, error = self.ctx.sink, str(exc.cause)[:300]
        sink.step_started(
            index=gatherer.step_index, round=self.ctx.counters.rounds, phase="evidence", tool_name="", args={}
        )
        sink.step_finished(
            index=gatherer.step_index, status="error", preview="", full=None, error=error, duration_ms=0
        )
        self.failed_turns.append(exc.cause.kind)

    def wants_counter_search(self) -> bool:
        mode = self.ctx.inp.counter_search
        complexity = self.ctx.plan.complexity
        return (
            mode == "always"
            or (mode == "moderate" and complexity in ("moderate", "complex"))
            or (mode == "complex" and complexity == "complex")
        )

    def counter_search(self, gatherer: Gatherer) -> CounterSearch:
        """Before the claims are drawn, look for evidence against the main conclusions (one targeted turn)."""
        plan = self.ctx.plan
        claims = plan.hypotheses or [sq.question for sq in plan.sub_questions]
        if not self.ctx.budget_left():
            return CounterSearch(ran=True)
        gatherer.instruct(
            "Before the answer is written, search specifically for evidence AGAINST these tentative conclusions "
            "(counter-examples, failed replications, contrary data, critiques):\n"
            + "\n".join(f"- {c}" for c in claims)
            + "\nCall tools now; reply DONE if no tool can find such evidence."
        )
        try:
            outcome = self.turn(gatherer, purpose="counter_search")
        except TurnFailed:
            return CounterSearch(ran=True)  # reported as "no counter-evidence found in 0 searches"
        return CounterSearch(ran=True, searches=outcome.searches, queries=outcome.queries)

    def claims_and_verification(
        self, gatherer: Gatherer, only: list[int] | None = None
    ) -> list[conflict_rules.Conflict]:
        """Draw claims from the sources (or from `only` these new ones), verify them, and find the
        conflicts among all claims so far."""
        ctx = self.ctx
        ctx.finishing("claims", after=3)  # then verification, writing and the draft's check
        try:
            new = claims_phase.extract(ctx, only=only, first_id=self.claims.next_id())
        except OutOfBudget:
            new = []
            self.skip("claims_not_drawn")
        except PhaseFailed as exc:
            if not isinstance(exc.cause, LLMError) or isinstance(exc.cause, LLMUnavailable):
                raise  # a server that does not answer (or a deadline) is not a weak model's claims
            # A weak model that cannot state claims (cut off, malformed twice) yields none: nothing
            # is verified, and the answer says so in the reader's language instead of failing.
            new = []
            self.skip("claims_failed")
        ctx.note_limits()
        ctx.finishing("verification", after=2)
        check = verify_claims(ctx, new)  # a batch out of time or tokens leaves its claims unverified
        ctx.note_limits()
        self.claims.claims.extend(new)
        self.incomplete = self.incomplete or check.incomplete
        self.contradictions += check.contradictions
        found = conflict_rules.find(ctx.registry, self.claims, self.contradictions)
        ctx.sink.emit(
            events.ClaimsVerified(
                claims=len(self.claims.claims),
                verified=len(self.claims.verified()),
                failed=sum(1 for c in self.claims.claims if not c.verified),
                instruction_in_source=sum(1 for c in self.claims.claims if c.flagged),
                conflicts=len(found),
                unresolved=sum(1 for c in found if c.status == "unresolved"),
            )
        )
        return found

    def resolve_conflicts(self, gatherer: Gatherer, conflicts):
        """An unresolved conflict triggers at most `max_conflict_rounds` targeted re-search rounds;
        new sources become claims, are verified, and the conflicts are weighed again. What is still
        disputed after that is reported as unresolved."""
        ctx = self.ctx
        rounds = 0
        while any(c.status == "unresolved" for c in conflicts) and rounds < ctx.limits.max_conflict_rounds:
            if not ctx.budget_left():
                break
            rounds += 1
            open_ones = [c for c in conflicts if c.status == "unresolved"]
            topics = "\n".join(
                f"- {c.subject}: "
                + " vs ".join(f"{s.statement} (sources {s.source_ids}, {s.tier})" for s in c.sides)
                for c in open_ones
            )
            gatherer.instruct(
                f"The sources disagree on these points (re-search round {rounds} of {ctx.limits.max_conflict_rounds}):\n{topics}\n"
                "Search for evidence that settles each disagreement: primary data (for company figures, "
                f"{gatherer.filed_figure_tools}), "
                "more authoritative or more recent sources. Reply DONE if no tool can help."
            )
            try:
                outcome = self.turn(gatherer, purpose="conflict")
            except TurnFailed:
                break
            for c in open_ones:
                c.re_search["rounds"] += 1
            new_ids = [i for i in outcome.source_ids if ctx.registry.found_by.get(i) == "conflict"]
            if not outcome.called or not outcome.new_sources or not new_ids:
                break  # nothing new to weigh
            before = {c.id for c in self.claims.claims}
            self.cancel_point()
            again = conflict_rules.carry_over(conflicts, self.claims_and_verification(gatherer, only=new_ids))
            added = [c.id for c in self.claims.claims if c.id not in before]
            for c in again:
                if c.re_search["rounds"]:
                    c.re_search["new_sources"] += len(new_ids)
                    c.re_search["new_claim_ids"] += [
                        i for i in added if any(i in s.claim_ids for s in c.sides)
                    ]
            conflicts = again
        return conflicts, rounds

    def writing(self, conflicts, counter: CounterSearch) -> Draft | None:
        """The writer's draft, or, when the writer's call does not fit what is left of the time or
        tokens, a body of the verified claims themselves (each cites its claim, as the writer's
        lines do, and goes through the same check)."""
        ctx = self.ctx
        if not self.claims.verified():
            return None  # nothing verified: nothing to write (finalize says so)
        ctx.finishing("writing", after=1)  # then the draft's check
        try:
            draft = synthesize(ctx, self.claims, conflicts, counter)
        except OutOfBudget:
            lines = [f"- {c.text} [c{c.id}]" for c in self.claims.verified()]
            draft = Draft(answer="\n".join(lines) + "\n" if lines else "")
            self.skip("written_from_claims")
        except PhaseFailed:
            draft = None  # the writer failed: the body is the verified claims (writing_failed)
        ctx.note_limits()
        return draft

    def skip(self, code: str) -> None:
        if code not in self.skipped:
            self.skipped.append(code)

    def cancel_point(self) -> None:
        """A cancel stops the run here; past the hard deadline the finishing phases' calls are
        refused one by one and the report is assembled from what there is (no model call)."""
        try:
            self.ctx.checkpoint(enforce_limits=False)
        except OutOfBudget:
            pass

    def limitations(self) -> list[dict]:
        ctx = self.ctx
        ctx.note_limits()
        out = []
        if ctx.limit_hit:
            out.append({"code": "limit_hit", "detail": {"reason": ctx.limit_hit}})
        out += [{"code": code, "detail": {}} for code in self.skipped]
        failed: dict[str, int] = {}
        for failure in self.failures:
            failed[failure["tool"]] = failed.get(failure["tool"], 0) + 1
        for tool, count in failed.items():
            out.append({"code": "tool_failed", "detail": {"tool": tool, "calls": count}})
        if self.plan_fallback:
            out.append({"code": "plan_fallback", "detail": {}})
        if self.failed_turns:
            out.append({"code": "action_failed", "detail": {"kind": self.failed_turns[-1]}})
        if self.searched_by_code:
            out.append({"code": "searched_by_code", "detail": {}})
        return out

    def _result(
        self,
        status,
        stop_reason,
        *,
        answer="",
        citations=None,
        verification=None,
        invalid=0,
        error="",
        report=None,
    ) -> ResearchResult:
        ctx = self.ctx
        return ResearchResult(
            status=status,
            stop_reason=stop_reason,
            plan=ctx.plan.as_json() if ctx.plan.sub_questions else {},
            answer=answer,
            citations=citations or [],
            verification=verification or {},
            report=report or {},
            limit_hit=ctx.limit_hit,
            invalid_citations_removed=invalid,
            error=error,
            rounds=ctx.counters.rounds,
            tool_calls=ctx.counters.tool_calls,
            searches=ctx.counters.searches,
            sources_seen=len(ctx.registry),
        )


def run_research(inp: ResearchInput, **kwargs) -> ResearchResult:
    return ResearchRun(inp, **kwargs).run()
