"""Episode replay: re-run a stored task's reasoning against the tool results recorded in its
steps — no new tool calls — as a new task marked as a replay, then compare the two.

Two modes:
- normal: the model (the configured one, or another) answers afresh; the comparison says how far
  the new answer's claims overlap the original's (figures by entity, metric, period and value;
  other claims by their text);
- exact: the model's answers are the ones recorded in the original's transcript too
  (`RecordedAnswers`), so the engine must reproduce the same claims, citations and body. Each
  request the engine makes is looked up by its content (messages, output format, tools); one the
  transcript does not hold means the engine or its inputs (settings, the teacher's rules, the
  code) changed since: the replay stops there and names that first divergence. No model server
  is asked. A research that stopped on its time limit cannot be replayed exactly (the replay's
  clock is not the original's: it reaches other points before the limit)."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import defaultdict, deque
from dataclasses import replace

from django.db import transaction
from django.utils.translation import gettext as _

from agent.engine.events import TaskCreated
from agent.engine.llm import LLMClient, LLMConfig, Reply
from agent.engine.types import Source, ToolResult, ToolTraits
from channels_app.access import can
from channels_app.roles import RESEARCH_REPLAY
from quotas import services as quotas
from research.models import ResearchTask, TranscriptEntry
from uedu_dr.errors import ServiceError

from . import events, runner, settlement

NOT_RECORDED = "not recorded in the original run (a replay makes no new tool calls)"


def _canonical(args: dict) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def _result_of(step) -> ToolResult:
    if step.status != "ok":
        return ToolResult(error=step.error or "the original call failed")
    full = step.result_full or {}
    sources = []
    for raw in full.get("sources", []):
        fields = {k: v for k, v in raw.items() if k in Source.__dataclass_fields__}
        sources.append(Source(**fields))
    return ToolResult(sources=sources, data=full.get("data"))


class RecordedToolbox:
    """The original task's toolbox, answering from its recorded steps."""

    def __init__(self, original: ResearchTask, live):
        self._specs = live.specs()
        self._names = live.names()
        self._guarded = live.observed_url_params
        self._traits = live.traits
        self._recorded: dict[tuple[str, str], deque] = defaultdict(deque)
        for step in original.steps.exclude(tool_name="").order_by("index"):
            self._recorded[(step.tool_name, _canonical(step.args))].append(_result_of(step))
        self.misses = 0

    def specs(self) -> list[dict]:
        return self._specs

    def names(self) -> set[str]:
        return self._names

    def observed_url_params(self, name: str) -> tuple[str, ...]:
        return self._guarded(name)

    def traits(self, name: str) -> ToolTraits | None:
        return self._traits(name)

    def call(self, name: str, args: dict, *, translations: list[dict] | None = None) -> ToolResult:
        # The recorded result already holds what the original's translated queries found.
        queue = self._recorded.get((name, _canonical(args)))
        if not queue:
            self.misses += 1
            return ToolResult(error=NOT_RECORDED)
        # Repeated identical calls replay the recorded answers in order, the last one thereafter.
        return queue.popleft() if len(queue) > 1 else queue[0]


class ReplayDiverged(Exception):
    """The engine asked the model something the original run did not (an exact replay only).
    Not an LLMError: no phase may take it for a failed call and carry on without it."""


def request_key(messages: list, response_format, tool_names) -> str:
    """What identifies a model request for an exact replay: its messages, its output format and
    the tools it offered (not its answer bound, temperature or timeout)."""
    return json.dumps(
        {"messages": messages, "response_format": response_format or None, "tools": sorted(tool_names or [])},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )


