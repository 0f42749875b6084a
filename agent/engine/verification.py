"""Verification and the claim ledger.

Every factual sentence of the answer becomes a claim with its citations, the verifier's verdict
(supported / partial / unsupported, or no_citation / fabricated_citation decided by the engine),
the tiers of the sources behind it and a confidence. Unsupported and uncited claims are marked or
dropped (policy); claims resting only on web sources say so; conflicts are shown with both sides
cited and their tiers named; then the citations are renumbered in order of appearance."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable

from . import prompts, schemas
from .answer import Numbering, is_factual, join, rewrite_markers, scrub_links, segments
from .errors import PhaseFailed
from .sources import neutralise
from .types import TIER_RANK, Citation, Source
from .writing import Draft

if TYPE_CHECKING:
    from .loop import ResearchRun

VERIFY_BATCH = 10
# How much a source's tier lets a claim be trusted when nothing better is known (history-based
# weights, when the product provides them, replace these).
TIER_WEIGHT = {"internal": 1.0, "structured": 1.0, "scholarly": 0.9, "web": 0.6}
LOW_CREDIBILITY = 0.65

TEXT = {
    # Plain text, no emphasis: CommonMark does not close "*…*" next to CJK punctuation.
    "unverified": {"en": " ⚠ (not supported by the cited sources)", "zh": "⚠（此句未獲引用來源支持）"},
    "uncited": {"en": " ⚠ (no source cited)", "zh": "⚠（此句未附來源）"},
    "web_only": {"en": " (web sources only)", "zh": "（僅依據網路來源）"},
    "conflicts": {"en": "Unresolved / conflicting evidence", "zh": "未決／相互矛盾的證據"},
    "counter": {"en": "Counter-evidence check", "zh": "反證檢查"},
    "no_counter": {
        "en": "The counter-search ({n} targeted searches) found no evidence against the main conclusions.",
        "zh": "反證搜尋（{n} 次定向搜尋）未找到與主要結論相反的證據。",
    },
    "web_note": {
        "en": "Note: {n} statement(s) above rest only on web sources, the least reliable tier; check them with care.",
        "zh": "注意：以上有 {n} 句僅依據網路來源（可信度最低的來源層級），請審慎查核。",
    },
    "unresolved_after": {
        "en": "These disagreements remained after {n} targeted re-search round(s); they are shown, not resolved.",
        "zh": "經過 {n} 輪定向補充搜尋後仍有分歧；以下並列呈現，未替讀者選邊。",
    },
    "tier": {
        "en": {"internal": "Uedu internal", "structured": "structured data", "scholarly": "scholarly", "web": "web"},
        "zh": {"internal": "Uedu 內部資料", "structured": "結構化資料", "scholarly": "學術文獻", "web": "網路來源"},
    },
}


def tier_weight(source: Source) -> float:
    return TIER_WEIGHT.get(source.tier, 0.5)


def _best_tier(run: "ResearchRun", ids: list[int]) -> str:
    tiers = [run.registry.get(i).tier for i in ids if run.registry.get(i)]
    return min(tiers, key=lambda t: TIER_RANK.get(t, 9)) if tiers else "web"


def _sections(run: "ResearchRun", draft: Draft, conflict_rounds: int) -> str:
    lang = run.lang
    text = draft.answer.rstrip() + "\n"
    if draft.counter_evidence:
        text += f"\n## {TEXT['counter'][lang]}\n\n"
        text += "\n".join(f"- {c['summary']} " + "".join(f"[{i}]" for i in c["source_ids"]) for c in draft.counter_evidence) + "\n"
    if draft.conflicts:
        labels = TEXT["tier"][lang]
        text += f"\n## {TEXT['conflicts'][lang]}\n\n"
        for conflict in draft.conflicts:
            sides = "; ".join(
                f"{p['summary']} " + "".join(f"[{i}]" for i in p["source_ids"]) + f" ({labels[_best_tier(run, p['source_ids'])]})"
                for p in conflict["positions"]
            )
            text += f"- **{conflict['topic']}**: {sides}\n"
    return text


def finalize(run: "ResearchRun", draft: Draft, *, conflict_rounds: int, counter_searches: int | None,
             credibility: Callable[[Source], float] | None = None) -> tuple[str, list[Citation], dict]:
    lang = run.lang
    weigh = credibility or tier_weight
    parts = segments(_sections(run, draft, conflict_rounds))
    claims = [(n, seg) for n, seg in enumerate(parts) if seg.sentence and seg.ids]
    verdicts, incomplete = _verify(run, claims)

    ledger = list(draft.fabricated)
    web_only = 0
    for n, seg in enumerate(parts):
        if not seg.sentence or not is_factual(seg):
            continue
        sources = [run.registry.get(i) for i in seg.ids if run.registry.get(i)]
        tiers = sorted({s.tier for s in sources}, key=lambda t: TIER_RANK.get(t, 9))
        if seg.ids:
            verdict = verdicts.get(n, {"verdict": "unverified", "confidence": 0.0, "reason": "the verifier gave no verdict"})
        else:
            verdict = {"verdict": "no_citation", "confidence": 0.0, "reason": "no source cited"}
        weight = max((weigh(s) for s in sources), default=0.0)
        entry = {
            "text": seg.claim,
            "source_ids": seg.ids,
            "verdict": verdict["verdict"],
            "reason": verdict["reason"],
            "verifier_confidence": verdict["confidence"],
            "confidence": round(verdict["confidence"] * weight, 3) if verdict["verdict"] in ("supported", "partial") else 0.0,
            "tiers": tiers,
            "web_only": tiers == ["web"],
            "action": "kept",
        }
        if verdict["verdict"] in ("unsupported", "no_citation", "unverified"):
            if run.inp.unsupported_policy == "drop" and verdict["verdict"] != "unverified":
                seg.text = ""
                entry["action"] = "dropped"
            else:
                mark = TEXT["uncited" if verdict["verdict"] == "no_citation" else "unverified"][lang]
                seg.text = _append(seg.text, mark)
                entry["action"] = "marked"
        elif entry["web_only"]:
            seg.text = _append(seg.text, TEXT["web_only"][lang])
            web_only += 1
        ledger.append(entry)

    answer = join(parts)
    notes = []
    if counter_searches is not None and not draft.counter_evidence:
        notes.append(TEXT["no_counter"][lang].format(n=counter_searches))
    if draft.conflicts and conflict_rounds:
        notes.append(TEXT["unresolved_after"][lang].format(n=conflict_rounds))
    if web_only:
        notes.append(TEXT["web_note"][lang].format(n=web_only))
    if notes:
        answer = answer.rstrip() + "\n\n" + "\n\n".join(f"> {note}" for note in notes) + "\n"

    numbering = Numbering.of(answer, run.registry.ids())
    answer, _ = rewrite_markers(answer, numbering.by_source)
    citations = []
    # Titles and excerpts are shown beside the answer: the same rule applies to them, no address
    # that is not an observed source (a web page's title or an abstract can carry one).
    observed_urls = {s.url for _, s in run.registry.items() if s.url}
    for source_id, number in sorted(numbering.by_source.items(), key=lambda kv: kv[1]):
        s = run.registry.get(source_id)
        citations.append(Citation(number=number, source_id=source_id, title=scrub_links(s.title, observed_urls)[0].strip() or s.url,
                                  url=s.url, source_tool=s.source_tool, snippet=scrub_links(s.snippet, observed_urls)[0],
                                  tier=s.tier, origin=s.origin, locator=s.locator))
    by_number = numbering.by_source
    for entry in ledger:
        entry["citations"] = [by_number[i] for i in entry["source_ids"] if i in by_number]
    counts: dict[str, int] = {}
    for entry in ledger:
        counts[entry["verdict"]] = counts.get(entry["verdict"], 0) + 1
    cited_sources = [run.registry.get(c.source_id) for c in citations]
    report = {
        "status": "incomplete" if incomplete else "complete",
        "policy": run.inp.unsupported_policy,
        "claims": ledger,
        "counts": counts,
        "conflicts": [
            {"topic": c["topic"], "positions": [
                {"summary": p["summary"], "citations": [by_number[i] for i in p["source_ids"] if i in by_number],
                 "tier": _best_tier(run, p["source_ids"])} for p in c["positions"]]}
            for c in draft.conflicts
        ],
        "conflicts_found": run.conflicts_found,
        "conflicts_shown": len(draft.conflicts),
        "conflict_rounds": conflict_rounds,
        "counter_evidence": [{"summary": c["summary"], "citations": [by_number[i] for i in c["source_ids"] if i in by_number]}
                             for c in draft.counter_evidence],
        "counter_searches": counter_searches,
        "web_only_claims": web_only,
        "low_credibility_sources": sum(1 for s in cited_sources if weigh(s) < LOW_CREDIBILITY),
        "invalid_citations_removed": draft.invalid_citations,
        "links_removed": draft.links_removed,
        "instruction_echoes_removed": draft.instruction_echoes,
        "internal_sources": sum(1 for c in citations if c.origin == "internal"),
        "external_sources": sum(1 for c in citations if c.origin == "external"),
        "hypotheses": [{"text": h, "status": run.hypothesis_status.get(i, "open")} for i, h in enumerate(run.plan.get("hypotheses") or [], start=1)],
        "retries": run.retries,
    }
    run.sink.emit(
        "verification_done",
        {"status": report["status"], "counts": counts, "conflicts": len(draft.conflicts), "conflict_rounds": conflict_rounds,
         "invalid_citations_removed": draft.invalid_citations, "citations": len(citations), "web_only_claims": web_only},
    )
    return answer, citations, report


def _verify(run: "ResearchRun", claims) -> tuple[dict[int, dict], bool]:
    batches = [claims[i : i + VERIFY_BATCH] for i in range(0, len(claims), VERIFY_BATCH)]
    verdicts: dict[int, dict] = {}
    incomplete = False
    if not batches:
        return verdicts, incomplete
    # Batches are independent: check them side by side (each is one LLM call).
    with ThreadPoolExecutor(max_workers=min(3, len(batches)), thread_name_prefix="verify") as pool:
        futures = [pool.submit(_verify_batch, run, batch) for batch in batches]
        for future in futures:
            try:
                verdicts.update(future.result())
            except PhaseFailed:
                incomplete = True  # those claims stay "unverified" and say so
    return verdicts, incomplete


def _verify_batch(run: "ResearchRun", batch) -> dict[int, dict]:
    items = []
    for claim_id, seg in batch:
        passages = []
        for source_id in seg.ids:
            source = run.registry.get(source_id)
            if source is not None:
                passages.append({"source_id": source_id, "title": neutralise(source.title), "passage": neutralise((source.text or source.snippet)[:2000])})
        items.append({"claim_id": claim_id, "claim": seg.claim, "passages": passages})

    def build(compact: bool) -> list[dict]:
        payload = items
        if compact:
            payload = [dict(i, passages=[dict(p, passage=p["passage"][:600]) for p in i["passages"]]) for i in items]
        return [
            {"role": "system", "content": prompts.VERIFIER},
            {"role": "user", "content": "<observations>\n" + prompts.as_json(payload) + "\n</observations>"},
        ]

    data = run.structured("verifier", build, schemas.VERIFICATION, "claim_verdicts")
    wanted = {claim_id for claim_id, _ in batch}
    return {
        v["claim_id"]: {"verdict": v["verdict"], "confidence": float(v["confidence"]), "reason": v["reason"][:300]}
        for v in data["verdicts"]
        if v["claim_id"] in wanted
    }


def _append(text: str, mark: str) -> str:
    stripped = text.rstrip()
    return stripped + mark + text[len(stripped):]
