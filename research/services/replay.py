"""Episode replay: re-run a stored task's reasoning (with the configured or another model)
against the tool results recorded in its steps — no new tool calls — as a new task marked as
a replay, then compare the two."""

from __future__ import annotations

import json
import re
from collections import defaultdict, deque

from django.db import transaction
from django.utils.translation import gettext as _

from agent.engine.events import TaskCreated
from agent.engine.types import Source, ToolResult, ToolTraits
from channels_app.roles import is_platform_admin
from quotas import services as quotas
from research.models import ResearchTask
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

    def call(self, name: str, args: dict) -> ToolResult:
        queue = self._recorded.get((name, _canonical(args)))
        if not queue:
            self.misses += 1
            return ToolResult(error=NOT_RECORDED)
        # Repeated identical calls replay the recorded answers in order, the last one thereafter.
        return queue.popleft() if len(queue) > 1 else queue[0]


def replay_task(original: ResearchTask, *, run_by, model: str | None = None) -> ResearchTask:
    """The replay belongs to `run_by`, a platform admin, never to the student: it is flagged
    is_replay, writes no chat row, feeds no source statistics, and every learner-facing query
    (history, chat, follow-up context, export) leaves it out."""
    if not is_platform_admin(run_by):
        raise ServiceError(
            "not_platform_admin", _("Only a platform admin can replay a research."), status=403
        )
    if not original.is_terminal or not original.steps.exists():
        raise ServiceError("not_replayable", _("Only a finished task with recorded steps can be replayed."))
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
    runner.execute_task(task.pk, toolbox=toolbox, model=model)
    task.refresh_from_db()
    return task


def _headings(markdown: str) -> list[str]:
    return [h.strip() for h in re.findall(r"^#{1,6}\s+(.+)$", markdown or "", re.M)]


def _cited(task: ResearchTask) -> set[tuple]:
    return {
        (c["source_tool"], c.get("url") or c.get("locator") or c["title"]) for c in task.citations_json or []
    }


def compare(original: ResearchTask, replay: ResearchTask) -> dict:
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
    return {
        "original": str(original.task_uuid),
        "replay": str(replay.task_uuid),
        "replay_status": replay.status,
        "plan_structure_match": plan_match,
        "cited_sources_jaccard": jaccard,
        "cited_sources_match": cited_a == cited_b,
        "answer_sections_match": sections_match,
        "reproduced": plan_match and cited_a == cited_b and sections_match,
        "metrics": diffs,
    }
