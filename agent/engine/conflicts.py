"""Conflicts between facts, found by code: never a model's sentence.

1. Values: code compares the values it parsed from the facts' spans. Two values of different
   sources disagree when they have the same kind, unit and year, are about the same subject, and
   differ by more than 1 %. The subject of a filed figure is its source's metadata (company,
   metric and period); for text, the two spans must share at least two content words (a name, a
   metric word). The values that agree within 1 % form one side.
2. The model: two facts of different sources the selection step marked as contradicting.

Each side is a list of facts with the best tier of their sources. A side whose tier is strictly
higher than every other side's settles the conflict (`resolved`, `higher_tier`): the other sides'
facts are superseded. Otherwise it stays unresolved and triggers a targeted re-search (at most
two rounds); what the re-search finds goes through selection again. A conflict's key is stable:
a hash of how it was found and its sides' span ids."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from .quantities import Measures, Reading, subject_of, subject_words
from .selection import Picked
from .types import TIER_RANK

TOLERANCE = 0.01
COMPARED_KINDS = ("number", "percent", "percentage_points", "currency")
MIN_SHARED_WORDS = 2


@dataclass
class Side:
    facts: list[int]
    tier: str
    values: list[int] = field(default_factory=list)


@dataclass
class Conflict:
    found_by: str  # values | model (vocabulary.CONFLICT_FOUND_BY)
    sides: list[Side]
    key: str = ""
    value_kind: str = ""
    unit: str = ""
    year: int | None = None
    span: str = ""  # a span stating the subject (model contradictions)
    status: str = "unresolved"
    resolution: str = ""
    prevailing_side: int | None = None
    re_search: dict = field(default_factory=lambda: {"rounds": 0, "new_sources": 0, "new_facts": []})

    def facts(self) -> set[int]:
        return {i for s in self.sides for i in s.facts}

    def weigh(self) -> None:
        ranks = [TIER_RANK.get(side.tier, 9) for side in self.sides]
        best = min(ranks)
        if ranks.count(best) == 1:
            self.status, self.resolution, self.prevailing_side = "resolved", "higher_tier", ranks.index(best)
        else:
            self.status, self.resolution, self.prevailing_side = "unresolved", "", None


def best_tier(registry, source_ids) -> str:
    tiers = [registry.get(i).tier for i in source_ids if registry.get(i) is not None]
    return min(tiers, key=lambda t: TIER_RANK.get(t, 9)) if tiers else "web"


def _key(found_by: str, sides: list[Side], facts: dict[int, Picked]) -> str:
    material = json.dumps(
        {
            "found_by": found_by,
            "sides": sorted(sorted(s for f in side.facts for s in facts[f].spans) for side in sides),
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()


def find(
    facts: list[Picked],
    measures: Measures,
    contradictions: list[tuple[int, int]],
    registry,
    index,
) -> list[Conflict]:
    by_id = {f.id: f for f in facts}
    found = _by_values(by_id, measures, registry, index)
    in_value_conflict = [c.facts() for c in found]
    for a, b in contradictions:
        if a not in by_id or b not in by_id or any({a, b} <= members for members in in_value_conflict):
            continue
        sides = [
            Side([a], best_tier(registry, [by_id[a].source_id])),
            Side([b], best_tier(registry, [by_id[b].source_id])),
        ]
        found.append(Conflict(found_by="model", sides=sides, span=by_id[a].spans[0]))
    for conflict in found:
        conflict.key = _key(conflict.found_by, conflict.sides, by_id)
        conflict.weigh()
    return found


def _comparable(a: Reading, b: Reading, by_id: dict[int, Picked], registry, index) -> bool:
    fa, fb = by_id[a.fact], by_id[b.fact]
    if fa.source_id == fb.source_id or a.kind != b.kind or a.unit != b.unit or a.year != b.year:
        return False
    sa, sb = registry.get(fa.source_id), registry.get(fb.source_id)
    filed_a, filed_b = subject_of(sa), subject_of(sb)
    if filed_a is not None and filed_b is not None:
        return filed_a == filed_b and _period(sa) == _period(sb)
    words_a = subject_words(_text_without(index, a))
    words_b = subject_words(_text_without(index, b))
    return len(words_a & words_b) >= MIN_SHARED_WORDS


def _period(source) -> tuple:
    meta = getattr(source, "meta", None) or {}
    return (meta.get("period_start"), meta.get("period_end"))


def _text_without(index, reading: Reading) -> str:
    cut = index.get(reading.span)
    text = cut.text if cut is not None else ""
    return text[: reading.start] + " " + text[reading.end :]


def _differ(a: float, b: float) -> bool:
    return abs(a - b) > TOLERANCE * max(abs(a), abs(b))


def _by_values(by_id: dict[int, Picked], measures: Measures, registry, index) -> list[Conflict]:
    readings = [r for r in measures.readings if r.kind in COMPARED_KINDS and r.fact in by_id]
    # Pairs of values that disagree; values that agree with a disagreeing one join its side.
    parent = {r.id: r.id for r in readings}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    involved: set[int] = set()
    for n, a in enumerate(readings):
        for b in readings[n + 1 :]:
            if _comparable(a, b, by_id, registry, index):
                parent[root(a.id)] = root(b.id)
                if _differ(a.value, b.value):
                    involved.update((a.id, b.id))
    groups: dict[int, list[Reading]] = {}
    for r in readings:
        groups.setdefault(root(r.id), []).append(r)
    out = []
    for members in groups.values():
        if not any(r.id in involved for r in members):
            continue
        clusters: list[list[Reading]] = []
        for r in sorted(members, key=lambda r: r.id):
            home = next((c for c in clusters if not _differ(c[0].value, r.value)), None)
            if home is None:
                clusters.append([r])
            else:
                home.append(r)
        if len(clusters) < 2:
            continue
        # A fact on two sides (its span states both values) is on neither.
        fact_sides: dict[int, set[int]] = {}
        for n, cluster in enumerate(clusters):
            for r in cluster:
                fact_sides.setdefault(r.fact, set()).add(n)
        ambiguous = {f for f, sides in fact_sides.items() if len(sides) > 1}
        sides = []
        for cluster in clusters:
            kept = [r for r in cluster if r.fact not in ambiguous]
            fact_ids = list(dict.fromkeys(r.fact for r in kept))
            if not fact_ids:
                continue
            sides.append(
                Side(
                    facts=fact_ids,
                    tier=best_tier(registry, [by_id[f].source_id for f in fact_ids]),
                    values=[r.id for r in kept],
                )
            )
        sources = [{by_id[f].source_id for f in side.facts} for side in sides]
        if len(sides) < 2 or all(s == sources[0] for s in sources):
            continue
        first = clusters[0][0]
        out.append(
            Conflict(found_by="values", sides=sides, value_kind=first.kind, unit=first.unit, year=first.year)
        )
    return out


def superseded(conflicts: list[Conflict]) -> set[int]:
    """The facts of every side that lost a conflict code settled."""
    return {
        i
        for c in conflicts
        if c.status == "resolved" and c.prevailing_side is not None
        for n, side in enumerate(c.sides)
        if n != c.prevailing_side
        for i in side.facts
    }


def carry_over(before: list[Conflict], after: list[Conflict]) -> list[Conflict]:
    """Keep what earlier re-search rounds recorded on a conflict found again (it shares a fact)."""
    for conflict in after:
        earlier = next((c for c in before if c.facts() & conflict.facts()), None)
        if earlier is not None:
            conflict.re_search = {
                "rounds": earlier.re_search["rounds"],
                "new_sources": earlier.re_search["new_sources"],
                "new_facts": list(earlier.re_search["new_facts"]),
            }
    return after
