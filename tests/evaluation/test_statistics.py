"""The bootstrap resamples what is independent: linked world groups computed from the data."""

from __future__ import annotations

import dataclasses
from collections import Counter

from evaluation import dataset as datasets
from evaluation.run import compare
from evaluation.statistics import bootstrap, linked_groups

V3 = datasets.load("uedu_eval_v3.jsonl")


def test_identical_documents_link_v3s_48_worlds_into_40_groups():
    groups = linked_groups(V3)
    assert len({i.world for i in V3}) == 52 and len(set(groups.values())) == 44
    by_world: dict[str, set[str]] = {}
    for item in V3:
        by_world.setdefault(item.world, set()).add(groups[item.id])
    assert all(len(named) == 1 for named in by_world.values())  # a world is never split
    # Every merge of two worlds is backed by a document both hold word for word.
    for group in set(groups.values()):
        members = [i for i in V3 if groups[i.id] == group]
        worlds = {i.world for i in members}
        if len(worlds) > 1:
            held = Counter(
                d for w in worlds for d in {repr(doc) for i in members if i.world == w for doc in i.documents}
            )
            assert any(n > 1 for n in held.values()), worlds


def test_a_shared_document_links_two_worlds_and_a_namesake_with_other_text_does_not():
    a, b, c = V3[0], V3[1], V3[2]
    shared = a.documents[0]
    namesake = dataclasses.replace(shared, pages=[dataclasses.replace(shared.pages[0], paragraphs=["other"])])
    items = [
        dataclasses.replace(a, id="x", world="wx"),
        dataclasses.replace(b, id="y", world="wy", documents=[*b.documents, shared]),
        dataclasses.replace(c, id="z", world="wz", documents=[namesake]),
    ]
    groups = linked_groups(items)
    assert groups["x"] == groups["y"] != groups["z"]


def _rows(deltas: list[float]) -> tuple[list[dict], list[dict]]:
    before = [{"id": f"i{n}", "m": 0.5} for n in range(len(deltas))]
    after = [{"id": f"i{n}", "m": 0.5 + d} for n, d in enumerate(deltas)]
    return before, after


def test_resampling_linked_groups_widens_the_interval_of_items_that_move_together():
    # Two worlds of ten items each: all of one improved, all of the other got worse.
    before, after = _rows([0.5] * 10 + [-0.5] * 10)
    alone = bootstrap(before, after, "m")
    linked = bootstrap(before, after, "m", groups={f"i{n}": "A" if n < 10 else "B" for n in range(20)})
    assert alone["groups"] == 20 and linked["groups"] == 2
    assert alone["delta"]["mean"] == linked["delta"]["mean"] == 0.0
    width = {
        name: r["delta"]["ci95"][1] - r["delta"]["ci95"][0]
        for name, r in (("alone", alone), ("linked", linked))
    }
    assert width["linked"] > 1.5 * width["alone"], width
    assert bootstrap(before, after, "m", groups={}) == alone  # seeded: the same inputs, the same interval


def test_a_comparison_says_what_it_resampled():
    before, after = _rows([0.1, 0.2, 0.3])
    sides = [{"summary": {}, "items": rows, "model": "m"} for rows in (before, after)]
    linked = compare(*sides, groups={"i0": "g", "i1": "g", "i2": "h"})
    assert linked["bootstrap"]["unit"] == "linked groups" and linked["bootstrap"]["groups"] == 2
    alone = compare(*sides)
    assert alone["bootstrap"]["unit"] == "items" and alone["bootstrap"]["groups"] == 3
