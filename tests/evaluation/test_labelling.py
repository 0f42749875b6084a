"""Labelled pairs drawn from results folders (evaluation/labelling.py): provenance, both
languages, a held-out split of whole linked groups, sheets that hide the verdict and the other
pass, and the two passes' agreement."""

from __future__ import annotations

import json

import pytest

from evaluation import dataset as datasets
from evaluation import labelling
from evaluation.results import ResultsFolder
from evaluation.statistics import linked_groups

V3 = "uedu_eval_v3.jsonl"
PURPOSES = ("citation_recall", "citation_alone", "claim_precision", "fact_recall", "obedience")


def _folder(root, name_items: list) -> ResultsFolder:
    folder = ResultsFolder.create(
        root,
        {
            "dataset": {"path": V3, "sha256": "", "items": [i.id for i in name_items]},
            "judge": {"model": "judge-x"},
            "model": "scripted-faithful",
            "git_commit": "abc",
        },
    )
    for index, item in enumerate(name_items, start=1):
        judged = [
            {
                "statement": f"{item.id} statement {n}",
                "passages": [f"{item.id} passage {n}"],
                "verdict": n % 2 == 0,
                "asked": True,
                "purpose": PURPOSES[n % len(PURPOSES)],
            }
            for n in range(10)
        ]
        judged.append({**judged[0]})  # the same question asked twice: drawn once
        judged.append({"statement": "unasked", "passages": [], "verdict": False, "asked": False})
        judged.append(
            {
                "statement": f"{item.id} point",
                "passages": ["the answer"],
                "verdict": True,
                "question": "coverage",
            }
        )
        folder.write_item(
            index, {"id": item.id, "status": "done", "runs": [{"task_uuid": f"t-{index}", "judged": judged}]}
        )
    return folder


@pytest.fixture
def folder(tmp_path):
    items = datasets.load(V3)
    chosen = [i for i in items if i.language == "en"][:4] + [i for i in items if i.language == "zh-hant"][:4]
    return _folder(tmp_path / "results", chosen).path


def test_pairs_are_drawn_across_languages_and_prompts_with_provenance_and_a_held_out_split(folder):
    pairs = labelling.draw([folder], n=60, seed=3)
    assert len(pairs) == 60 and len({p["id"] for p in pairs}) == 60
    assert {p["language"] for p in pairs} == {"en", "zh-hant"}
    assert {p["purpose"] for p in pairs} == {*PURPOSES, "coverage"}
    assert "unasked" not in {p["statement"] for p in pairs}
    source = pairs[0]["source"]
    assert (
        source["folder"] == folder.name
        and source["dataset"] == V3
        and source["researcher_model"] == "scripted-faithful"
    )
    assert source["item"] and source["task_uuid"].startswith("t-") and "judge_verdict" in source
    # Both verdicts are represented: a judge that says "no" to everything cannot agree with all.
    assert {p["source"]["judge_verdict"] for p in pairs} == {True, False}
    # The held-out split is whole linked groups, never shared with the development split.
    groups = linked_groups(datasets.load(V3))
    held = {groups[p["source"]["item"]] for p in pairs if p["split"] == "held_out"}
    dev = {groups[p["source"]["item"]] for p in pairs if p["split"] == "dev"}
    assert held and dev and not held & dev
    assert labelling.draw([folder], n=60, seed=3) == pairs  # seeded
    assert [p["id"] for p in labelling.draw([folder], n=60, seed=4)] != [p["id"] for p in pairs]


def test_a_labelling_sheet_shows_the_question_only_in_its_own_order(folder):
    pairs = labelling.draw([folder], n=30)
    first, second = labelling.sheet(pairs, 1), labelling.sheet(pairs, 2)
    assert {r["id"] for r in first} == {r["id"] for r in second} == {p["id"] for p in pairs}
    assert [r["id"] for r in first] != [r["id"] for r in second]
    assert all(
        set(r) == {"id", "question", "statement", "passages", "label"} and r["label"] == "" for r in first
    )


