"""Synthesis: the writer model turns the registered sources into a Markdown answer, and the engine
makes what it wrote safe to show: links and images that are not observed sources go, sentences
that cite only sources that do not exist go, unknown markers go, and conflicts and
counter-evidence keep only real source ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import prompts, schemas
from .answer import join, marker_ids, rewrite_markers, scrub_links, segments
from .sources import render_observations

if TYPE_CHECKING:
    from .loop import ResearchRun

NO_SOURCES_ANSWER = {
    "en": "No source that could be cited was found for this question, so no answer is given. "
    "Try rephrasing the question or ask your teacher to add course materials.\n",
    "zh": "這個問題找不到可引用的資料來源，因此不提供答案。請換個方式提問，或請老師補充課程教材。\n",
}


@dataclass
class Draft:
    answer: str
    conflicts: list[dict] = field(default_factory=list)  # [{"topic", "positions": [{"summary", "source_ids"}]}]
    counter_evidence: list[dict] = field(default_factory=list)  # [{"summary", "source_ids"}]
    fabricated: list[dict] = field(default_factory=list)  # ledger entries of sentences dropped for invented sources
    invalid_citations: int = 0
    links_removed: int = 0


def synthesize(run: "ResearchRun") -> Draft:
    if len(run.registry) == 0:
        return Draft(answer=NO_SOURCES_ANSWER[run.lang])

    def build(compact: bool) -> list[dict]:
        budget = run.limits.observation_budget_chars // (2 if compact else 1)
        return [
            {"role": "system", "content": prompts.SYNTHESIZER.format(language=prompts.language_name(run.inp.language))},
            {
                "role": "user",
                "content": f"{run.channel_context()}Student's question:\n{run.inp.question}\n\n"
                f"Plan:\n{prompts.plan_block(run.plan)}\n\n" + render_observations(run.registry, budget_chars=budget, weigh=run.credibility),
            },
        ]

    data = run.structured("synthesizer", build, schemas.SYNTHESIS, "research_answer")
    return clean(run, data)


def clean(run: "ResearchRun", data: dict) -> Draft:
    observed_urls = {s.url for _, s in run.registry.items() if s.url}
    valid = run.registry.ids()
    answer, links_removed = scrub_links(data["answer"], observed_urls)

    # A sentence whose every citation points at a source that was never observed is an invented
    # claim: it goes whatever the unsupported-claim policy says.
    parts = segments(answer)
    fabricated = []
    dropped_markers = 0
    for part in parts:
        ids = part.ids
        if ids and not any(i in valid for i in ids):
            dropped_markers += len(ids)
            fabricated.append({"text": part.claim, "citations": [], "source_ids": [], "verdict": "fabricated_citation",
                               "reason": f"cites sources that do not exist: {ids}", "confidence": 0.0, "tiers": [], "action": "dropped"})
            part.text = ""
    answer = join(parts)
    answer, invalid = rewrite_markers(answer, {i: (i if i in valid else None) for i in marker_ids(answer)})
    invalid += dropped_markers

    def real(ids: list[int]) -> list[int]:
        return [i for i in dict.fromkeys(ids) if i in valid]

    conflicts = []
    for conflict in data["conflicts"]:
        positions = [{"summary": scrub_links(p["summary"], observed_urls)[0], "source_ids": real(p["source_ids"])} for p in conflict["positions"]]
        positions = [p for p in positions if p["source_ids"]]
        if len(positions) >= 2:
            conflicts.append({"topic": scrub_links(conflict["topic"], observed_urls)[0], "positions": positions})
    counter = [
        {"summary": scrub_links(c["summary"], observed_urls)[0], "source_ids": real(c["source_ids"])}
        for c in data.get("counter_evidence", [])
        if real(c["source_ids"])
    ]
    return Draft(answer=answer, conflicts=conflicts, counter_evidence=counter, fabricated=fabricated,
                 invalid_citations=invalid, links_removed=links_removed)