class RecordedAnswers(LLMClient):
    """An LLM client that answers every request with the answer recorded for the same request in
    a task's transcript, and raises ReplayDiverged for one it does not hold. What the original's
    server refused (json_schema, native tool calls…) is read from the recorded requests, so the
    engine shapes its requests as it did then. Usage is counted as recorded (the limits act as
    they did) at no cost: no model was asked."""

    def __init__(self, config: LLMConfig, *, entries: list[TranscriptEntry], **kwargs) -> None:
        config = replace(
            config,
            base_url=f"http://replay.invalid/{uuid.uuid4().hex}",  # its own record of refusals
            api_key="replay",
            prices={"default": [0.0, 0.0]},
        )
        super().__init__(config, **kwargs)
        self._lock = threading.Lock()
        self._answers: dict[str, deque] = defaultdict(deque)
        self._recorded: list[tuple[int, str, dict]] = []
        for entry in entries:
            request = entry.request or {}
            key = request_key(
                request.get("messages"), request.get("response_format"), request.get("tool_names")
            )
            self._answers[key].append(entry.response)
            self._recorded.append((entry.seq, entry.role, request))
        self._learn_refusals()
        self.divergence = ""
        self.served = 0
        self._asking = threading.local()  # the role of the request being sent, per thread

    def _complete(self, role, *args, **kwargs):
        self._asking.role = role
        return super()._complete(role, *args, **kwargs)

    def _learn_refusals(self) -> None:
        actions = [r for _, role, r in self._recorded if role == "action"]
        if actions and not any(r.get("tool_names") for r in actions):
            for model in {self.config.model_for("action")}:
                self._remember_unsupported(model, "tools")
        for _seq, role, request in self._recorded:
            model = self.config.model_for(role)
            output = (request.get("response_format") or {}).get("type")
            refused = set()
            if output == "json_object":
                refused.add("json_schema")
            if output is None and role != "action":
                refused |= {"json_schema", "json_object"}
            if "max_tokens" in request and "max_completion_tokens" not in request:
                refused.add("max_completion_tokens")
            if not model.startswith(self.config.reasoning_prefixes):
                if "temperature" not in request:
                    refused.add("temperature")
                if "seed" not in request and self.config.seed is not None:
                    refused.add("seed")
            elif "reasoning_effort" not in request:
                refused.add("reasoning_effort")
            for param in refused:
                self._remember_unsupported(model, param)

    def _post(self, model: str, messages: list[dict], params: dict, timeout) -> Reply:
        tools = [t["function"]["name"] for t in params.get("tools") or []]
        key = request_key(json.loads(json.dumps(messages, default=str)), params.get("response_format"), tools)
        with self._lock:
            answers = self._answers.get(key)
            if answers:
                self.served += 1
                return Reply(answers.popleft())
            if not self.divergence:
                self.divergence = self._first_difference(getattr(self._asking, "role", ""), messages)
            raise ReplayDiverged(self.divergence)

    def unused(self) -> int:
        return sum(len(answers) for answers in self._answers.values())

    def _first_difference(self, asking: str, messages: list[dict]) -> str:
        """The recorded request of the same role closest to this one (the longest run of equal
        messages), and where they part: which message, and the first characters that differ."""
        sent = json.loads(json.dumps(messages, default=str))
        same_role = [r for r in self._recorded if r[1] == asking]
        if not same_role:
            return f"a {asking} request, and the original's transcript holds none"
        best, best_same = None, -1
        for seq, role, request in same_role:
            recorded = request.get("messages") or []
            same = next(
                (i for i, (a, b) in enumerate(zip(sent, recorded)) if a != b), min(len(sent), len(recorded))
            )
            if same > best_same:
                best, best_same = (seq, role, recorded), same
        seq, role, recorded = best
        if best_same >= min(len(sent), len(recorded)):
            if len(sent) == len(recorded):
                return (
                    f"a {role} request like transcript entry #{seq} (same messages, other output format "
                    "or tools), or asked more often than the original asked it"
                )
            return (
                f"a {role} request with {len(sent)} messages where transcript entry #{seq} has "
                f"{len(recorded)} (the first {best_same} are the same)"
            )
        a = json.dumps(sent[best_same].get("content"), ensure_ascii=False)
        b = json.dumps(recorded[best_same].get("content"), ensure_ascii=False)
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return (
            f"a {role} request that differs from transcript entry #{seq} in message {best_same} "
            f"({sent[best_same].get('role')}) at character {at}: replay {a[max(0, at - 40) : at + 80]!r}, "
            f"original {b[max(0, at - 40) : at + 80]!r}"
        )


def replay_task(
    original: ResearchTask, *, run_by, model: str | None = None, exact: bool = False
) -> ResearchTask:
    """The replay belongs to `run_by`, a platform admin, never to the student: it is flagged
    is_replay, writes no chat row, feeds no source statistics, and every learner-facing query
    (history, chat, follow-up context, export) leaves it out. `exact`: the model's answers too
    come from the original's transcript; raises ReplayDiverged (after the replay task has ended,
    failed) when the engine asks something the transcript does not hold."""
    if not can(run_by, RESEARCH_REPLAY):
        raise ServiceError(
            "not_platform_admin", _("Only a platform admin can replay a research."), status=403
        )
    if not original.is_terminal or not original.steps.exists():
        raise ServiceError("not_replayable", _("Only a finished task with recorded steps can be replayed."))
    if exact and model:
        raise ServiceError(
            "not_replayable", _("An exact replay uses the recorded answers, not another model.")
        )
    entries = list(TranscriptEntry.objects.filter(task=original, kind="llm").order_by("seq")) if exact else []
    if exact and not entries:
        raise ServiceError("not_replayable", _("The task has no recorded model answers to replay."))
    with transaction.atomic():
        task = ResearchTask.objects.create(
            user=run_by,
            is_replay=True,
            channel=original.channel,
            user_question=original.user_question,
            trigger_mode=original.trigger_mode,
            language=original.language,
            # The agreed context (period, entities, figures…) is part of the input: a replay
            # researches the same question under the same agreement.
            context_json=original.context_json,
            replay_of=original,
        )
        # A replay spends tokens like any research: it counts against the platform cap, booked to
        # the admin who ran it (the student did not ask for it).
        quotas.reserve_cost(run_by, str(task.task_uuid), settlement.worst_case_cost())
        events.record_event(
            task.pk,
            task.task_uuid,
            TaskCreated(question=task.user_question, replay_of=str(original.task_uuid), model=model or ""),
        )
    toolbox = RecordedToolbox(original, runner.toolbox_for(original))
    clients: list[RecordedAnswers] = []

    def recorded(config, **kwargs) -> RecordedAnswers:
        clients.append(RecordedAnswers(config, entries=entries, **kwargs))
        return clients[-1]

    runner.execute_task(task.pk, toolbox=toolbox, model=model, client_class=recorded if exact else LLMClient)
    task.refresh_from_db()
    if clients and clients[0].divergence:
        raise ReplayDiverged(f"replay {task.task_uuid} diverged: {clients[0].divergence}")
    return task


