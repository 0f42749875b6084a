"""The research loop: Plan → Evidence (Action → Observation → Reflect)* → [Counter-search] →
Selection (spans, chosen by the model, checked by code) → values and conflicts → [targeted
re-search on unresolved conflicts, at most twice, its sources through selection again] →
hypotheses and judgement weighed by code → Interpretation (the model's words, checked) → Report.

A macro plan-and-execute state machine with a ReAct loop inside the evidence phase. It imports
no Django: it receives a toolbox bound to one user and channel, an LLM client, an event sink and
a cancellation check, and returns a ResearchResult. Cancellation and limits are checked before
every LLM call and every tool call. The phases get the run's narrow context (state.RunContext)
and return what they found; only this module adds it to the run's counters.

A limit reached anywhere (time, tokens, steps, tool calls; in planning, a turn, a reflection, the
counter-search or a finishing phase) ends gathering, is reported once (`limit_hit`), and the
research still completes with what it has. The finishing phases (selection, interpretation) run
on what is left of the time and tokens, grace included, each on its share
(state.RunContext.finishing); a selection call that does not fit leaves its sub-question to the
search ranking (`selection_not_run`), an interpretation that does not fit is left out
(`interpretation_failed`). Neither can fail the research: the report is assembled by code."""

from __future__ import annotations

import time
from collections.abc import Callable

