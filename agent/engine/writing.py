"""Writing: the writer model states the verified claims, and the engine makes what it wrote safe
to show: links and images that are not observed sources go, sentences that cite only sources or
claims that do not exist go, text that repeats the engine's own instructions goes, unknown
markers go, and the writer's conflicts and counter-evidence keep only real source ids. Whether
each remaining sentence and table cell states verified claims is checked afterwards
(verification.check_draft)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import prompts, schemas
from .answer import (
    CLAIM_MARKER,
    EchoDetector,
    claim_marker_ids,
    join,
    marker_ids,
    rewrite_markers,
    scrub_links,
    segments,
)
from .claims import ClaimSet
from .conflicts import Conflict
from .sources import neutralise, render_observations
from .state import RunContext

# The phases' instructions. Nothing the writer read can make it show them: a line that repeats
# eight words of them in a row is removed, wherever it stands (prose, list, table, code block).
INSTRUCTION_ECHO = EchoDetector(
    [
        prompts.PLANNER,
        prompts.ACTION,
        prompts.REFLECTION,
        prompts.CLAIMS,
        prompts.SYNTHESIZER,
        prompts.VERIFIER,
    ]
)

NO_SOURCES_ANSWER = {
    "en": "No source that could be cited was found for this question, so no answer is given. "
    "Try rephrasing the question or ask your teacher to add course materials.\n",
    "zh": "這個問題找不到可引用的資料來源，因此不提供答案。請換個方式提問，或請老師補充課程教材。\n",
}


@dataclass
class Draft:
    answer: str
    summary: str = ""
    conflicts: list[dict] = field(
        default_factory=list
    )  # the writer's: [{"topic", "positions": [{"summary", "source_ids"}]}]
    counter_evidence: list[dict] = field(default_factory=list)  # [{"summary", "source_ids"}]
    judgement: dict | None = None  # {"text", "claim_ids", "assumptions"}
    fabricated: list[dict] = field(default_factory=list)  # sentences dropped for invented sources or claims
    invalid_citations: int = 0
    links_removed: int = 0
    instruction_echoes: int = 0


@dataclass
class CounterSearch:
    """What the counter-search did, as the writer and the report are told."""

    ran: bool = False
    searches: int = 0
    queries: list[str] = field(default_factory=list)


def claims_block(run: RunContext, claims: ClaimSet) -> str:
    rows = []
    for claim in claims.verified():
        row = {
            "id": f"c{claim.id}",
            "kind": claim.kind,
            "text": claim.text,
            "source_ids": claim.source_ids,
            "tiers": sorted({run.registry.get(i).tier for i in claim.source_ids if run.registry.get(i)}),
        }
        if claim.kind == "figure":
            row.update(
                entity=claim.entity,
                metric=claim.metric,
                period=claim.period,
                value=claim.value,
                unit=claim.unit,
            )
        if claim.found_by == "counter_search":
            row["counter"] = "yes"
        rows.append(row)
    return "<claims>\n" + neutralise(prompts.as_json(rows)) + "\n</claims>"


def conflicts_block(conflicts: list[Conflict]) -> str:
    rows = [
        {
            "subject": c.subject,
            "status": c.status,
            "prevailing_side": c.prevailing_side,
            "sides": [
                {"statement": s.statement, "claim_ids": [f"c{i}" for i in s.claim_ids], "tier": s.tier}
                for s in c.sides
            ],
        }
        for c in conflicts
    ]
    return "<conflicts>\n" + neutralise(prompts.as_json(rows)) + "\n</conflicts>"


def synthesize(run: RunContext, claims: ClaimSet, conflicts: list[Conflict], counter: CounterSearch) -> Draft:
    if len(run.registry) == 0:
        return Draft(answer=NO_SOURCES_ANSWER[run.lang])
    behind = sorted({i for c in claims.verified() for i in c.source_ids})
    if counter.ran:
        task_counter = (
            f"A counter-search ran ({counter.searches} searches: {', '.join(counter.queries) or '-'}); claims with "
            'counter="yes" came from it. State the counter-evidence and how it compares with the support.'
        )
    else:
        task_counter = "No counter-search ran for this question."
    task_judgement = (
        'A judgement is asked for: give it in "judgement" with the claim ids it rests on and its assumptions.'
        if run.plan.asks_for_judgement
        else 'No judgement is asked for: "judgement" must be null.'
    )

    def build(compact: bool) -> list[dict]:
        return [
            {
                "role": "system",
                "content": prompts.SYNTHESIZER.format(language=prompts.language_name(run.inp.language)),
            },
            {
                "role": "user",
                "content": f"{run.question_block()}\n\nPlan:\n{run.plan.block()}\n\n{task_counter}\n{task_judgement}\n\n"
                "<observations>\n"
                + claims_block(run, claims)
                + "\n"
                + conflicts_block(conflicts)
                + "\n"
                + render_observations(
                    run.registry, budget_chars=0, only=behind, without_flagged_passages=True
                )[len("<observations>\n") :],
            },
        ]

    data = run.structured("synthesizer", build, schemas.SYNTHESIS, "research_answer")
    return clean(run, data, claims)


def clean(run: RunContext, data: dict, claims: ClaimSet) -> Draft:
    observed_urls = {s.url for _, s in run.registry.items() if s.url}
    valid = run.registry.ids()
    known_claims = {c.id for c in claims.claims}
    echoes = 0
    fabricated: list[dict] = []
    invalid = 0

    def tidy(markdown: str) -> str:
        """Links, echoes of our instructions and invented markers out of one Markdown text."""
        nonlocal echoes, invalid, links_removed
        text, removed = scrub_links(markdown, observed_urls)
        links_removed += removed
        parts = segments(text)
        for part in parts:
            if part.text.strip() and INSTRUCTION_ECHO(part.text):
                part.text = "\n" if part.text.endswith("\n") else ""
                echoes += 1
        # A sentence whose every citation points at a source or claim that does not exist is an
        # invented claim: it goes whatever the policy says.
        for part in parts:
            ids, cids = part.ids, part.claim_ids
            if (
                (ids or cids)
                and not any(i in valid for i in ids)
                and not any(c in known_claims for c in cids)
            ):
                invalid += len(ids) + len(cids)
                fabricated.append(
                    {
                        "text": part.claim,
                        "citations": [],
                        "source_ids": [],
                        "claim_ids": [],
                        "verdict": "fabricated_citation",
                        "reason": f"cites sources that do not exist: {ids + cids}",
                        "confidence": 0.0,
                        "tiers": [],
                        "action": "dropped",
                        "kind": "cell" if part.cell else "sentence",
                    }
                )
                part.text = " — " if part.cell else ""
        text = join(parts)
        text, dropped = rewrite_markers(text, {i: (i if i in valid else None) for i in marker_ids(text)})
        invalid += dropped
        unknown = [c for c in claim_marker_ids(text) if c not in known_claims]
        if unknown:

            def keep(match):
                ids = [
                    p.strip()
                    for p in re.split(r"[,，、;；]", match.group(1))
                    if int(p.strip().lstrip("cC")) in known_claims
                ]
                return f"[{', '.join('c' + p.lstrip('cC') for p in ids)}]" if ids else ""

            text = CLAIM_MARKER.sub(keep, text)
            invalid += len(unknown)
        return text

    links_removed = 0
    answer = tidy(data["answer"])
    summary = tidy(data.get("summary") or "") if (data.get("summary") or "").strip() else ""

    def real(ids: list[int]) -> list[int]:
        return [i for i in dict.fromkeys(ids) if i in valid]

    def shown(text: str) -> str:
        nonlocal echoes, links_removed
        text, removed = scrub_links(text, observed_urls)
        links_removed += removed
        if INSTRUCTION_ECHO(text):
            echoes += 1
            return ""
        return text

    conflicts = []
    for conflict in data["conflicts"]:
        positions = [
            {"summary": shown(p["summary"]), "source_ids": real(p["source_ids"])}
            for p in conflict["positions"]
        ]
        positions = [p for p in positions if p["source_ids"]]
        if len(positions) >= 2:  # a disagreement is shown even when its wording had to go
            conflicts.append({"topic": shown(conflict["topic"]), "positions": positions})
    counter = [
        {"summary": shown(c["summary"]), "source_ids": real(c["source_ids"])}
        for c in data.get("counter_evidence", [])
        if real(c["source_ids"])
    ]
    judgement = None
    if run.plan.asks_for_judgement and data.get("judgement"):
        raw = data["judgement"]
        judgement = {
            "text": shown(raw["text"]),
            "claim_ids": [i for i in dict.fromkeys(raw["claim_ids"]) if i in known_claims],
            "assumptions": [a for a in (shown(x) for x in raw["assumptions"]) if a.strip()],
        }
    return Draft(
        answer=answer,
        summary=summary,
        conflicts=conflicts,
        counter_evidence=counter,
        judgement=judgement,
        fabricated=fabricated,
        invalid_citations=invalid,
        links_removed=links_removed,
        instruction_echoes=echoes,
    )
