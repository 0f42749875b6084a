"""What the evidence says, decided by code: each hypothesis's status, the judgement's stance and
the counter-evidence, from the facts the model tagged for and against the hypotheses, the facts
the counter-search found, their sources' tiers and the unresolved conflicts. The model tags; it
never decides a status.

- A hypothesis is `supported` with facts for it and none against, `refuted` with facts against
  and none for, `contested` with both, `open` with neither. Superseded facts do not count.
- The judgement (when the plan asks for one) weighs the plan's first hypothesis: independent
  sources by tier on each side (one per web host, or per tool and title). No fact either way:
  `insufficient`. One side only: that side, unless an unresolved conflict touches its facts
  (`mixed`). Both sides: the side whose best tier is strictly higher, else the side with at
  least twice the independent sources, else `mixed`; an unresolved conflict among the facts
  weighed makes it `mixed`.
- Counter-evidence: facts tagged against a hypothesis or found by the counter-search."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse

from .conflicts import Conflict
from .selection import Picked
from .types import TIER_RANK


def independent_by_tier(registry, source_ids) -> dict[str, int]:
    """Sources from one site count once: independence by host (or by the tool and title)."""
    seen: dict[str, str] = {}
    for i in source_ids:
        s = registry.get(i)
        if s is None:
            continue
        key = urlparse(s.url).hostname or f"{s.source_tool}|{s.title}"
        if key not in seen or TIER_RANK.get(s.tier, 9) < TIER_RANK.get(seen[key], 9):
            seen[key] = s.tier
    counts: dict[str, int] = {}
    for tier in seen.values():
        counts[tier] = counts.get(tier, 0) + 1
    return counts


@dataclass
class HypothesisWeight:
    index: int
    status: str
    for_facts: list[int] = field(default_factory=list)
    against_facts: list[int] = field(default_factory=list)


def hypotheses(count: int, facts: list[Picked], superseded: set[int]) -> list[HypothesisWeight]:
    out = []
    for index in range(count):
        pro = [f.id for f in facts if f.id not in superseded and (index, "for") in f.stances]
        con = [f.id for f in facts if f.id not in superseded and (index, "against") in f.stances]
        status = "contested" if pro and con else "supported" if pro else "refuted" if con else "open"
        out.append(HypothesisWeight(index, status, pro, con))
    return out


@dataclass
class Stance:
    stance: str
    hypothesis: int | None
    for_by_tier: dict[str, int]
    against_by_tier: dict[str, int]
    unresolved_conflicts: int
    facts: list[int]


def _best(by_tier: dict[str, int]) -> int:
    return min((TIER_RANK.get(t, 9) for t in by_tier), default=99)


def judgement(
    weights: list[HypothesisWeight], facts: list[Picked], conflicts: list[Conflict], registry
) -> Stance:
    unresolved = [c for c in conflicts if c.status == "unresolved"]
    if not weights:
        return Stance("insufficient", None, {}, {}, len(unresolved), [])
    first = weights[0]
    source = {f.id: f.source_id for f in facts}
    pro = independent_by_tier(registry, [source[i] for i in first.for_facts])
    con = independent_by_tier(registry, [source[i] for i in first.against_facts])
    weighed = set(first.for_facts) | set(first.against_facts)
    touched = any(c.facts() & weighed for c in unresolved)
    if not pro and not con:
        stance = "insufficient"
    elif touched:
        stance = "mixed"
    elif pro and not con:
        stance = "for"
    elif con and not pro:
        stance = "against"
    elif _best(pro) != _best(con):
        stance = "for" if _best(pro) < _best(con) else "against"
    elif sum(pro.values()) >= 2 * sum(con.values()):
        stance = "for"
    elif sum(con.values()) >= 2 * sum(pro.values()):
        stance = "against"
    else:
        stance = "mixed"
    return Stance(stance, first.index, pro, con, len(unresolved), first.for_facts + first.against_facts)


@dataclass
class Counter:
    facts: list[int]
    support_by_tier: dict[str, int]
    against_by_tier: dict[str, int]


def counter_evidence(facts: list[Picked], superseded: set[int], registry) -> Counter:
    shown = [f for f in facts if f.id not in superseded]
    against = [
        f for f in shown if f.found_by == "counter_search" or any(s == "against" for _, s in f.stances)
    ]
    against_ids = {f.id for f in against}
    tagged_for = [f for f in shown if f.id not in against_ids and any(s == "for" for _, s in f.stances)]
    support = tagged_for or [f for f in shown if f.id not in against_ids]
    return Counter(
        facts=[f.id for f in against],
        support_by_tier=independent_by_tier(registry, {f.source_id for f in support}),
        against_by_tier=independent_by_tier(registry, {f.source_id for f in against}),
    )