def test_the_two_passes_agreement_and_the_exported_label_set(folder):
    pairs = labelling.draw([folder], n=40)
    first = {p["id"]: labelling.LABELS[n % 3] for n, p in enumerate(pairs)}
    same = labelling.agree(pairs, first, dict(first))
    assert same["overall"]["kappa"] == 1.0 and same["disagreements"] == []
    second = dict(first)
    changed = [p["id"] for p in pairs[:8]]
    for pair_id in changed:
        second[pair_id] = "not_supported" if first[pair_id] != "not_supported" else "supported"
    result = labelling.agree(pairs, first, second)
    assert result["disagreements"] == changed and result["overall"]["raw"] == 0.8
    low, high = result["overall"]["kappa_ci95"]
    assert low <= result["overall"]["kappa"] <= high < 1.0
    assert set(result) >= {"en", "zh-hant"}

    with pytest.raises(labelling.LabellingError, match="disagree and adjudicated.jsonl has no label"):
        labelling.export(pairs, first, second, {})
    rows = labelling.export(pairs, first, second, {pair_id: "partly" for pair_id in changed})
    by_id = {r["id"]: r for r in rows}
    assert by_id[changed[0]]["label"] == "partly" and by_id[changed[0]]["passes"] == [
        first[changed[0]],
        second[changed[0]],
    ]
    assert set(rows[0]["source"]) == set(labelling.PROVENANCE) and rows[0]["split"] in ("dev", "held_out")


def test_the_command_draws_sheets_and_measures_agreement(folder, tmp_path, capsys):
    out = tmp_path / "labels"
    assert labelling.main(["draw", str(folder), "--out", str(out), "--n", "20"]) == 0
    for labelling_pass in ("1", "2"):
        assert labelling.main(["sheet", str(out), "--pass", labelling_pass]) == 0
    assert labelling.main(["agree", str(out)]) == 2  # nothing labelled yet
    assert "labels-1.jsonl does not exist" in capsys.readouterr().err
    for labelling_pass in ("1", "2"):
        rows = [json.loads(line) for line in (out / f"sheet-{labelling_pass}.jsonl").read_text().splitlines()]
        (out / f"labels-{labelling_pass}.jsonl").write_text(
            "".join(json.dumps({"id": r["id"], "label": "supported"}) + "\n" for r in rows)
        )
    assert labelling.main(["agree", str(out)]) == 0
    measured = json.loads((out / "agreement.json").read_text())
    assert measured["overall"]["raw"] == 1.0 and set(measured["files"]) == {
        "pairs.jsonl",
        "labels-1.jsonl",
        "labels-2.jsonl",
    }
    assert labelling.main(["export", str(out), "--to", str(tmp_path / "set.jsonl")]) == 0
    assert len((tmp_path / "set.jsonl").read_text().splitlines()) == 20


def test_the_judge_is_measured_on_a_drawn_label_set_with_intervals_and_the_always_no_baseline(
    folder, tmp_path, db, llm, capsys
):
    from django.core.management import CommandError, call_command

    from tests.support import eval_judge

    pairs = labelling.draw([folder], n=90, held_out=0.5)
    first = {p["id"]: ("supported" if n % 3 == 0 else "not_supported") for n, p in enumerate(pairs)}
    labels = tmp_path / "judge_labels_drawn.jsonl"
    labels.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in labelling.export(pairs, first, first, {}))
    )
    eval_judge.install(llm, "agree")  # says "entailed" to every entailment question
    llm.on("coverage", lambda body: {"content": json.dumps({"results": []})})  # and leaves points out
    with pytest.raises(CommandError, match="agrees too little"):
        call_command(
            "deep_research_eval", "--judge-check", "--judge-model", "judge-x",
            "--labels", str(labels), "--labels-split", "held_out",
        )  # fmt: skip
    output = capsys.readouterr().out
    held_out = [p for p in pairs if p["split"] == "held_out"]
    assert (
        f"judge check on {len(held_out)} labelled pairs (judge_labels_drawn.jsonl, split held_out)" in output
    )
    assert "95% interval" in output and "always-no acc." in output and "coverage" in output
    assert {p["language"] for p in held_out} == {"en", "zh-hant"}
    assert llm.calls("coverage")  # the coverage pairs were asked as coverage questions
    overall = next(line for line in output.splitlines() if line.startswith("overall"))
    no_share = sum(first[p["id"]] != "supported" for p in held_out) / len(held_out)
    assert overall.rstrip().endswith(f"{no_share:.2f}")  # the always-"no" baseline beside the judge
