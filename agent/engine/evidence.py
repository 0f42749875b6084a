"""The evidence phase's moving parts: one action turn (the model picks tools, several calls run
concurrently, each stored as a step, each result registered as sources), the reflection, and
compaction of the action conversation. Used for ordinary rounds, the counter-search turn and
the targeted re-search after a conflict."""

from __future__ import annotations

import json
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from . import events, prompts, schemas
from .boundaries import url_observed, url_permitted
from .errors import LimitReached, PhaseFailed
from .llm import LLMError, ToolCallRequest
from .sources import render_observations, render_tool_result
from .state import RunContext
from .translation import QueryTranslations
from .types import TIER_RANK, Source, ToolResult

TOOL_CALL_TIMEOUT_SECONDS = 90
UNAVAILABLE = {
    "sufficient": False,
    "missing": [],
    "covered_sub_questions": [],
    "hypotheses": [],
    "reasoning": "reflection unavailable",
}


@dataclass
class TurnOutcome:
    called: bool  # the model asked for tools (False: it said DONE)
    new_sources: int = 0
    succeeded: int = 0
    source_ids: tuple[int, ...] = ()
    tool_calls: int = 0  # calls run this turn (the loop adds them to the run's counters)
    searches: int = 0
    # Tools that failed this turn and why: the report's limitations name them.
    failures: list[dict] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)  # what was searched for (counter-evidence)


class TurnFailed(Exception):
    """The action model produced nothing usable for this turn."""

    def __init__(self, cause: LLMError):
        self.cause = cause
        super().__init__(str(cause))


