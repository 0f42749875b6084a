"""Conflicts found by the engine itself, not left to the writer.

Two verified figure claims on the same entity, metric and period with different values disagree;
so do two verified claims the verifier reports as contradicting each other. Each side carries its
claims, sources and best source tier: a side backed by a strictly higher tier than every other
side settles the conflict; otherwise it stays unresolved (and triggers a targeted re-search)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import figures
from .body import grounds, novel_words
from .claims import Claim, ClaimSet
from .sources import SourceRegistry
from .types import TIER_RANK


@dataclass
class Side:
    statement: str
    claim_ids: list[int]
    source_ids: list[int]
    tier: str
    value: float | None = None
    unit: str = ""


@dataclass
class Conflict:
    subject: str
    found_by: str  # engine (figures) | verifier (contradiction) | writer
    sides: list[Side]
    status: str = "unresolved"  # resolved | unresolved
    resolution: str = ""  # higher_tier: the side of the most reliable tier prevails
    prevailing_side: int | None = None
    re_search: dict = field(default_factory=lambda: {"rounds": 0, "new_sources": 0, "new_claim_ids": []})

    def key(self) -> str:
        # A contradiction may have no subject (the verifier's words were not its claims'): its claims name it.
        name = self.subject.lower() or ",".join(str(i) for s in self.sides for i in sorted(s.claim_ids))
        return f"{self.found_by}:{name}"

    def weigh(self) -> None:
        ranks = [TIER_RANK.get(side.tier, 9) for side in self.sides]
        best = min(ranks)
        if ranks.count(best) == 1:
            self.status, self.resolution, self.prevailing_side = "resolved", "higher_tier", ranks.index(best)
        else:
            self.status, self.resolution, self.prevailing_side = "unresolved", "", None

    def as_json(self) -> dict:
        return asdict(self)


def _best_tier(registry: SourceRegistry, ids: list[int]) -> str:
    tiers = [registry.get(i).tier for i in ids if registry.get(i)]
    return min(tiers, key=lambda t: TIER_RANK.get(t, 9)) if tiers else "web"


def find(registry: SourceRegistry, claims: ClaimSet, contradictions: list[dict]) -> list[Conflict]:
    found: list[Conflict] = []
    groups: dict[tuple, list[Claim]] = {}
    for claim in claims.verified():
        subject = claim.subject()
        if subject is not None:
            groups.setdefault(subject, []).append(claim)
    for members in groups.values():
        clusters: list[list[Claim]] = []
        for claim in members:
            quantity = figures.of_claim(claim.value, claim.unit)
            home = next(
                (
                    c
                    for c in clusters
                    if figures.of_claim(c[0].value, c[0].unit).matches(quantity, exact=False)
                ),
                None,
            )
            if home is None:
                clusters.append([claim])
            else:
                home.append(claim)
        if len(clusters) < 2:
            continue
        first = members[0]
        sides = []
        for cluster in clusters:
            ids = list(dict.fromkeys(i for c in cluster for i in c.source_ids))
            sides.append(
                Side(
                    statement=cluster[0].text,
                    claim_ids=[c.id for c in cluster],
                    source_ids=ids,
                    tier=_best_tier(registry, ids),
                    value=cluster[0].value,
                    unit=cluster[0].unit,
                )
            )
        conflict = Conflict(
            subject=" · ".join(p for p in (first.entity, first.metric, first.period) if p),
            found_by="engine",
            sides=sides,
        )
        conflict.weigh()
        found.append(conflict)
    in_figure_conflict = {i for c in found for s in c.sides for i in s.claim_ids}
    for said in contradictions:
        members = [claims.get(i) for i in said["claim_ids"]]
        members = [c for c in members if c is not None and c.verified]
        if len(members) < 2 or {c.id for c in members} <= in_figure_conflict:
            continue
        sides = [
            Side(
                statement=c.text,
                claim_ids=[c.id],
                source_ids=list(c.source_ids),
                tier=_best_tier(registry, c.source_ids),
            )
            for c in members
        ]
        # The verifier's words name the subject only when they are its claims' words: a model's
        # free text is never shown as a fact.
        reason = said["reason"] or ""
        subject = reason if reason.strip() and not novel_words(reason, grounds(members)) else ""
        conflict = Conflict(subject=subject, found_by="verifier", sides=sides)
        conflict.weigh()
        found.append(conflict)
    return found


def carry_over(before: list[Conflict], after: list[Conflict]) -> list[Conflict]:
    """Keep what earlier re-search rounds recorded on a conflict found again."""
    previous = {c.key(): c for c in before}
    for conflict in after:
        if conflict.key() in previous:
            conflict.re_search = previous[conflict.key()].re_search
    return after
