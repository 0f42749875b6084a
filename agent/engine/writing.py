"""Synthesis: the writer model turns the registered sources into a Markdown answer, and the engine
makes what it wrote safe to show: links and images that are not observed sources go, sentences
that cite only sources that do not exist go, text that repeats the engine's own instructions
goes, unknown markers go, and conflicts and counter-evidence keep only real source ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import prompts, schemas
from .answer import EchoDetector, join, marker_ids, rewrite_markers, scrub_links, segments
from .sources import render_observations

# The phases' instructions. Nothing the writer read can make it show them: a line that repeats
# eight words of them in a row is removed, wherever it stands (prose, list, table, code block).
INSTRUCTION_ECHO = EchoDetector([prompts.PLANNER, prompts.ACTION, prompts.REFLECTION, prompts.SYNTHESIZER, prompts.VERIFIER])

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
    instruction_echoes: int = 0


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
    echoes = 0
    for part in parts:
        if part.text.strip() and INSTRUCTION_ECHO(part.text):
            part.text = "\n" if part.text.endswith("\n") else ""
            echoes += 1
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
        positions = [{"summary": shown(p["summary"]), "source_ids": real(p["source_ids"])} for p in conflict["positions"]]
        positions = [p for p in positions if p["source_ids"]]
        if len(positions) >= 2:  # a disagreement is shown even when its wording had to go
            conflicts.append({"topic": shown(conflict["topic"]), "positions": positions})
    counter = [
        {"summary": shown(c["summary"]), "source_ids": real(c["source_ids"])}
        for c in data.get("counter_evidence", [])
        if real(c["source_ids"])
    ]
    return Draft(answer=answer, conflicts=conflicts, counter_evidence=counter, fabricated=fabricated,
                 invalid_citations=invalid, links_removed=links_removed, instruction_echoes=echoes)