def _headings(markdown: str) -> list[str]:
    return [h.strip() for h in re.findall(r"^#{1,6}\s+(.+)$", markdown or "", re.M)]


def _cited(task: ResearchTask) -> set[tuple]:
    return {
        (c["source_tool"], c.get("url") or c.get("locator") or c["title"]) for c in task.citations_json or []
    }


def _norm(value) -> str:
    return " ".join(str(value or "").lower().replace(",", " ").split())


def claim_key(claim: dict) -> tuple:
    """A figure by its entity, metric, period and value; any other claim by its text."""
    if claim.get("kind") == "figure" and claim.get("value") is not None:
        return (
            "figure",
            _norm(claim.get("entity")),
            _norm(claim.get("metric")),
            _norm(claim.get("period")),
            float(claim["value"]),
        )
    return ("text", _norm(claim.get("text")))


def verified_claims(task: ResearchTask) -> list[dict]:
    return [
        c
        for c in (task.verification_json or {}).get("evidence_claims", [])
        if c.get("verdict") in ("supported", "partial") and not c.get("reason")
    ]


def claim_overlap(original: ResearchTask, replay: ResearchTask) -> dict:
    a = {claim_key(c) for c in verified_claims(original)}
    b = {claim_key(c) for c in verified_claims(replay)}
    union = a | b
    return {
        "original": len(a),
        "replay": len(b),
        "shared": len(a & b),
        "jaccard": round(len(a & b) / len(union), 4) if union else 1.0,
    }


def _first_mismatch(a, b, path: str = "") -> str:
    """Where two JSON values first differ, as a path (empty when they are equal)."""
    if type(a) is not type(b):
        return path or "/"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}/{key}"
            found = _first_mismatch(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return ""
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_mismatch(x, y, f"{path}/{i}")
            if found:
                return found
        return f"{path}/{min(len(a), len(b))}" if len(a) != len(b) else ""
    return "" if a == b else (path or "/")


def exact_comparison(original: ResearchTask, replay: ResearchTask) -> dict:
    """Whether an exact replay reproduced the claims (every one, with its verdict), the citations
    and the body, and where each first differs."""
    parts = {
        "claims": (
            (original.verification_json or {}).get("evidence_claims", []),
            (replay.verification_json or {}).get("evidence_claims", []),
        ),
        "citations": (original.citations_json or [], replay.citations_json or []),
        "body": (original.final_answer, replay.final_answer),
    }
    out = {}
    for name, (a, b) in parts.items():
        where = _first_mismatch(a, b)
        out[f"{name}_match"] = not where
        if where:
            out[f"{name}_first_difference"] = where
    out["reproduced"] = all(out[f"{name}_match"] for name in parts)
    return out


def compare(original: ResearchTask, replay: ResearchTask, *, exact: bool = False) -> dict:
    a, b = original.plan_json or {}, replay.plan_json or {}
    plan_match = a.get("complexity") == b.get("complexity") and len(a.get("sub_questions", [])) == len(
        b.get("sub_questions", [])
    )
    cited_a, cited_b = _cited(original), _cited(replay)
    union = cited_a | cited_b
    jaccard = round(len(cited_a & cited_b) / len(union), 4) if union else 1.0
    sections_match = _headings(original.final_answer) == _headings(replay.final_answer)
    diffs = {}
    ma, mb = getattr(original, "metrics", None), getattr(replay, "metrics", None)
    for field in (
        "citation_coverage",
        "unsupported_rate",
        "conflicts_found",
        "conflicts_shown",
        "citations",
        "low_credibility_share",
        "tool_calls",
        "tokens",
    ):
        va = getattr(ma, field, None) if ma else None
        vb = getattr(mb, field, None) if mb else None
        diffs[field] = {
            "original": va,
            "replay": vb,
            "delta": (vb - va) if isinstance(va, (int, float)) and isinstance(vb, (int, float)) else None,
        }
    diffs["cost_usd"] = {
        "original": float(original.cost_usd),
        "replay": float(replay.cost_usd),
        "delta": round(float(replay.cost_usd - original.cost_usd), 6),
    }
    report = {
        "original": str(original.task_uuid),
        "replay": str(replay.task_uuid),
        "mode": "exact" if exact else "normal",
        "replay_status": replay.status,
        "plan_structure_match": plan_match,
        "cited_sources_jaccard": jaccard,
        "cited_sources_match": cited_a == cited_b,
        "answer_sections_match": sections_match,
        "claims_overlap": claim_overlap(original, replay),
        "reproduced": plan_match and cited_a == cited_b and sections_match,
        "metrics": diffs,
    }
    if exact:
        report.update(exact_comparison(original, replay))
    return report
