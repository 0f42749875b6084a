"""The ledger and the per-task quality metrics, stored when a task ends.

The ledger has a row per fact the report shows (its spans' words, its source's number, its tier,
the source's credibility weight as its confidence) and a row per item the report does not show
(kind and reason codes, its span's words or nothing): a model's words are never a row. Metrics are
computed from the stored rows (ledger, steps, events, the verification record), so the same
function serves a live task, a replay and a hand-built fixture. For a research of the span
pipeline, "factual sentences" are the facts shown, each cited by construction (its source), and
the unsupported rate is the share of ledger rows the report did not show."""

from __future__ import annotations

from django.db import transaction

import agent.tools
from agent.engine import ResearchResult
from research.models import ResearchClaim, ResearchMetrics, ResearchTask

UNSUPPORTED = {
    "unsupported",
    "no_citation",
    "fabricated_citation",
    "figure_mismatch",
    "instruction_in_source",
    "unverified",
}


def store(task: ResearchTask, result: ResearchResult) -> None:
    """Write the ledger and the metrics; flag unresolved conflicts for human review. Inside the
    caller's transaction (end_task()) no savepoint of its own: a failure rolls all of it back."""
    with transaction.atomic(savepoint=False):
        ResearchClaim.objects.filter(task=task).delete()
        claims = ResearchClaim.objects.bulk_create(
            ResearchClaim(
                task=task,
                index=n,
                text=claim["text"][:4000],
                citations=claim.get("citations", []),
                verdict=claim["verdict"],
                reason=claim.get("reason", "")[:1000],
                tiers=claim.get("tiers", []),
                confidence=claim.get("confidence", 0.0),
                web_only=claim.get("web_only", False),
                action=claim.get("action", "kept"),
                kind=claim.get("kind", "fact"),
            )
            for n, claim in enumerate(result.verification.get("claims", []), start=1)
        )
        # verification "conflicts" lists the unresolved ones (resolved conflicts are in the report)
        unresolved = bool(result.verification.get("conflicts"))
        if unresolved and not task.needs_review:
            ResearchTask.objects.filter(pk=task.pk).update(needs_review=True)
            task.needs_review = True
        _upsert_metrics(task, claims)


def _is_search(tool_name: str) -> bool:
    """As the engine counts them: by the trait the tool was registered with (a name the registry
    does not know, e.g. one the model made up, is no search)."""
    tool = agent.tools.load().get(tool_name)
    return bool(tool and tool.traits.search)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def compute_metrics(task: ResearchTask, claims: list[ResearchClaim] | None = None) -> dict:
    """`claims`: the task's claims when the caller has just written them (not read back)."""
    claims = list(task.claims.all()) if claims is None else claims
    claims = [c for c in claims if not c.is_plan_heading]  # structure, not statements
    shown = [c for c in claims if c.action != "dropped"]
    cited = [c for c in shown if c.citations]
    unsupported = [c for c in claims if c.verdict in UNSUPPORTED]
    report = task.verification_json or {}
    found = report.get("conflicts_found", len(report.get("conflicts", [])))
    removed = report.get("removed") or {}
    shown_conflicts = report.get("conflicts_shown", len(report.get("conflicts", [])))
    citations = len(task.citations_json or [])
    low = report.get("low_credibility_sources", 0)
    # Only the names: a step row also holds the tool's full result, which nothing here reads.
    tool_steps = [name for name in task.steps.values_list("tool_name", flat=True) if name]
    return {
        "day": (task.finished_at or task.created_at).date(),
        "model_name": task.model_name or "unknown",
        "channel_id": task.channel_id,
        "status": task.status,
        "factual_sentences": len(shown),
        "cited_sentences": len(cited),
        "citation_coverage": _ratio(len(cited), len(shown)),
        "unsupported_claims": len(unsupported),
        "unsupported_rate": _ratio(len(unsupported), len(claims)),
        "conflicts_found": found,
        "conflicts_shown": shown_conflicts,
        "conflict_disclosure": _ratio(shown_conflicts, found),
        "citations": citations,
        "low_credibility_citations": low,
        "low_credibility_share": _ratio(low, citations),
        "tool_calls": len(tool_steps),
        "searches": sum(1 for name in tool_steps if _is_search(name)),
        "rounds": task.events.filter(type="action_thinking").count(),
        "tokens": task.tokens_used,
        "cost_usd": task.cost_usd,
        "duration_seconds": task.duration_seconds,
        "limit_hit": bool(task.limit_hit),
        "invalid_citations": task.invalid_citations_removed,
        "table_cells": sum(1 for c in claims if c.kind == "cell"),
        "removed_from_body": sum(1 for c in claims if c.action == "dropped"),
        "removed_reasons": removed,
        # 1.x: conflicts only the writer reported; now: conflicts the model marked (found_by "model")
        "conflicts_reported_by_writer": report.get(
            "conflicts_marked_by_model", report.get("conflicts_reported_by_writer", 0)
        ),
        "source_pollution_rate": report.get("source_pollution_rate"),
    }


def save_metrics(task: ResearchTask) -> ResearchMetrics:
    _upsert_metrics(task)
    return ResearchMetrics.objects.get(task=task)


def _upsert_metrics(task: ResearchTask, claims: list[ResearchClaim] | None = None) -> None:
    values = compute_metrics(task, claims)
    # One upsert statement (update_or_create is a locking read, then a write, in savepoints).
    ResearchMetrics.objects.bulk_create(
        [ResearchMetrics(task=task, **values)],
        update_conflicts=True,
        unique_fields=["task"],
        update_fields=list(values),
    )