class Gatherer:
    def __init__(self, run: RunContext, tools):
        self.run = run
        self.tools = tools
        self.specs = tools.specs()
        self.known = tools.names()
        self.filed_figure_tools = prompts.filed_figure_tools([n for n in self.known if run.exact_figures(n)])
        self.step_index = 0
        self.shown: set[int] = set()  # sources whose text this conversation has shown the model
        self.round_no = 0
        # The questions in the materials' other languages, for the searches of bilingual tools.
        self.translations = QueryTranslations(run)
        self.pool = ThreadPoolExecutor(max_workers=run.limits.max_calls_per_round, thread_name_prefix="tool")
        self.messages: list[dict] = [
            {
                "role": "system",
                "content": prompts.ACTION.format(
                    max_calls=run.limits.max_calls_per_round, filed_figure_tools=self.filed_figure_tools
                ),
            },
            {
                "role": "user",
                "content": f"{run.question_block()}\n\nResearch plan:\n{run.plan.block()}",
            },
        ]

    def close(self) -> None:
        # Tools still running after a timeout are not waited for.
        self.pool.shutdown(wait=False, cancel_futures=True)

    def instruct(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    # ------------------------------------------------------------------ one turn

    def turn(self, round_no: int, purpose: str = "evidence") -> TurnOutcome:
        run = self.run
        self.round_no = round_no
        run.sink.emit(events.ActionThinking(round=round_no, purpose=purpose))
        try:
            reply = run.llm.with_tools("action", self.messages, self.specs, timeout=run.call_timeout())
        except LLMError as exc:
            run.retries.append({"role": "action", "kind": exc.kind})
            raise TurnFailed(exc) from None
        if not reply.tool_calls:
            return TurnOutcome(called=False)
        self.messages.append(reply.message)
        return self._dispatch(reply.tool_calls, purpose)

    def search_by_code(self, round_no: int) -> TurnOutcome | None:
        """The turn a model that cannot choose a tool did not make: each sub-question becomes the
        query of the best-ranked search tool that needs nothing but a query (the lowest tier rank,
        then the toolbox's order). Its results pass the same checks as any call; the claims and the
        writing then run on them. None when no such tool is offered."""
        tool = self._plain_search_tool()
        if tool is None:
            return None
        questions = [sq.question for sq in self.run.plan.sub_questions] or [self.run.inp.question]
        calls = []
        for number, question in enumerate(questions, 1):
            arguments = {"query": question[:300]}
            calls.append(
                ToolCallRequest(
                    id=f"engine-search-{number}",  # the same on every run: a replay matches it
                    name=tool,
                    raw_arguments=json.dumps(arguments, ensure_ascii=False),
                    arguments=arguments,
                )
            )
        self.round_no = round_no
        self.messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.raw_arguments},
                    }
                    for c in calls
                ],
            }
        )
        return self._dispatch(calls, "evidence")

    def _plain_search_tool(self) -> str | None:
        ranked = []
        for order, spec in enumerate(self.specs):
            function = spec.get("function") or {}
            name, parameters = function.get("name", ""), function.get("parameters") or {}
            traits = self.run.tool_traits(name)
            query = (parameters.get("properties") or {}).get("query") or {}
            if (
                traits
                and traits.search
                and query.get("type") == "string"
                and set(parameters.get("required") or ["query"]) <= {"query"}
            ):
                ranked.append((TIER_RANK.get(traits.tier, len(TIER_RANK)), order, name))
        return min(ranked)[2] if ranked else None

    def _dispatch(self, calls, purpose: str) -> TurnOutcome:
        run = self.run
        room = max(0, min(run.limits.max_calls_per_round, run.tool_calls_left()))
        accepted, skipped = calls[:room], calls[room:]
        if any(self._bilingual(c.name) and c.arguments is not None for c in accepted):
            self.translations.prepare()  # one model call per research, in this (the engine's) thread
        planned = []
        for call in accepted:
            self.step_index += 1
            args = call.arguments if call.arguments is not None else {"_raw": call.raw_arguments}
            run.sink.step_started(
                index=self.step_index, round=self.round_no, phase=purpose, tool_name=call.name[:80], args=args
            )
            planned.append((self.step_index, call))
        searches = sum(1 for _, c in planned if self.run.is_search(c.name))
        run.sink.emit(
            events.ActionDispatch(
                round=self.round_no,
                purpose=purpose,
                calls=[{"index": i, "tool": c.name[:80], "args": c.arguments or {}} for i, c in planned],
                tool_calls_used=run.counters.tool_calls + len(accepted),
            )
        )
        outcomes: dict[str, tuple[ToolResult, list[Source]]] = {}
        futures, started = {}, {}
        for index, call in planned:
            if call.name not in self.known:
                error = f"unknown tool {call.name!r}; available: {', '.join(sorted(self.known))}"
                outcomes[call.id] = self._complete(index, call, ToolResult(error=error), 0)
                continue
            if call.arguments is None:
                outcomes[call.id] = self._complete(
                    index, call, ToolResult(error=f"invalid arguments: {call.parse_error}"), 0
                )
                continue
            unseen = self._unseen_url(call)
            if unseen:
                refusal = ToolResult(
                    error=f"{call.name} may only open an address found earlier in this research or written by "
                    f"the student; {unseen[:200]!r} is neither"
                )
                outcomes[call.id] = self._complete(index, call, refusal, 0)
                continue
            run.checkpoint(enforce_limits=False)
            started[call.id] = run.clock()
            futures[self.pool.submit(self._safe_call, call.name, call.arguments)] = (index, call)
        pending = set(futures)
        deadline = min(run.clock() + TOOL_CALL_TIMEOUT_SECONDS, run.tool_deadline())
        while pending:
            done, pending = wait(
                pending, timeout=max(0.0, deadline - run.clock()), return_when=FIRST_COMPLETED
            )
            if not done:
                for future in pending:
                    index, call = futures[future]
                    late = ToolResult(error=f"timed out after {self._ms(started[call.id]) // 1000}s")
                    outcomes[call.id] = self._complete(index, call, late, self._ms(started[call.id]))
                break
            for future in done:
                index, call = futures[future]
                outcomes[call.id] = self._complete(index, call, future.result(), self._ms(started[call.id]))
        # Sources get their ids in the order the model asked for the calls, not the order the
        # calls happened to finish: the same run gives the same ids, so a replay can match it.
        new = succeeded = 0
        ids: list[int] = []
        failures = []
        for index, call in planned:
            result, kept = outcomes[call.id]
            if not result.ok:
                failures.append({"tool": call.name[:80], "error": result.error[:200]})
            call_ids = []
            for source in kept:
                source_id, is_new = run.registry.add(source, found_by=purpose)
                call_ids.append(source_id)
                new += is_new
            if kept:
                run.sink.step_sources(index=index, source_ids=call_ids)
            succeeded += result.ok
            ids.extend(call_ids)
            self.messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": self._tool_message(result, call_ids)}
            )
        for call in skipped:
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": "Not run: too many tool calls in one turn or tool budget used up.",
                }
            )
        queries = [
            str(v)[:200]
            for _, c in planned
            for k, v in (c.arguments or {}).items()
            if k in ("query", "q", "search")
        ]
        return TurnOutcome(
            called=True,
            new_sources=new,
            succeeded=succeeded,
            source_ids=tuple(dict.fromkeys(ids)),
            tool_calls=len(accepted),
            searches=searches,
            failures=failures,
            queries=queries,
        )

    def _unseen_url(self, call) -> str:
        """A guarded URL argument (a tool's observed_url_params) that nothing in this research has shown:
        instructions inside a page must not send a tool to an address of their choosing."""
        guarded = getattr(self.tools, "observed_url_params", None)
        for param in guarded(call.name) if guarded else ():
            value = call.arguments.get(param)
            if isinstance(value, str) and value.strip() and not self._known_url(value.strip()):
                return value
        return ""

    def _known_url(self, url: str) -> bool:
        seen = (s.url for _, s in self.run.registry.items() if s.url)
        return url_observed(url, seen_urls=seen, student_text=self.run.inp.question)

    def _ms(self, start: float) -> int:
        return int((self.run.clock() - start) * 1000)

    def _bilingual(self, name: str) -> bool:
        traits = self.run.tool_traits(name)
        return bool(traits and traits.bilingual)

    def _safe_call(self, name: str, args: dict) -> ToolResult:
        try:
            if self._bilingual(name):
                query = args.get("query")
                translations = self.translations.for_query(query) if isinstance(query, str) else None
                result = self.tools.call(name, args, translations=translations)
            else:
                result = self.tools.call(name, args)
        except Exception as exc:  # a tool's failure is an observation, never the research's end
            return ToolResult(error=f"{type(exc).__name__}: {str(exc)[:300]}")
        return result if isinstance(result, ToolResult) else ToolResult(error="tool returned no result")

    def _admissible(self, source: Source) -> bool:
        inp = self.run.inp
        return not source.url or url_permitted(source.url, inp.allowed_domains, inp.denied_domains)

    def _complete(
        self, index: int, call, result: ToolResult, duration_ms: int
    ) -> tuple[ToolResult, list[Source]]:
        """Store the finished step and announce it at once (sources get ids after the turn)."""
        run = self.run
        kept = [s for s in result.sources if self._admissible(s)]
        filtered = len(result.sources) - len(kept)
        preview = self._preview(result, kept)
        status = "ok" if result.ok else "error"
        run.sink.step_finished(
            index=index,
            status=status,
            preview=preview,
            full={
                "sources": [s.as_dict() for s in kept],
                "data": result.data,
                "filtered_by_domain": filtered,
            },
            error=result.error,
            duration_ms=duration_ms,
        )
        run.sink.emit(
            events.ActionComplete(
                index=index,
                round=self.round_no,
                tool=call.name[:80],
                status=status,
                duration_ms=duration_ms,
                preview=preview,
                sources=len(kept),
                filtered_by_domain=filtered,
                error=result.error[:300],
            )
        )
        return result, kept

    def _preview(self, result: ToolResult, sources: list[Source]) -> str:
        limit = self.run.limits.preview_chars
        if not result.ok:
            return f"error: {result.error}"[:limit]
        if sources:
            text = " · ".join(f"{s.title} — {s.snippet}" for s in sources)
        else:
            text = (
                json.dumps(result.data, ensure_ascii=False, default=str)
                if result.data is not None
                else "(no results)"
            )
        return text[:limit]

    def _tool_message(self, result: ToolResult, ids: list[int]) -> str:
        """A source this conversation has already shown (the same passage found again by the
        next round's search) is named, not repeated: every later turn re-sends the whole
        conversation, so a repeat would be paid for in every turn after it."""
        fresh = [i for i in dict.fromkeys(ids) if i not in self.shown]
        again = [i for i in dict.fromkeys(ids) if i in self.shown]
        self.shown.update(fresh)
        if again and not fresh:
            return (
                f"<observations>\nsources already shown above: {', '.join(map(str, again))}\n</observations>"
            )
        text = render_tool_result(result, [(i, self.run.registry.get(i)) for i in fresh], max_chars=3000)
        if again:
            text += f"\n(also returned, already shown above: sources {', '.join(map(str, again))})"
        return text

    def compact(self) -> None:
        """Keep the action conversation within budget: older tool messages shrink to snippets
        (the writer still reads every source in full from the registry)."""
        budget = self.run.limits.observation_budget_chars
        tool_messages = [m for m in self.messages if m["role"] == "tool"]
        total = sum(len(m["content"]) for m in tool_messages)
        for message in tool_messages:
            if total <= budget:
                break
            before = len(message["content"])
            message["content"] = message["content"][:600] + (
                "\n…(compacted; full text kept for the writer)" if before > 600 else ""
            )
            total -= before - len(message["content"])

    # ------------------------------------------------------------------ reflection

    def reflect(self, known_status: dict[int, str]) -> dict:
        """One reflection. Returns its verdict plus the hypotheses' statuses merged with
        `known_status` ("hypothesis_status") and whether every one is settled."""
        run = self.run

        def build(compact: bool) -> list[dict]:
            budget = run.limits.observation_budget_chars // (4 if compact else 2)
            return [
                {"role": "system", "content": prompts.REFLECTION},
                {
                    "role": "user",
                    "content": f"{run.question_block()}\n\nPlan:\n{run.plan.block()}\n\n"
                    + render_observations(run.registry, budget_chars=budget),
                },
            ]

        failed = None
        try:
            data = run.structured("reflection", build, schemas.REFLECTION, "reflection", enforce_limits=True)
        except LimitReached as limit:
            # Time or tokens ran out before the reflection: gathering ends here (the loop reports it).
            run.reach(limit.reason, limit.value, limit.limit)
            data = dict(UNAVAILABLE)
        except PhaseFailed:
            failed = True
            # A failed reflection must not end the research: carry on gathering (limits still apply).
            data = {
                "sufficient": False,
                "missing": [],
                "covered_sub_questions": [],
                "hypotheses": [],
                "reasoning": "reflection unavailable",
            }
        hypotheses = run.plan.hypotheses
        status = dict(known_status)
        status.update(
            {h["index"]: h["status"] for h in data["hypotheses"] if 1 <= h["index"] <= len(hypotheses)}
        )
        settled = bool(hypotheses) and all(
            status.get(i) in ("supported", "refuted") for i in range(1, len(hypotheses) + 1)
        )
        run.sink.emit(
            events.ReflectionDone(
                round=self.round_no,
                sufficient=data["sufficient"],
                missing=data["missing"][:10],
                covered_sub_questions=data["covered_sub_questions"],
                hypotheses=[{"index": i, "status": s} for i, s in sorted(status.items())],
                sources=len(run.registry),
                failed=failed,
            )
        )
        data["hypotheses_settled"] = settled
        data["hypothesis_status"] = status
        return data
