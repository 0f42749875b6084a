"""The judge measured against labels, results anyone can audit and resume, replays judged again,
and the checks before a real model's run.

Runs go through the real runner against the scripted model (tests/support/eval_model.py), judged
by a scripted judge on the same server (tests/support/eval_judge.py)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from evaluation import dataset as datasets
from evaluation import run as evaluation_run
from evaluation.judge import PROMPT_HASH
from evaluation.judge_check import LABELS, cohen_kappa, load_labels
from evaluation.run import smoke_items
from tests.support import eval_judge
from tests.support.eval_judge import read_results, results_folders
from tests.support.eval_model import install
from tests.support.scripted_llm import Scenario

pytestmark = pytest.mark.slow

SEED = 7
V2 = "uedu_eval_v2.jsonl"  # these runs are on v2 items; the command's default is v3
SMALL = [
    "en-catalogue-cs-path",
    "en-catalogue-hs-probability",
    "zh-catalogue-cs-path",
    "zh-catalogue-hs-probability",
]


def _scripted(llm, judge: str = "labels") -> None:
    llm.reset(Scenario())
    install(llm, datasets.load(V2), seed=SEED)
    eval_judge.install(llm, judge)


def _kappas(output: str) -> dict[str, float]:
    found = re.findall(
        r"^(en|zh-hant|overall)\s+(\d+)\s+([0-9.]+)\s+(-?[0-9.]+)\s+(?:\[[^\]]+\]|–)\s+[0-9.]+$", output, re.M
    )
    return {name: float(kappa) for name, _, _, kappa in found}


def test_the_labelled_judge_set_is_large_balanced_and_in_both_languages():
    rows = load_labels()
    assert len(rows) >= 200
    assert len({(r.unit, r.passage) for r in rows}) == len(rows)
    for language in ("en", "zh-hant"):
        labels = Counter(r.label for r in rows if r.language == language)
        assert sum(labels.values()) >= 80
        assert set(labels) == set(LABELS) and min(labels.values()) >= sum(labels.values()) / 4, labels
    zh = [r for r in rows if r.language == "zh-hant"]
    assert all(re.search(r"[\u4e00-\u9fff]", r.unit) and re.search(r"[\u4e00-\u9fff]", r.passage) for r in zh)
    # Cohen's kappa itself: perfect agreement, chance agreement, and a verdict left out (disagreement).
    assert cohen_kappa([True, False, True, False], [True, False, True, False]) == 1.0
    assert cohen_kappa([True, False, True, False], [True, True, True, True]) == 0.0
    assert cohen_kappa([True, False], [True, None]) < 1.0


def test_judge_check_prints_agreement_and_refuses_a_judge_that_agrees_with_everything(db, llm, capsys):
    _scripted(llm, "labels")
    call_command("deep_research_eval", "--judge-check", "--judge-model", "judge-x")
    output = capsys.readouterr().out
    kappas = _kappas(output)
    assert set(kappas) == {"en", "zh-hant", "overall"}
    assert all(0.6 <= k < 1.0 for k in kappas.values()), kappas  # close to the labels, not identical
    assert "confusion" in output and "partly" in output and "passed" in output
    asked = llm.calls("entailment")
    assert asked and {r["model"] for r in asked} == {"judge-x"}

    _scripted(llm, "agree")  # a lenient judge: every statement entailed
    with pytest.raises(CommandError, match=r"agrees too little .* kappa below 0.60 in en, zh-hant"):
        call_command("deep_research_eval", "--judge-check", "--judge-model", "judge-x")
    assert _kappas(capsys.readouterr().out)["overall"] == 0.0

    _scripted(llm, "silent")  # a judge that leaves every statement out: no verdict, not "false"
    with pytest.raises(CommandError, match="agrees too little"):
        call_command("deep_research_eval", "--judge-check", "--judge-model", "judge-x")
    assert re.search(r"not_supported\s+0\s+0\s+\d+", capsys.readouterr().out)

    with pytest.raises(CommandError, match=r"the judge \(judge-x\) did not answer the agreement check"):
        call_command(
            "deep_research_eval",
            "--judge-check",
            "--judge-model",
            "judge-x",
            "--judge-base-url",
            "http://127.0.0.1:9/v1",
        )

    _scripted(llm, "labels")  # the threshold is a setting and a flag
    with pytest.raises(CommandError, match="kappa below 0.99"):
        call_command("deep_research_eval", "--judge-check", "--judge-model", "judge-x", "--min-kappa", "0.99")


def test_a_run_refuses_a_weak_judge_and_the_researchers_own_model_unless_allowed(
    transactional_db, llm, fake_embeddings, tmp_path, capsys
):
    out = tmp_path / "results"
    _scripted(llm, "agree")
    with pytest.raises(CommandError, match="agrees too little"):
        call_command(
            "deep_research_eval", V2, "--only", SMALL[0], "--judge-model", "judge-x", "--out", str(out)
        )
    assert not llm.calls("planner") and not out.exists()  # refused before any research

    _scripted(llm, "labels")
    args = (
        "--only",
        SMALL[0],
        "--k",
        "1",
        "--model",
        "scripted-faithful",
        "--judge-model",
        "scripted-faithful",
    )
    with pytest.raises(CommandError, match=r"the judge \(scripted-faithful\) is the researcher's own model"):
        call_command("deep_research_eval", V2, *args, "--out", str(out))
    assert not llm.calls("entailment") and not out.exists()

    call_command("deep_research_eval", V2, *args, "--allow-self-judge", "--out", str(out))
    assert "WARNING: the judge (scripted-faithful)" in capsys.readouterr().out
    results = read_results(out)
    assert results["manifest"]["flags"]["allow_self_judge"] is True
    assert results["manifest"]["judge"]["same_as_researcher"] is True
    assert results["judge"]["same_as_researcher"] is True and results["summary"]["completed_runs"] == 1


def test_a_run_writes_an_auditable_folder_item_by_item_and_resume_finishes_it(
    transactional_db, llm, fake_embeddings, tmp_path, capsys, monkeypatch
):
    _scripted(llm)
    real_run_item = evaluation_run.run_item
    ran: list[str] = []

    def interrupted(item, **kwargs):
        ran.append(item.id)
        if item.id == SMALL[2]:
            # Items 1 and 2 are on disk before item 3 runs: each is written as it finishes.
            (folder,) = results_folders(tmp_path)
            assert len(list((folder / "items").glob("*.json"))) == 2
            raise RuntimeError("the item's world could not be built")
        return real_run_item(item, **kwargs)

    monkeypatch.setattr(evaluation_run, "run_item", interrupted)
    call_command(
        "deep_research_eval", V2, "--only", *SMALL, "--model", "scripted-faithful", "--judge-model", "judge-x",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert ran == SMALL  # the error stopped item 3, not the run
    results = read_results(tmp_path)
    folder, manifest = results["folder"], results["manifest"]
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", folder.name)

    # The manifest says what ran and under which judge.
    assert manifest["dataset"]["path"] == V2 and len(manifest["dataset"]["sha256"]) == 64
    assert manifest["dataset"]["items"] == SMALL
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?|unknown", manifest["git_commit"])
    assert manifest["k"] == 3  # a full run's default
    assert manifest["model"] == "scripted-faithful" and manifest["researcher_models"] == {
        "default": "scripted-faithful"
    }
    judge = manifest["judge"]
    assert (judge["model"], judge["prompt_hash"], judge["same_as_researcher"]) == (
        "judge-x",
        PROMPT_HASH,
        False,
    )
    assert judge["check"]["passed"] is True and set(judge["check"]["by_language"]) == {"en", "zh-hant"}
    assert json.loads((folder / "judge_check.json").read_text())[
        "disagreements"
    ]  # the scripted judge errs a little
    assert (
        manifest["flags"]["allow_self_judge"] is False and manifest["started_at"] and manifest["finished_at"]
    )
    assert "judge-key" not in json.dumps(manifest) and "test-key" not in json.dumps(manifest)

    # Per item: the answer, the units with their verdicts, the passages the judge was shown, the scores.
    first = results["items"][0]
    assert first["id"] == SMALL[0] and first["status"] == "done" and len(first["runs"]) == 3
    run = first["runs"][0]
    seen = run["observation"]
    assert run["answer"] and seen["answer"] == run["answer"] and seen["units"] and seen["sources"]
    assert {"citation_recall", "claim_precision", "source_pollution"} <= set(run)
    statements = {j["statement"] for j in run["judged"]}
    assert {u["text"] for u in seen["units"]} <= statements
    passages = {s["passage"][:3000] for s in seen["sources"].values()}
    assert any(set(j["passages"]) & passages and j["verdict"] is True for j in run["judged"])
    assert first["reproducibility"] is not None and first["judge_usage"]["calls"] > 0

    # The error is recorded, scored as no credit, and the others are intact.
    third = results["items"][2]
    assert (
        third["status"] == "error"
        and "could not be built" in third["error"]
        and "RuntimeError" in third["traceback"]
    )
    assert all(r["citation_recall"] == 0.0 and r["status"] == "error" for r in third["runs"])
    assert results["errors"] == [{"id": SMALL[2], "error": third["error"]}]
    assert results["summary"]["runs"] == 12 and results["summary"]["failed_runs"] == 3
    kept = {p.name: p.read_text() for p in (folder / "items").glob("*.json")}

    # A resume with another judge, or after the judge's prompt changed, is refused, saying which.
    with pytest.raises(CommandError, match="judge model: judge-x in the stored run, judge-y now"):
        call_command("deep_research_eval", "--resume", str(folder), "--judge-model", "judge-y")
    edited = {**manifest, "judge": {**judge, "prompt_hash": "0000"}}
    (folder / "manifest.json").write_text(json.dumps(edited))
    with pytest.raises(CommandError, match="judge prompt hash: 0000 in the stored run"):
        call_command("deep_research_eval", "--resume", str(folder), "--judge-model", "judge-x")
    (folder / "manifest.json").write_text(json.dumps(manifest))

    # --resume runs only what did not finish, and the summary is complete.
    ran.clear()
    monkeypatch.setattr(
        evaluation_run, "run_item", lambda item, **kw: (ran.append(item.id), real_run_item(item, **kw))[1]
    )
    capsys.readouterr()
    call_command("deep_research_eval", "--resume", str(folder), "--judge-model", "judge-x")
    assert ran == [SMALL[2]] and "3 of 4 items finished before" in capsys.readouterr().out
    resumed = read_results(folder)
    assert [r["status"] for r in resumed["items"]] == ["done"] * 4 and resumed["errors"] == []
    assert resumed["summary"]["failed_runs"] == 0 and resumed["summary"]["runs"] == 12
    now_files = {p.name: p.read_text() for p in (folder / "items").glob("*.json")}
    assert {n: t for n, t in now_files.items() if SMALL[2] not in n} == {
        n: t for n, t in kept.items() if SMALL[2] not in n
    }  # items 1, 2 and 4 untouched
    assert resumed["manifest"]["resumed_at"]


def test_replay_from_judges_both_sides_again_and_prints_per_item_differences_with_intervals(
    transactional_db, llm, fake_embeddings, tmp_path, capsys
):
    _scripted(llm)
    call_command(
        "deep_research_eval", V2, "--only", *SMALL[:3], "--k", "1", "--model", "scripted-faithful",
        "--judge-model", "judge-x", "--out", str(tmp_path / "before"),
    )  # fmt: skip
    (before,) = results_folders(tmp_path / "before")
    with pytest.raises(CommandError, match="judge model: judge-x in the stored run, judge-y now"):
        call_command("deep_research_eval", "--replay-from", str(before), "--judge-model", "judge-y")
    capsys.readouterr()
    judged_before = len(llm.calls("entailment"))
    call_command(
        "deep_research_eval", "--replay-from", str(before), "--model", "scripted-verbose",
        "--judge-model", "judge-x", "--out", str(tmp_path / "after"),
    )  # fmt: skip
    output = capsys.readouterr().out
    after = read_results(tmp_path / "after")
    assert after["manifest"]["kind"] == "replay" and after["manifest"]["replay_of"] == str(before)
    assert after["manifest"]["dataset"]["items"] == SMALL[:3]

    # The stored answers were judged again (the judge was asked more than for the new run alone),
    # and score as they did when stored: same judge, same answers.
    stored = read_results(before)
    comparison = after["comparison"]
    assert len(llm.calls("entailment")) - judged_before > 0
    assert comparison["overall"]["claim_precision"]["before"] == stored["summary"]["claim_precision"]
    # the verbose model also selects spans no gold document supports
    assert comparison["overall"]["claim_precision"]["delta"] < 0

    # Per item differences, and a bootstrap 95 % interval for every metric.
    assert [row["id"] for row in comparison["items"]] == SMALL[:3]
    deltas = [row["claim_precision"]["delta"] for row in comparison["items"]]
    assert sum(d < 0 for d in deltas) >= 2, deltas  # (a wider selection can hit a gold span too)
    for key in ("citation_recall", "claim_precision", "fact_recall", "source_pollution", "readability"):
        values = comparison["intervals"][key]
        assert values["items"] == 3
        for side in ("before", "after", "delta"):
            low, high = values[side]["ci95"]
            assert low <= values[side]["mean"] <= high
    per_item = output.split("per item: Δ = after − before", 1)[1].splitlines()
    for row in comparison["items"]:
        line = next(line for line in per_item if line.startswith(row["id"][:27]))
        assert f"{row['claim_precision']['delta']:+.2f}" in line
    line = next(line for line in output.splitlines() if line.startswith("claim.prec") and "[" in line)
    low, high = comparison["intervals"]["claim_precision"]["delta"]["ci95"]
    assert f"[{low:+.2f}, {high:+.2f}]" in line
    assert "bootstrap 95% intervals (1000 resamples" in output
    # The light rubric's readability is compared like any metric (coverage too, on v3 items).
    low, high = comparison["intervals"]["readability"]["delta"]["ci95"]
    assert any(
        line.startswith("readable") and f"[{low:+.2f}, {high:+.2f}]" in line for line in output.splitlines()
    )


def test_the_smoke_subset_is_fixed_and_spans_both_languages_and_every_category():
    items = datasets.load()
    smoke = smoke_items(items, datasets.DEFAULT)
    listed = json.loads(evaluation_run.SMOKE_FILE.read_text())[datasets.DEFAULT]
    assert [i.id for i in smoke] == [i.id for i in items if i.id in listed] and len(smoke) == 12
    assert {i.language for i in smoke} == {"en", "zh-hant"}
    assert {i.category for i in smoke} == {"course", "catalogue", "analyst"}
    # v3's smoke subset holds every kind of trap, unanswerable items included.
    assert {t for i in smoke for t in i.traps} == {"distractor", "conflict", "planted", "unanswerable"}
    for name, ids in json.loads(evaluation_run.SMOKE_FILE.read_text()).items():
        if name.endswith(".jsonl") and (datasets.DATASETS / name).exists():  # every list matches its dataset
            chosen = smoke_items(datasets.load(name), name)
            assert len(chosen) == len(ids) == 12 and {i.language for i in chosen} == {"en", "zh-hant"}, name
    unlisted = smoke_items(items, "another.jsonl")  # any dataset: 12 spread over its groups
    assert len(unlisted) == 12 and Counter((i.category, i.language) for i in unlisted) == Counter(
        {(c, lang): 2 for c in ("course", "catalogue", "analyst") for lang in ("en", "zh-hant")}
    )


def test_make_eval_prints_the_estimate_and_refuses_what_is_missing(
    db, llm, fake_embeddings, capsys, settings
):
    _scripted(llm)
    call_command(
        "deep_research_eval", "--smoke", "--model", "scripted", "--judge-model", "judge-x", "--estimate-only"
    )
    output = capsys.readouterr().out
    assert "estimate: 12 items × k=1 = 12 researches with scripted" in output
    assert re.search(r"judge \(judge-x\): ~\d+ calls \(incl\. the 204-pair agreement check\)", output)
    assert not llm.calls()  # an estimate asks no model

    # The judge's model is not served where the judge points: refused before anything runs.
    with pytest.raises(CommandError, match="the judge server at .* does not list judge-x"):
        call_command(
            "deep_research_eval", "--smoke", "--model", "scripted", "--judge-model", "judge-x", "--preflight"
        )
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = 1  # less room than the estimate (model and judge served)
    with pytest.raises(CommandError, match="daily cap .* less than the estimated"):
        call_command(
            "deep_research_eval", "--smoke", "--model", "scripted", "--judge-model", "scripted",
            "--allow-self-judge", "--preflight",
        )  # fmt: skip
    assert not llm.calls("planner")

    # Everything there: each prerequisite named as checked.
    from evaluation import preflight
    from evaluation.judge import JudgeSettings

    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = 100
    cost = preflight.estimate(items=12, k=1, model="scripted", judge_model="scripted", labelled_pairs=204)
    lines = preflight.check(model="scripted", judge=JudgeSettings("scripted", llm.url, "k"), cost=cost)
    assert [line.split(":")[0] for line in lines] == ["researcher", "judge", "daily cap", "embeddings"]
    assert "32 dimensions" in lines[-1] and fake_embeddings.requests


def test_an_interrupted_run_keeps_its_finished_items_and_resume_runs_only_the_rest(
    transactional_db, llm, fake_embeddings, tmp_path, monkeypatch
):
    _scripted(llm)
    real_run_item = evaluation_run.run_item
    ran: list[str] = []

    def stopped(item, **kwargs):
        ran.append(item.id)
        if item.id == SMALL[1]:
            raise KeyboardInterrupt  # the operator's Ctrl-C, a killed process: not an item's error
        return real_run_item(item, **kwargs)

    monkeypatch.setattr(evaluation_run, "run_item", stopped)
    args = ("--only", *SMALL[:3], "--k", "1", "--model", "scripted-faithful", "--judge-model", "judge-x")
    with pytest.raises(KeyboardInterrupt):
        call_command("deep_research_eval", V2, *args, "--out", str(tmp_path))
    (folder,) = results_folders(tmp_path)
    assert ran == SMALL[:2] and not (folder / "summary.json").exists()
    assert [p.name for p in sorted((folder / "items").glob("*.json"))] == [f"001-{SMALL[0]}.json"]
    assert json.loads((folder / "manifest.json").read_text())["finished_at"] is None

    ran.clear()
    monkeypatch.setattr(
        evaluation_run, "run_item", lambda item, **kw: (ran.append(item.id), real_run_item(item, **kw))[1]
    )
    call_command("deep_research_eval", "--resume", str(folder), "--judge-model", "judge-x")
    assert ran == SMALL[1:3]
    resumed = read_results(folder)
    assert [r["id"] for r in resumed["items"]] == SMALL[:3] and resumed["summary"]["completed_runs"] == 3
    assert resumed["manifest"]["finished_at"] and resumed["manifest"]["k"] == 1
