"""Intervals for a comparison of two runs over the same items, resampling what is independent.

Items are not independent draws: an English item and its Chinese counterpart read the same
documents, several questions are asked of one handout, and two worlds may share a document word
for word (the same filing, the same look-alike page). A world's items rise and fall together, so
resampling items one by one would give intervals narrower than the data support. The bootstrap
therefore resamples **linked groups**: items are linked when they name the same world or hold an
identical document (the same JSON object: name, kind, text, figures), and a group is a connected
component of that link. In v3 this joins the 48 worlds into 40 groups (computed here from the
data, tests/evaluation/test_statistics.py). A stored task without dataset documents is a group of
its own."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random

RESAMPLES = 1000
SEED = 20261203


def _document_key(document) -> str:
    data = dataclasses.asdict(document) if dataclasses.is_dataclass(document) else document
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def linked_groups(items) -> dict[str, str]:
    """item id -> its group's name (the first item id of the group in dataset order)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb, key=order.__getitem__)] = min(ra, rb, key=order.__getitem__)

    order = {item.id: n for n, item in enumerate(items)}
    first_of: dict[str, str] = {}
    for item in items:
        find(item.id)
        keys = [f"world:{item.world}"] if getattr(item, "world", "") else []
        keys += [f"document:{_document_key(d)}" for d in item.documents]
        for key in keys:
            if key in first_of:
                union(first_of[key], item.id)
            else:
                first_of[key] = item.id
    return {item.id: find(item.id) for item in items}


def _interval(values: list[float]) -> list[float] | None:
    if not values:
        return None
    values = sorted(values)
    low = values[int(0.025 * (len(values) - 1))]
    high = values[int(round(0.975 * (len(values) - 1)))]
    return [round(low, 4), round(high, 4)]


def bootstrap(
    before: list[dict],
    after: list[dict],
    key: str,
    *,
    groups: dict[str, str] | None = None,
    resamples: int = RESAMPLES,
) -> dict:
    """Mean before, after and their paired difference over the items both sides score, with
    bootstrap 95 % intervals: linked groups (`groups`: item id -> group; each item its own group
    when not given) drawn with replacement, every item of a drawn group taken, means over the
    items drawn. Seeded: the same inputs give the same intervals."""
    pairs = [
        (a.get("id"), a[key], b[key])
        for a, b in zip(before, after)
        if isinstance(a.get(key), (int, float)) and isinstance(b.get(key), (int, float))
    ]
    if not pairs:
        return {"items": 0, "groups": 0, "before": None, "after": None, "delta": None}
    grouped: dict[str, list[tuple[float, float]]] = {}
    for item_id, x, y in pairs:
        group = (groups or {}).get(item_id) or f"item:{item_id}:{len(grouped)}"
        grouped.setdefault(group, []).append((x, y))
    clusters = list(grouped.values())
    draw = random.Random(f"{SEED}:{key}")
    means: dict[str, list[float]] = {"before": [], "after": [], "delta": []}
    for _ in range(resamples):
        sample = [p for _ in clusters for p in clusters[draw.randrange(len(clusters))]]
        means["before"].append(sum(a for a, _ in sample) / len(sample))
        means["after"].append(sum(b for _, b in sample) / len(sample))
        means["delta"].append(sum(b - a for a, b in sample) / len(sample))
    point = {
        "before": sum(a for _, a, _ in pairs) / len(pairs),
        "after": sum(b for _, _, b in pairs) / len(pairs),
        "delta": sum(b - a for _, a, b in pairs) / len(pairs),
    }
    return {
        "items": len(pairs),
        "groups": len(clusters),
        **{side: {"mean": round(point[side], 4), "ci95": _interval(means[side])} for side in point},
    }
