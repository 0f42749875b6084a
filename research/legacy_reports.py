"""A task's stored report as the typed object every surface renders (agent/engine/report_types).

A report of schema 2.x is read as it is. A report of schema 1.x is converted
(agent/engine/report_legacy.from_v1) with the located quotes of its verified claims, which the
1.x report itself does not keep: the task's verification record lists each claim's quotes with
their character offsets into the passage the research read, and the task's steps stored those
passages (research/citation_view.Passages). The text a fact shows is the passage's own characters
at those offsets, never the model's copy of the quote; a quote whose passage is not stored, or
whose offsets fall outside it, is left out (the claim then rests on its citation's quote)."""

from __future__ import annotations

from agent.engine.report_legacy import ClaimQuote, from_v1
from agent.engine.report_types import Location, Report
from research.citation_view import Passages
from research.models import ResearchTask

VERIFIED = ("supported", "partial")


def typed_report(
    task: ResearchTask, report_json: dict | None = None, verification_json: dict | None = None
) -> Report:
    """The task's report (or `report_json`, with `verification_json`, before they are stored)."""
    data = task.report_json if report_json is None else report_json
    data = data if isinstance(data, dict) else {}
    if str(data.get("schema_version") or "").startswith("2."):
        return Report.from_json(data)
    verification = task.verification_json if verification_json is None else verification_json
    return from_v1(data, claim_quotes(task, data, verification or {}))


def claim_quotes(task: ResearchTask, data: dict, verification: dict) -> dict[int, list[ClaimQuote]]:
    """The located quotes of the 1.x report's verified claims, as the passages' own text."""
    claims = [c for c in verification.get("evidence_claims") or [] if isinstance(c, dict)]
    if not claims or not data.get("citations"):
        return {}
    citations = {}  # the engine's source id → (citation number, url, title)
    for raw in data.get("citations") or []:
        if isinstance(raw, dict) and isinstance(raw.get("id"), int) and not raw.get("flagged"):
            source_id = raw.get("source_id") if isinstance(raw.get("source_id"), int) else raw["id"]
            citations[source_id] = (raw["id"], str(raw.get("url") or ""), str(raw.get("title") or ""))
    passages = Passages(task)
    out: dict[int, list[ClaimQuote]] = {}
    for claim in claims:
        if claim.get("verdict") not in VERIFIED or claim.get("reason") or claim.get("flagged"):
            continue
        if not isinstance(claim.get("id"), int):
            continue
        for quote in claim.get("quotes") or []:
            cited = citations.get(quote.get("source_id")) if isinstance(quote, dict) else None
            start, end = (quote.get("start"), quote.get("end")) if cited else (None, None)
            if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
                continue
            number, url, title = cited
            passage = passages.text(url, title)
            if end > len(passage) or not passage[start:end].strip():
                continue
            location = Location(page=str(quote.get("page") or ""), start=start, end=end)
            out.setdefault(claim["id"], []).append(ClaimQuote(number, passage[start:end], location))
    return out
