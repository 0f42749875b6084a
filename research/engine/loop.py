"""The research loop: Plan → (Action → Observation → Reflect)* → Synthesize → Verify.

A macro plan-and-execute state machine with a ReAct loop inside the evidence phase. It imports
no Django: it receives a toolbox bound to one user and channel, an LLM client, an event sink and
a cancellation check, and returns a ResearchResult. Cancellation and limits are checked before
every LLM call and every tool call.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Callable

from . import prompts, schemas
from .answer import Numbering, is_factual, join, marker_ids, rewrite_markers, scrub_links, segments
from .llm import LLMClient, LLMError, LLMUnavailable
from .sources import SourceRegistry, neutralise, render_observations, render_source
from .types import Citation, EventSink, Limits, ResearchInput, ResearchResult, ToolResult, Toolbox

TOOL_CALL_TIMEOUT_SECONDS = 90
VERIFY_BATCH = 10

UNVERIFIED_MARK = {
    "en": " *(not supported by the cited sources)*",
    "zh": " *（此句未獲引用來源支持）*",
}
NO_SOURCES_ANSWER = {
    "en": "No source that could be cited was found for this question, so no answer is given. "
    "Try rephrasing the question or ask your teacher to add course materials.\n",
    "zh": "這個問題找不到可引用的資料來源，因此不提供答案。請換個方式提問，或請老師補充課程教材。\n",
}
CONFLICTS_HEADING = {"en": "Unresolved / conflicting evidence", "zh": "未決／相互矛盾的證據"}


class Cancelled(Exception):
    pass


class PhaseFailed(Exception):
    def __init__(self, phase: str, cause: Exception | str):
        self.phase = phase
        super().__init__(f"{phase} failed: {cause}")


class _Limit(Exception):
    def __init__(self, reason: str, value, limit):
        self.reason, self.value, self.limit = reason, value, limit
        super().__init__(reason)


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
    ):
        self.inp, self.llm, self.tools, self.sink = inp, llm, tools, sink
        self.is_cancelled, self.limits, self.clock = is_cancelled, limits, clock
        self.registry = SourceRegistry()
        self.started = clock()
        self.plan: dict = {}
        self.rounds = 0
        self.tool_calls = 0
        self.step_index = 0
        self.limit_hit = ""
        self.retries: list[dict] = []
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
            raise _Limit("max_seconds", round(elapsed, 1), self.limits.max_seconds)
        if self.llm.meter.total_tokens >= self.limits.max_tokens:
            raise _Limit("max_tokens", self.llm.meter.total_tokens, self.limits.max_tokens)

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

    def call_timeout(self) -> float:
        """No single LLM call may outlive the research's hard deadline."""
        left = self.started + self.limits.max_seconds + self.limits.grace_seconds - self.clock()
        return max(1.0, min(self.llm.config.timeout, left))

    # ------------------------------------------------------------------ phases

    def run(self) -> ResearchResult:
        try:
            self.plan_phase()
            stop_reason = self.evidence_phase()
            self.checkpoint(enforce_limits=False)  # a cancel during the last call stops before writing
            answer, conflicts, invalid = self.synthesize_phase()
            answer, citations, verification = self.verify_phase(answer, conflicts, invalid)
        except Cancelled:
            return self._result("cancelled", "cancelled")
        except PhaseFailed as exc:
            return self._result("failed", f"{exc.phase}_failed", error=str(exc))
        return self._result(
            "completed",
            stop_reason,
            answer=answer,
            citations=citations,
            verification=verification,
            invalid=invalid,
        )

    def plan_phase(self) -> None:
        specs = self.tools.specs()
        system = prompts.PLANNER.format(tools=prompts.tool_catalogue(specs))

        def build(compact: bool) -> list[dict]:
            context = "" if compact else self._channel_context()
            return [
                {"role": "system", "content": system},
                {"role": "user", "content": f"{context}Student's question:\n{self.inp.question}"},
            ]

        plan = self.structured("planner", build, schemas.PLAN, "research_plan")
        known = self.tools.names()
        for sq in plan["sub_questions"]:
            sq["suggested_tools"] = [t for t in sq["suggested_tools"] if t in known]
        self.plan = plan
        self.sink.emit(
            "plan_complete",
            {
                "complexity": plan["complexity"],
                "sub_questions": [sq["question"] for sq in plan["sub_questions"]],
                "suggested_tools": sorted({t for sq in plan["sub_questions"] for t in sq["suggested_tools"]}),
                "hypotheses": plan["hypotheses"],
                "limits": {"max_steps": self.limits.max_steps, "max_tool_calls": self.limits.max_tool_calls, "max_tokens": self.limits.max_tokens},
            },
        )

    def evidence_phase(self) -> str:
        specs = self.tools.specs()
        messages: list[dict] = [
            {"role": "system", "content": prompts.ACTION.format(max_calls=self.limits.max_calls_per_round)},
            {
                "role": "user",
                "content": f"{self._channel_context()}Student's question:\n{self.inp.question}\n\n"
                f"Research plan:\n{prompts.plan_block(self.plan)}",
            },
        ]
        quiet_rounds = 0
        failed_turns = 0
        error_rounds = 0
        with ThreadPoolExecutor(max_workers=self.limits.max_calls_per_round, thread_name_prefix="tool") as pool:
            while True:
                try:
                    self._check_budget()
                    self.checkpoint(enforce_limits=True)
                except _Limit as limit:
                    self.limit_hit = limit.reason
                    self.sink.emit("limit_hit", {"reason": limit.reason, "value": limit.value, "limit": limit.limit})
                    return "limit_hit"
                self.rounds += 1
                self.sink.emit("action_thinking", {"round": self.rounds})
                try:
                    turn = self.llm.with_tools("action", messages, specs, timeout=self.call_timeout())
                except LLMError as exc:
                    failed_turns += 1
                    self.retries.append({"role": "action", "kind": exc.kind})
                    if failed_turns >= 2:
                        if len(self.registry) == 0:
                            raise PhaseFailed("action", exc) from None
                        return "action_failed"
                    continue
                failed_turns = 0
                if not turn.tool_calls:
                    return "model_done"
                messages.append(turn.message)
                new_sources, succeeded = self._dispatch(turn.tool_calls, messages, pool)
                # A round whose every call failed (invented tool, broken arguments, tool down)
                # says nothing about information gain; the model gets to correct itself, a bounded
                # number of times.
                error_rounds = 0 if succeeded else error_rounds + 1
                if error_rounds >= 3:
                    return "tool_errors"
                if succeeded:
                    quiet_rounds = 0 if new_sources else quiet_rounds + 1
                if quiet_rounds >= 2:
                    return "no_new_information"
                if self.tool_calls >= self.limits.max_tool_calls or self.rounds >= self.limits.max_steps:
                    continue  # the budget check at the top reports the limit
                sufficient, missing = self._reflect()
                if sufficient:
                    return "sufficient"
                messages.append(
                    {
                        "role": "user",
                        "content": "Reflection says the evidence is not yet sufficient. Still missing:\n"
                        + "\n".join(f"- {m}" for m in missing or ["(unspecified)"])
                        + "\nCall tools to fill these gaps, or reply DONE if no tool can.",
                    }
                )
                self._compact(messages)

    def _check_budget(self) -> None:
        if self.rounds >= self.limits.max_steps:
            raise _Limit("max_steps", self.rounds, self.limits.max_steps)
        if self.tool_calls >= self.limits.max_tool_calls:
            raise _Limit("tool_budget", self.tool_calls, self.limits.max_tool_calls)

    def _dispatch(self, calls, messages: list[dict], pool: ThreadPoolExecutor) -> tuple[int, int]:
        """Run one turn's tool calls concurrently and store each as a step.
        Returns (new sources, calls that succeeded)."""
        room = min(self.limits.max_calls_per_round, self.limits.max_tool_calls - self.tool_calls)
        accepted, skipped = calls[:room], calls[room:]
        known = self.tools.names()
        planned = []
        for call in accepted:
            self.step_index += 1
            index = self.step_index
            args = call.arguments if call.arguments is not None else {"_raw": call.raw_arguments}
            self.sink.step_started(index=index, round=self.rounds, phase="action", tool_name=call.name[:80], args=args)
            planned.append((index, call))
        self.tool_calls += len(accepted)
        self.sink.emit(
            "action_dispatch",
            {
                "round": self.rounds,
                "calls": [{"index": i, "tool": c.name[:80], "args": c.arguments or {}} for i, c in planned],
                "tool_calls_used": self.tool_calls,
            },
        )
        results: dict[str, tuple[ToolResult, list[int], int]] = {}
        new_sources = succeeded = 0
        futures = {}
        started = {}
        for index, call in planned:
            if call.name not in known:
                results[call.id] = self._finish_step(
                    index, call, ToolResult(error=f"unknown tool {call.name!r}; available: {', '.join(sorted(known))}"), 0
                )
                continue
            if call.arguments is None:
                results[call.id] = self._finish_step(index, call, ToolResult(error=f"invalid arguments: {call.parse_error}"), 0)
                continue
            self.checkpoint(enforce_limits=False)
            started[call.id] = self.clock()
            futures[pool.submit(self._safe_call, call.name, call.arguments)] = (index, call)
        pending = set(futures)
        deadline = self.clock() + TOOL_CALL_TIMEOUT_SECONDS
        while pending:
            done, pending = wait(pending, timeout=max(0.0, deadline - self.clock()), return_when=FIRST_COMPLETED)
            if not done:  # the tools that are still running are abandoned, not waited for
                for future in pending:
                    index, call = futures[future]
                    timed_out = ToolResult(error=f"timed out after {TOOL_CALL_TIMEOUT_SECONDS}s")
                    results[call.id] = self._finish_step(index, call, timed_out, int((self.clock() - started[call.id]) * 1000))
                break
            for future in done:
                index, call = futures[future]
                results[call.id] = self._finish_step(index, call, future.result(), int((self.clock() - started[call.id]) * 1000))
        for _, call in planned:
            result, ids, new = results[call.id]
            new_sources += new
            succeeded += result.ok
            messages.append({"role": "tool", "tool_call_id": call.id, "content": self._tool_message(result, ids)})
        for call in skipped:
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": "Not run: too many tool calls in one turn or tool budget used up."}
            )
        return new_sources, succeeded

    def _safe_call(self, name: str, args: dict) -> ToolResult:
        try:
            result = self.tools.call(name, args)
        except Exception as exc:  # a tool's failure is an observation, never the research's end
            return ToolResult(error=f"{type(exc).__name__}: {str(exc)[:300]}")
        return result if isinstance(result, ToolResult) else ToolResult(error="tool returned no result")

    def _finish_step(self, index: int, call, result: ToolResult, duration_ms: int) -> tuple[ToolResult, list[int], int]:
        """Register the call's sources, store the step, announce it. Returns (result, ids, new)."""
        ids, new = [], 0
        for source in result.sources:
            source_id, is_new = self.registry.add(source)
            ids.append(source_id)
            new += is_new
        preview = self._preview(result)
        status = "ok" if result.ok else "error"
        self.sink.step_finished(
            index=index,
            status=status,
            preview=preview,
            full={"sources": [dict(s.as_dict(), id=i) for i, s in zip(ids, result.sources)], "data": result.data},
            error=result.error,
            duration_ms=duration_ms,
        )
        self.sink.emit(
            "action_complete",
            {
                "index": index,
                "round": self.rounds,
                "tool": call.name[:80],
                "status": status,
                "duration_ms": duration_ms,
                "preview": preview,
                "source_ids": ids,
                "new_sources": new,
                "error": result.error[:300],
            },
        )
        return result, ids, new

    def _preview(self, result: ToolResult) -> str:
        if not result.ok:
            return f"error: {result.error}"[: self.limits.preview_chars]
        if result.sources:
            text = " · ".join(f"{s.title} — {s.snippet}" for s in result.sources)
        else:
            text = json.dumps(result.data, ensure_ascii=False, default=str) if result.data is not None else "(no results)"
        return text[: self.limits.preview_chars]

    def _tool_message(self, result: ToolResult, ids: list[int]) -> str:
        if not result.ok:
            return f"Tool error: {neutralise(result.error)}"
        if not ids:
            data = json.dumps(result.data, ensure_ascii=False, default=str)[:4000] if result.data is not None else "no results"
            return f"<observations>\n{neutralise(data)}\n</observations>"
        blocks = [render_source(i, self.registry.get(i), full=True, max_chars=3000) for i in ids]
        return "<observations>\n" + "\n".join(blocks) + "\n</observations>"

    def _compact(self, messages: list[dict]) -> None:
        """Keep the action conversation within budget: older tool messages shrink to snippets."""
        tool_messages = [m for m in messages if m["role"] == "tool"]
        total = sum(len(m["content"]) for m in tool_messages)
        for message in tool_messages:
            if total <= self.limits.observation_budget_chars:
                break
            before = len(message["content"])
            message["content"] = message["content"][:600] + ("\n…(compacted; full text kept for the writer)" if before > 600 else "")
            total -= before - len(message["content"])

    def _reflect(self) -> tuple[bool, list[str]]:
        def build(compact: bool) -> list[dict]:
            budget = self.limits.observation_budget_chars // (4 if compact else 2)
            return [
                {"role": "system", "content": prompts.REFLECTION},
                {
                    "role": "user",
                    "content": f"Student's question:\n{self.inp.question}\n\nPlan:\n{prompts.plan_block(self.plan)}\n\n"
                    + render_observations(self.registry, budget_chars=budget),
                },
            ]

        try:
            data = self.structured("reflection", build, schemas.REFLECTION, "reflection", enforce_limits=True)
        except PhaseFailed:
            # A failed reflection must not end the research: carry on gathering (limits still apply).
            data = {"sufficient": False, "missing": [], "covered_sub_questions": [], "reasoning": "reflection unavailable"}
        self.sink.emit(
            "reflection_done",
            {
                "round": self.rounds,
                "sufficient": data["sufficient"],
                "missing": data["missing"][:10],
                "covered_sub_questions": data["covered_sub_questions"],
                "sources": len(self.registry),
            },
        )
        return data["sufficient"], data["missing"]

    def synthesize_phase(self) -> tuple[str, list[dict], int]:
        if len(self.registry) == 0:
            return NO_SOURCES_ANSWER[self.lang], [], 0

        def build(compact: bool) -> list[dict]:
            budget = self.limits.observation_budget_chars // (2 if compact else 1)
            return [
                {"role": "system", "content": prompts.SYNTHESIZER.format(language=prompts.language_name(self.inp.language))},
                {
                    "role": "user",
                    "content": f"{self._channel_context()}Student's question:\n{self.inp.question}\n\n"
                    f"Plan:\n{prompts.plan_block(self.plan)}\n\n"
                    + render_observations(self.registry, budget_chars=budget),
                },
            ]

        data = self.structured("synthesizer", build, schemas.SYNTHESIS, "research_answer")
        observed_urls = {s.url for _, s in self.registry.items() if s.url}
        answer, _ = scrub_links(data["answer"], observed_urls)
        valid = {i for i, _ in self.registry.items()}
        answer, invalid = rewrite_markers(answer, {i: (i if i in valid else None) for i in marker_ids(answer)})
        conflicts = []
        for conflict in data["conflicts"]:
            positions = [
                {"summary": scrub_links(p["summary"], observed_urls)[0], "source_ids": [i for i in p["source_ids"] if i in valid]}
                for p in conflict["positions"]
            ]
            positions = [p for p in positions if p["source_ids"]]
            if len(positions) >= 2:
                conflicts.append({"topic": scrub_links(conflict["topic"], observed_urls)[0], "positions": positions})
        return answer, conflicts, invalid

    def verify_phase(self, answer: str, conflicts: list[dict], invalid: int) -> tuple[str, list[Citation], dict]:
        parts = segments(answer)
        claims = [(n, seg) for n, seg in enumerate(parts) if seg.sentence and seg.ids]
        verdicts: dict[int, dict] = {}
        incomplete = False
        for start in range(0, len(claims), VERIFY_BATCH):
            batch = claims[start : start + VERIFY_BATCH]
            try:
                verdicts.update(self._verify_batch(batch))
            except PhaseFailed:
                incomplete = True  # those claims stay "unverified" and say so
        mark = UNVERIFIED_MARK[self.lang]
        ledger = []
        for n, seg in enumerate(parts):
            if not seg.sentence or not is_factual(seg):
                continue
            if seg.ids:
                verdict = verdicts.get(n, {"verdict": "unverified", "reason": "the verifier gave no verdict"})
            else:
                verdict = {"verdict": "no_citation", "reason": "no source cited"}
            entry = {"text": seg.claim, "source_ids": seg.ids, **verdict, "action": "kept"}
            if verdict["verdict"] in ("unsupported", "no_citation"):
                if self.inp.unsupported_policy == "drop":
                    seg.text = ""
                    entry["action"] = "dropped"
                else:
                    seg.text = _append_mark(seg.text, mark)
                    entry["action"] = "marked"
            ledger.append(entry)
        answer = join(parts)
        if conflicts:
            answer += self._conflicts_section(conflicts)
        valid = {i for i, _ in self.registry.items()}
        numbering = Numbering.of(answer, valid)
        answer, _ = rewrite_markers(answer, numbering.by_source)
        citations = []
        for source_id, number in sorted(numbering.by_source.items(), key=lambda kv: kv[1]):
            s = self.registry.get(source_id)
            citations.append(
                Citation(number=number, source_id=source_id, title=s.title, url=s.url, source_tool=s.source_tool,
                         snippet=s.snippet, tier=s.tier, origin=s.origin, locator=s.locator)
            )
        for entry in ledger:
            entry["citations"] = [numbering.by_source[i] for i in entry.pop("source_ids") if i in numbering.by_source]
        counts = {}
        for entry in ledger:
            counts[entry["verdict"]] = counts.get(entry["verdict"], 0) + 1
        report = {
            "status": "incomplete" if incomplete else "complete",
            "policy": self.inp.unsupported_policy,
            "claims": ledger,
            "counts": counts,
            "conflicts": [
                {"topic": c["topic"], "positions": [{"summary": p["summary"], "citations": [numbering.by_source[i] for i in p["source_ids"] if i in numbering.by_source]} for p in c["positions"]]}
                for c in conflicts
            ],
            "invalid_citations_removed": invalid,
            "internal_sources": sum(1 for c in citations if c.origin == "internal"),
            "external_sources": sum(1 for c in citations if c.origin == "external"),
            "retries": self.retries,
        }
        self.sink.emit(
            "verification_done",
            {"status": report["status"], "counts": counts, "conflicts": len(conflicts), "invalid_citations_removed": invalid, "citations": len(citations)},
        )
        return answer, citations, report

    def _verify_batch(self, batch) -> dict[int, dict]:
        items = []
        for claim_id, seg in batch:
            passages = []
            for source_id in seg.ids:
                source = self.registry.get(source_id)
                if source is not None:
                    passages.append({"source_id": source_id, "title": source.title, "passage": neutralise((source.text or source.snippet)[:2000])})
            items.append({"claim_id": claim_id, "claim": seg.claim, "passages": passages})

        def build(compact: bool) -> list[dict]:
            payload = items
            if compact:
                payload = [dict(i, passages=[dict(p, passage=p["passage"][:600]) for p in i["passages"]]) for i in items]
            return [
                {"role": "system", "content": prompts.VERIFIER},
                {"role": "user", "content": "<observations>\n" + prompts.as_json(payload) + "\n</observations>"},
            ]

        data = self.structured("verifier", build, schemas.VERIFICATION, "claim_verdicts")
        wanted = {claim_id for claim_id, _ in batch}
        return {v["claim_id"]: {"verdict": v["verdict"], "reason": v["reason"][:300]} for v in data["verdicts"] if v["claim_id"] in wanted}

    def _conflicts_section(self, conflicts: list[dict]) -> str:
        lines = [f"\n## {CONFLICTS_HEADING[self.lang]}\n"]
        for conflict in conflicts:
            sides = "; ".join(
                f"{p['summary']} " + "".join(f"[{i}]" for i in p["source_ids"]) for p in conflict["positions"]
            )
            lines.append(f"- **{conflict['topic']}**: {sides}")
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ helpers

    def _channel_context(self) -> str:
        if not self.inp.channel_name:
            return ""
        return f"Course channel: {self.inp.channel_name}\n{self.inp.channel_description}\n\n"

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
            sources_seen=len(self.registry),
        )


def _append_mark(text: str, mark: str) -> str:
    stripped = text.rstrip()
    return stripped + mark + text[len(stripped):]


def run_research(inp: ResearchInput, **kwargs) -> ResearchResult:
    return ResearchRun(inp, **kwargs).run()