from . import conflicts as conflict_rules
from . import events, interpretation, prompts, quantities, schemas, selection, spans, weighing
from .assemble import CounterSearch, Findings, assemble
from .errors import Cancelled, OutOfBudget, PhaseFailed
from .evidence import Gatherer, TurnFailed, TurnOutcome
from .llm import LLMClient, LLMError, LLMUnavailable
from .plan import Plan, SubQuestion
from .sources import neutralise
from .state import RunContext
from .types import EventSink, Limits, ResearchInput, ResearchResult, Source, Toolbox
from .vocabulary import OUTCOMES, STOP_REASONS


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
        """`stop_after_plan`: return once the plan is made, with the outcome "planned" (the product then
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
            web_offered=any(getattr(tools.traits(name), "tier", "") == "web" for name in tools.names()),
        )
        self.ctx.started -= spent_seconds
        self.tools = tools
        self.stop_after_plan = stop_after_plan
        self.given_plan = plan
        self.hypothesis_status: dict[int, str] = {}
        self.failures: list[dict] = []
        self.found = Findings(index=spans.SpanIndex(self.ctx.registry))
        self.said: list[tuple[str, str]] = []  # span pairs the selection marked as contradicting
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
                return self._result(OUTCOMES.planned, STOP_REASONS.plan_review)
            gatherer = Gatherer(ctx, self.tools)
            stop_reason = self.evidence_phase(gatherer)
            counter = self.counter_search(gatherer) if self.wants_counter_search() else CounterSearch()
            ctx.note_limits()
            self.cancel_point()
            self.found.targets = [t.index for t in selection.targets(ctx, self.plan_fallback)]
            if len(ctx.registry):
                self.select_facts()
                self.resolve_conflicts(gatherer)
                self.cancel_point()  # a cancel during the last call stops before the interpretation
                self.weigh()
                self.interpret()
            self.found.plan_sub_questions, self.found.plan_hypotheses, dropped = interpretation.plan_texts(
                ctx
            )
            self.found.plan_search_queries, dropped_queries = interpretation.query_translations(
                ctx, self.found.plan_sub_questions
            )
            self.found.dropped = dropped + dropped_queries + self.found.dropped
            ctx.note_limits()
            assembled = assemble(ctx, self.found, counter, self.limitations() + self.found.limitations)
        except Cancelled:
            return self._result(OUTCOMES.cancelled, STOP_REASONS.cancelled)
        except PhaseFailed as exc:
            return self._result(OUTCOMES.failed, f"{exc.phase}_failed", error=str(exc))
        finally:
            if gatherer is not None:
                gatherer.close()
        report = assembled.report
        record = assembled.verification
        if not len(ctx.registry):
            record["status"] = "no_sources"
        ctx.sink.emit(
            events.VerificationDone(
                status=record["status"],
                counts=record["counts"],
                conflicts=len(report.conflicts),
                conflict_rounds=self.found.conflict_rounds,
                citations=sum(1 for s in report.sources if s.cited),
                web_only_claims=record["web_only_claims"],
                not_verified=len(report.not_shown),
            )
        )
        return self._result(
            OUTCOMES.completed,
            stop_reason,
            citations=assembled.citations,
            verification=record,
            report=report.to_json(),
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
            plan = None
        if plan is not None:
            plan.sub_questions = [sq for sq in plan.sub_questions if sq.question.strip()]
        if plan is None or not plan.sub_questions:
            # A planner that failed twice (a weak model's malformed or cut-off plan, a server that
            # went silent) or wrote no sub-question: the question itself is the one sub-question,
            # and the run goes on.
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
        # As the report will show them: one that states what the question lacks is "".
        sub_questions, hypotheses, _ = interpretation.plan_texts(self.ctx)
        return events.PlanComplete(
            complexity=plan.complexity,
            sub_questions=sub_questions,
            suggested_tools=sorted({t for sq in plan.sub_questions for t in sq.suggested_tools}),
            hypotheses=hypotheses,
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
                # with what was found: the selection still runs on it. Only when nothing was found
                # yet does the model get a second try.
                failed_turns += 1
                self.record_failed_turn(gatherer, exc)
                if len(ctx.registry):
                    return "action_failed"
                if failed_turns >= 2:
                    if isinstance(exc.cause, LLMUnavailable):
                        # No server to talk to is not a research that found nothing.
                        raise PhaseFailed("action", exc.cause) from None
                    # A model that answers but cannot choose a tool (a small local model) would
                    # leave nothing to select from: the engine searches each sub-question itself.
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
        """Before the facts are chosen, look for evidence against the main conclusions (one targeted turn)."""
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

    # ------------------------------------------------------------------ the finishing phases

    def select_facts(self, only: list[int] | None = None) -> list[int]:
        """One selection round over every source (or `only` the new ones of a re-search): the new
        facts, their values, and the conflicts among all facts so far. Returns the new facts' ids."""
        ctx, found = self.ctx, self.found
        ctx.finishing("selection", after=1)  # then the interpretation
        source_ids = only if only is not None else [i for i, _ in ctx.registry.items()]
        picked = selection.select(
            ctx,
            found.index,
            source_ids=source_ids,
            plan_fallback=self.plan_fallback,
            first_id=max((f.id for f in found.facts), default=0) + 1,
            already={s for f in found.facts for s in f.spans},
        )
        ctx.note_limits()
        found.facts += picked.facts
        found.dropped += picked.dropped
        found.limitations += picked.limitations
        found.selection_calls += picked.calls
        found.by_ranking += picked.by_ranking
        self.said += picked.contradictions
        found.measures = quantities.read(found.facts, found.index)
        quantities.compute(found.measures, found.facts, ctx.registry)
        ctx.sink.emit(
            events.ClaimsExtracted(
                claims=len(picked.facts),
                figures=sum(1 for f in picked.facts if found.measures.of_fact(f.id)),
                sources=picked.sources,
                by_model=sum(1 for f in picked.facts if f.selected_by == "model"),
                by_ranking=sum(1 for f in picked.facts if f.selected_by == "search_ranking"),
                not_shown=len(picked.dropped),
            )
        )
        self.find_conflicts()
        return [f.id for f in picked.facts]

    def find_conflicts(self) -> None:
        found = self.found
        pairs, _ = selection.contradicting_facts(self.said, found.facts)
        found.conflicts = conflict_rules.carry_over(
            found.conflicts,
            conflict_rules.find(found.facts, found.measures, pairs, self.ctx.registry, found.index),
        )
        self.ctx.sink.emit(
            events.ClaimsVerified(
                claims=len(found.facts),
                verified=len(found.facts),
                failed=len(found.dropped),
                instruction_in_source=sum(1 for d in found.dropped if d.reason == "instruction_in_source"),
                conflicts=len(found.conflicts),
                unresolved=sum(1 for c in found.conflicts if c.status == "unresolved"),
            )
        )

    def resolve_conflicts(self, gatherer: Gatherer) -> None:
        """An unresolved conflict triggers at most `max_conflict_rounds` targeted re-search rounds;
        the new sources go through selection, and the conflicts are found and weighed again. What
        is still disputed after that is reported as unresolved."""
        ctx, found = self.ctx, self.found
        rounds = 0
        while (
            any(c.status == "unresolved" for c in found.conflicts) and rounds < ctx.limits.max_conflict_rounds
        ):
            if not ctx.budget_left():
                break
            rounds += 1
            open_ones = [c for c in found.conflicts if c.status == "unresolved"]
            gatherer.instruct(
                f"The sources disagree on these points (re-search round {rounds} of {ctx.limits.max_conflict_rounds}):\n"
                + "\n".join(self.describe(c) for c in open_ones)
                + "\nSearch for evidence that settles each disagreement: primary data (for company figures, "
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
            self.cancel_point()
            added = set(self.select_facts(only=new_ids))
            for c in found.conflicts:
                if c.re_search["rounds"]:
                    c.re_search["new_sources"] += len(new_ids)
                    c.re_search["new_facts"] += [i for i in sorted(c.facts()) if i in added]
        found.conflict_rounds = rounds

    def describe(self, conflict) -> str:
        """A conflict as the action model is told it: the subject code found and each side's spans."""
        found = self.found
        by_id = {f.id: f for f in found.facts}
        if conflict.found_by == "values":
            subject = " ".join(str(x) for x in (conflict.value_kind, conflict.unit, conflict.year or "") if x)
        else:
            subject = "contradicting passages"
        sides = []
        for side in conflict.sides:
            texts = []
            for fact_id in side.facts[:2]:
                fact = by_id[fact_id]
                text = " ".join(found.index.get(s).text for s in fact.spans if found.index.get(s))
                texts.append(
                    f'"{neutralise(" ".join(text.split())[:200])}" (source {fact.source_id}, {side.tier})'
                )
            sides.append("; ".join(texts))
        return f"- {subject}: " + " vs ".join(sides)

    def weigh(self) -> None:
        found, ctx = self.found, self.ctx
        lost = conflict_rules.superseded(found.conflicts)
        found.weights = weighing.hypotheses(len(ctx.plan.hypotheses), found.facts, lost)
        found.stance = (
            weighing.judgement(found.weights, found.facts, found.conflicts, ctx.registry)
            if ctx.plan.asks_for_judgement
            else None
        )
        found.counter = weighing.counter_evidence(found.facts, lost, ctx.registry)
        _, dropped = selection.contradicting_facts(self.said, found.facts)
        found.dropped += dropped

    def interpret(self) -> None:
        """The model's interpretation of the facts the report shows, checked by code."""
        ctx, found = self.ctx, self.found
        self.cancel_point()
        ctx.finishing("interpretation", after=0)
        lost = conflict_rules.superseded(found.conflicts)
        shown = [f for f in found.facts if f.id not in lost]
        texts, translate = {}, []
        for fact in shown:
            cuts = [found.index.get(s) for s in fact.spans]
            texts[fact.id] = _joined(cuts)
            translate += [
                (c.id, c.text) for c in cuts if c.language in ("en", "zh") and c.language != ctx.lang
            ]
        hypotheses = [(h, w.status) for h, w in zip(ctx.plan.hypotheses, found.weights, strict=False)]
        found.interpretation = interpretation.interpret(
            ctx,
            shown,
            texts,
            translate,
            hypotheses=hypotheses,
            stance=found.stance.stance if found.stance else None,
        )
        ctx.note_limits()
        found.dropped += found.interpretation.dropped
        found.limitations += found.interpretation.limitations

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
        if (ctx.plan.translations or {}).get("status") == "failed":
            # the material searches ran in the other language with the channel's glossary only
            out.append({"code": "query_translation_failed", "detail": {}})
        return out

    def _result(
        self,
        outcome,
        stop_reason,
        *,
        citations=None,
        verification=None,
        error="",
        report=None,
    ) -> ResearchResult:
        ctx = self.ctx
        if stop_reason not in STOP_REASONS:
            stop_reason = STOP_REASONS.internal_error  # a phase with no failure of its own in the vocabulary
        return ResearchResult(
            outcome=OUTCOMES.check(outcome),
            stop_reason=STOP_REASONS.check(stop_reason),
            plan=ctx.plan.as_json() if ctx.plan.sub_questions else {},
            answer="",
            citations=citations or [],
            verification=verification or {},
            report=report or {},
            limit_hit=ctx.limit_hit,
            error=error,
            rounds=ctx.counters.rounds,
            tool_calls=ctx.counters.tool_calls,
            searches=ctx.counters.searches,
            sources_seen=len(ctx.registry),
        )


def _joined(cuts) -> str:
    """A fact's words as one string: its spans joined by a space (Chinese spans without)."""
    out = ""
    for cut in cuts:
        if cut is None:
            continue
        text = " ".join(cut.text.split())
        out += ("" if not out or cut.language == "zh" else " ") + text
    return out


def run_research(inp: ResearchInput, **kwargs) -> ResearchResult:
    return ResearchRun(inp, **kwargs).run()
