"""The claims phase: observations become atomic claims before anything is written.

Each claim states one thing (a fact, a figure with its entity, metric, period, value and unit, or
a judgement a source makes), cites the sources that state it and carries the extractor's
confidence. Verification then checks each one against its cited passages; the writer may state
verified claims only."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import events, prompts, schemas
from .sources import render_observations
from .state import RunContext

MAX_CLAIMS = 40
MAX_QUOTES = 4  # per claim


@dataclass
class Quote:
    """A verbatim span of one cited passage that a claim rests on.

    The model gives `text`; the engine locates it in the stored passage text (Source.text) and
    records where: `start`/`end` are character offsets into that text (-1 until located), `page`
    the page or section when the source knows it. A claim whose quote cannot be located fails
    with reason "quote_not_found" before any model call."""

    source_id: int  # the engine's source-registry id of the passage quoted
    text: str  # verbatim as the model gave it (at most ~400 characters)
    start: int = -1
    end: int = -1
    page: str = ""

    @property
    def located(self) -> bool:
        return 0 <= self.start < self.end


@dataclass
class Claim:
    id: int
    text: str
    kind: str  # fact | figure | judgement
    source_ids: list[int]
    confidence: float = 0.0
    entity: str = ""
    metric: str = ""
    period: str = ""
    value: float | None = None
    unit: str = ""
    found_by: str = "evidence"  # evidence | counter_search | conflict (the turn that found its sources)
    # Filled in by verification:
    verdict: str = "unverified"  # supported | partial | unsupported | unverified
    reason: str = ""  # a code when the engine decided (figure_not_in_source, instruction_in_source…)
    detail: str = ""
    verifier_confidence: float = 0.0
    verified_by: str = ""  # code (its quotes decided: failed a check, or only restates them) | model
    flagged: bool = False  # rests only on passages that address the model: its text is never shown
    quotes: list[Quote] = field(default_factory=list)  # one or more verbatim spans of its sources

    @property
    def verified(self) -> bool:
        return self.verdict in ("supported", "partial") and not self.reason

    def subject(self) -> tuple[str, str, str] | None:
        """Entity, metric and period, normalised: two figures on one subject must agree."""
        if self.kind != "figure" or self.value is None or not (self.entity and self.metric):
            return None
        return tuple(
            " ".join(part.lower().replace(",", " ").split())
            for part in (self.entity, self.metric, self.period)
        )

    def as_json(self) -> dict:
        data = asdict(self)
        if self.flagged:
            data["text"] = ""  # planted text is quoted nowhere
            for quote in data["quotes"]:
                quote["text"] = ""
        return data


@dataclass
class ClaimSet:
    claims: list[Claim] = field(default_factory=list)

    def get(self, claim_id: int) -> Claim | None:
        return next((c for c in self.claims if c.id == claim_id), None)

    def verified(self) -> list[Claim]:
        return [c for c in self.claims if c.verified]

    def next_id(self) -> int:
        return max((c.id for c in self.claims), default=0) + 1

    def as_json(self) -> list[dict]:
        return [c.as_json() for c in self.claims]


def extract(run: RunContext, *, only: list[int] | None = None, first_id: int = 1) -> list[Claim]:
    """Claims from the sources (or `only` these new ones, after a re-search). Source ids that do
    not exist or were not shown are dropped; a claim left with none is dropped."""
    shown = [i for i, _ in run.registry.items() if only is None or i in only]
    if not shown:
        return []

    def build(compact: bool) -> list[dict]:
        budget = run.limits.observation_budget_chars // (2 if compact else 1)
        return [
            {
                "role": "system",
                "content": prompts.CLAIMS.format(language=prompts.language_name(run.inp.language)),
            },
            {
                "role": "user",
                "content": f"{run.question_block()}\n\nPlan:\n{run.plan.block()}\n\n"
                + render_observations(run.registry, budget_chars=budget, only=shown, weigh=run.credibility),
            },
        ]

    data = run.structured("claims", build, schemas.CLAIMS, "atomic_claims")
    claims = []
    for raw in data["claims"][:MAX_CLAIMS]:
        ids = [i for i in dict.fromkeys(raw["source_ids"]) if i in shown]
        text = " ".join(raw["text"].split())[:600]
        if not ids or not text:
            continue
        # Kept as the model gave them (cut only far past the limit): verification locates them in
        # the sources, and a quote that is not there, or too long to pin anything down, fails.
        quotes = [
            Quote(source_id=int(q["source_id"]), text=q["text"][:2000])
            for q in raw.get("quotes") or []
            if isinstance(q, dict) and q.get("text", "").strip()
        ][:MAX_QUOTES]
        value = raw["value"] if raw["kind"] == "figure" else None
        found = {run.registry.found_by.get(i, "evidence") for i in ids}
        found_by = found.pop() if len(found) == 1 else "evidence"
        claims.append(
            Claim(
                id=first_id + len(claims),
                text=text,
                kind=raw["kind"],
                source_ids=ids,
                confidence=round(min(1.0, max(0.0, float(raw["confidence"]))), 3),
                entity=raw["entity"][:120],
                metric=raw["metric"][:120],
                period=raw["period"][:60],
                value=float(value) if value is not None else None,
                unit=raw["unit"][:40],
                found_by=found_by,
                quotes=quotes,
            )
        )
    run.sink.emit(
        events.ClaimsExtracted(
            claims=len(claims), figures=sum(c.kind == "figure" for c in claims), sources=len(shown)
        )
    )
    return claims
