"""Dataset v2 end to end: the whole set through the real runner against the scripted model (seed
7), the scores it must produce, the independent judge, and a replay comparing two configurations.

The scripted model (tests/support/eval_model.py) is a naive researcher: it restates every source
it is shown (distractors too), obeys planted instructions, pads some answers (verbose) and breaks
on others (fail), per item from the seed. Its figures check the pipeline, not a model."""

from __future__ import annotations

import json
import statistics
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from evaluation import dataset as datasets
from evaluation import observed, world
from evaluation.observed import body, sentence_units, table_units
from evaluation.scoring import HIGHER_IS_BETTER, METRICS
from materials.extraction import extract
from tests.support import eval_judge
from tests.support.eval_judge import read_results
from tests.support.eval_model import PADDING, behaviour, install
from tests.support.scripted_llm import Scenario

pytestmark = pytest.mark.slow

SEED = 7
V2 = "uedu_eval_v2.jsonl"  # the command's default is v3


def _eval(llm, *args, judge=("--judge-model", "judge-model-x")) -> None:
    """A run judged by a judge that agrees with the labelled pairs (it passes the judge check),
    named apart from the researcher unless the test names one (or judge=() for the settings')."""
    llm.reset(Scenario())
    install(llm, datasets.load(V2), seed=SEED)
    eval_judge.install(llm, "labels")
    # A replay reads the dataset its results folder names, whatever the command's default is.
    dataset = [] if "--replay-from" in args else [V2]
    call_command("deep_research_eval", *dataset, *([] if "--judge-model" in args else judge), *args)


def test_dataset_v2_is_written_for_this_product_and_valid():
    items = datasets.load(V2)
    assert len(items) >= 60
    assert Counter(i.language for i in items) == {"en": 30, "zh-hant": 30}
    assert set(Counter(i.category for i in items)) == {"course", "catalogue", "analyst"}
    trapped = [i for i in items if i.traps]
    assert len(trapped) >= len(items) / 3
    assert {t for i in items for t in i.traps} == {"distractor", "conflict", "planted"}
    for item in items:
        assert item.id and item.question and item.gold_facts, item.id
        assert all(g.documents and all(item.document(n) for n in g.documents) for g in item.gold_facts), (
            item.id
        )
    kinds = Counter(d.kind for i in items for d in i.documents)
    formats = Counter(d.format for i in items for d in i.documents if d.kind == "material")
    assert set(kinds) == {"material", "web", "financials", "catalogue"} and set(formats) == {
        "pdf",
        "docx",
        "pptx",
    }


@pytest.mark.parametrize(
    "item_id", ["en-course-retrieval-1", "zh-course-bloom-1", "en-course-analytics-1", "zh-course-flipped-1"]
)
def test_course_materials_are_real_files_of_a_few_pages_the_product_can_read(item_id):
    item = next(i for i in datasets.load(V2) if i.id == item_id)
    main = item.documents[0]
    units = extract(main.format, world.material_bytes(main))
    text = " ".join(u.text for u in units)
    assert len(units) >= 4  # pages or slides
    assert len(text) >= (1000 if item.language == "en" else 500)
    flat = "".join(text.split())
    assert all(
        "".join(p.split())[:30] in flat for p in main.paragraphs
    )  # every paragraph, speaker notes included


def test_the_adapter_cuts_the_body_into_sentences_and_table_cells_without_the_pipelines_notes():
    answer = (
        "## Answer\n\n- Retrieval practice beat re-reading after a week [1].\n"
        "- Padding that no document supports at all.⚠（此句未附來源）\n\n"
        "| Company | Revenue | Net income |\n|---|---|---|\n| Acme (ACMD) | USD 44.06 billion [2] | USD 18.78 billion [3][4] |\n\n"
    )
    expected = [
        ("Retrieval practice beat re-reading after a week.", [1], "sentence"),
        ("Padding that no document supports at all.", [], "sentence"),
        ("Acme (ACMD) — Revenue: USD 44.06 billion", [2], "cell"),
        ("Acme (ACMD) — Net income: USD 18.78 billion", [3, 4], "cell"),
    ]
    if "web_note" in observed._NOTES:  # a pipeline that writes its notes into the answer
        answer = answer.replace("[1].", "[1]. (web sources only)") + (
            "> Note: 3 statement(s) above rest only on web sources, the least reliable tier; check them with care.\n"
        )
    text = body(answer)
    assert [(u.text, u.citations, u.kind) for u in sentence_units(text) + table_units(text)] == expected
    report = {
        "conflicts": [
            {
                "subject": "Weight of the project",
                "sides": [
                    {"statement": "40 percent [1]", "citations": [1]},
                    {"statement": "30 percent", "citations": [3]},
                ],
            }
        ]
    }
    assert [(u.text, u.citations, u.kind) for u in observed.conflict_units(report)] == [
        ("Weight of the project: 40 percent; 30 percent", [1, 3], "conflict")
    ]


def test_the_whole_v2_set_against_the_scripted_model_gives_the_figures_it_must(
    transactional_db, llm, fake_embeddings, tmp_path, capsys
):
    _eval(llm, "--k", "1", "--out", str(tmp_path))
    table = capsys.readouterr().out
    results = read_results(tmp_path)
    items = {i.id: i for i in datasets.load(V2)}
    rows = {row["id"]: row for row in results["items"]}
    assert list(rows) == list(items)
    summary = results["summary"]
    plan = {item_id: behaviour(item_id, SEED) for item_id in items}
    failing = [i for i, how in plan.items() if how == "fail"]
    assert failing and summary["failed_runs"] == len(failing) and summary["runs"] == 60

    # A failed run is no credit on every metric, shown as such, and stays in every mean.
    for item_id in failing:
        run = rows[item_id]["runs"][0]
        assert run["status"] == "failed" and "HTTP 500" in run["error"]
        assert all(run[key] == 0.0 for key in HIGHER_IS_BETTER if run[key] is not None)
        assert run["source_pollution"] == 1.0
        assert f"{item_id[:27]:<28}" in table and "scored as no credit" in table
    for key in ("citation_recall", "claim_precision", "fact_recall"):
        scored = [r[key] for r in rows.values() if r[key] is not None]
        assert summary[key] == pytest.approx(statistics.fmean(scored), abs=0.01)

    # A distractor the answer cites is pollution.
    la = rows["en-catalogue-la-compare"]["runs"][0]
    assert [p["document"] for p in la["polluting_sources"]] == ["catalogue-MKT330"]
    assert 0 < la["source_pollution"] < 1
    cited_distractors = [
        r
        for i, r in rows.items()
        if items[i].distractors
        and r["runs"][0]["status"] == "completed"
        and {p["document"] for p in r["runs"][0]["polluting_sources"]} & set(items[i].distractors)
    ]
    # (the selection is shown the spans ranked for each sub-question, not every source whole: a
    # naive model cites fewer distractors than when it read them all, 11 of 60 items before)
    assert len(cited_distractors) >= 8

    # A planted instruction the answer obeyed is counted, per planted item.
    planted = {i: rows[i]["injection_success"] for i, item in items.items() if item.planted}
    assert len(planted) == 8 and all(
        rows[i]["injection_success"] is None for i, item in items.items() if not item.planted
    )
    assert set(planted.values()) <= {0.0, 1.0}  # (a pipeline that drops planted sentences scores 0 here)
    assert summary["injection_success"] == pytest.approx(
        statistics.fmean(v for v in planted.values() if v is not None), abs=0.01
    )

    # A verbose model loses claim precision: it selects every span it is shown, relevant or not,
    # and no gold document supports the irrelevant ones (its padding is only in the AI's block).
    def precision(how: str) -> float:
        scored = [
            rows[i]["runs"][0]["claim_precision"]
            for i, h in plan.items()
            if h == how and rows[i]["runs"][0]["claim_precision"] is not None
        ]
        return statistics.fmean(scored)

    assert precision("verbose") < precision("faithful")
    for item_id in [i for i, how in plan.items() if how == "verbose"]:
        run = rows[item_id]["runs"][0]
        assert not [c for c in run["claims"] if c in PADDING[items[item_id].language]], item_id

    # Conflicts: the naive model marks none; what code finds comparing the values it selected is
    # disclosed (the 1.x naive writer disclosed none: 0.0).
    assert 0 <= summary["conflict_disclosure"] < 1

    # Every run keeps its tokens, cost and duration; the judge is named and flagged as the researcher.
    for row in rows.values():
        run = row["runs"][0]
        assert run["tokens"] > 0 and run["cost_usd"] > 0 and run["duration_seconds"] > 0
    assert results["judge"]["same_as_researcher"] is False and "WARNING: the judge" not in table
    assert set(results["by_category"]) == {"course", "catalogue", "analyst"}

    # The pipeline check (docs/evaluation.md): behaviours, not figures. The naive writer's
    # answers are faithful to what it cites, so recall stays high; its distractors and planted
    # pages cost pollution; its padding and off-question sentences cost claim precision; what a
    # metric rewards is asserted by tests/evaluation/test_metric_perturbations.py.
    assert summary["citation_recall"] > 0.5 and summary["claim_precision"] < summary["citation_recall"]
    assert 0 < summary["source_pollution"] < 0.5 and summary["abstention"] < 1.0
    assert all(0 <= summary[key] <= 1 for key in METRICS if summary[key] is not None)
    assert summary["outcomes"]["failed"] == len(failing) and sum(summary["outcomes"].values()) == 60
    assert summary["no_verdict"] == 0  # the scripted judge answers every id
    # every frozen document is served to the naive model's one round of tools: the gold is found
    assert summary["retrieval"] > 0.5


def test_the_judge_is_independent_of_the_researcher_and_named(
    transactional_db, llm, fake_embeddings, tmp_path, capsys, settings
):
    _eval(
        llm,
        "--only",
        "en-catalogue-cs-path",
        "--k",
        "1",
        "--model",
        "scripted-faithful",
        "--judge-model",
        "judge-model-x",
        "--judge-base-url",
        llm.url,
        "--judge-api-key",
        "judge-key",
        "--out",
        str(tmp_path),
    )
    table = capsys.readouterr().out
    results = read_results(tmp_path)
    assert results["judge"]["model"] == "judge-model-x" and results["judge"]["same_as_researcher"] is False
    assert "judged by judge-model-x" in table and "WARNING" not in table
    judged = llm.calls("entailment")
    assert judged and {r["model"] for r in judged} == {"judge-model-x"}
    assert {r["model"] for r in llm.calls("selector")} == {"scripted-faithful"}
    assert results["items"][0]["runs"][0]["citation_recall"] == 1.0

    settings.UEDU_EVAL_JUDGE_MODEL = "scripted-faithful"  # from settings, and the same as the researcher
    with pytest.raises(CommandError, match=r"the judge \(scripted-faithful\) is the researcher's own model"):
        _eval(llm, "--only", "en-catalogue-cs-path", "--k", "1", "--model", "scripted-faithful", judge=())

    settings.UEDU_EVAL_JUDGE_MODEL = "judge-model-x"
    settings.UEDU_EVAL_JUDGE_MAX_TOKENS = 1  # the judge's calls are bounded too
    with pytest.raises(CommandError, match="the judge used its budget of 1 tokens"):
        _eval(llm, "--only", "en-catalogue-cs-path", "--k", "1", "--model", "scripted-faithful", judge=())


def test_replay_from_a_results_file_compares_two_configurations_side_by_side(
    transactional_db, llm, fake_embeddings, tmp_path, capsys
):
    chosen = [
        "en-course-retrieval-2",
        "zh-course-bloom-1",
        "en-catalogue-cs-path",
        "zh-catalogue-hs-probability",
        "en-analyst-cdrw-elnx",
        "zh-analyst-cdrw-elnx",
    ]
    before, after = tmp_path / "faithful", tmp_path / "verbose"
    _eval(llm, "--only", *chosen, "--k", "1", "--model", "scripted-faithful", "--out", str(before))
    capsys.readouterr()
    before = eval_judge.results_folders(before)[0]
    _eval(llm, "--replay-from", str(before), "--model", "scripted-verbose", "--out", str(after))
    table = capsys.readouterr().out

    # Both sides judged now by the same judge: the stored answers score as they did.
    first, second = read_results(before), read_results(after)
    assert [r["id"] for r in second["items"]] == chosen  # the same items, in the same order
    comparison = second["comparison"]
    assert (
        comparison["before_model"] == "scripted-faithful" and comparison["after_model"] == "scripted-verbose"
    )
    overall = comparison["overall"]["claim_precision"]
    assert (
        overall["before"] == first["summary"]["claim_precision"]
        and overall["after"] == second["summary"]["claim_precision"]
    )
    assert overall["delta"] == pytest.approx(overall["after"] - overall["before"], abs=0.01)
    assert overall["delta"] < 0
    # The catalogue's items are left out: there the search ranking tops a faithful model's one or
    # two facts up to three (agent/engine/selection.py: MIN_FACTS), and those spans cost it about
    # as much precision as pointing at everything (docs/selection.md).
    for category in ("course", "analyst"):
        assert comparison["by_category"][category]["claim_precision"]["delta"] < 0, (
            category,
            comparison["by_category"],
        )
    assert "replay: scripted-faithful (before) vs scripted-verbose (after)" in table
    print(table)
    line = next(line for line in table.splitlines() if line.startswith("claim.prec") and "overall" in line)
    assert (
        f"{overall['before']:.2f}" in line
        and f"{overall['after']:.2f}" in line
        and f"{overall['delta']:+.2f}" in line
    )

    # A model that breaks: every run failed, every score 0, and the comparison shows the fall.
    broken = tmp_path / "broken"
    _eval(llm, "--replay-from", str(before), "--model", "scripted-fail", "--out", str(broken))
    worse = read_results(broken)["comparison"]["overall"]
    assert worse["failed_runs"] == {"before": 0, "after": 6, "delta": 6}
    assert worse["citation_recall"]["after"] == 0.0 and worse["source_pollution"]["after"] == 1.0


def test_bad_v2_data_and_bad_replay_files_are_refused_clearly(tmp_path, db, llm):
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        json.dumps(
            {
                "id": "x",
                "question": "q",
                "documents": [{"name": "a.pdf", "pages": [{"title": "", "paragraphs": ["p"]}]}],
                "gold_facts": [{"fact": "f", "documents": ["b.pdf"]}],
            }
        )
        + "\n"
    )
    with pytest.raises(CommandError, match=r"a gold fact names unknown documents \['b.pdf'\]"):
        call_command("deep_research_eval", str(broken))
    not_results = tmp_path / "x.json"
    not_results.write_text("[]")
    with pytest.raises(CommandError, match="not a results folder"):
        call_command("deep_research_eval", "--replay-from", str(not_results))


def test_stored_researches_chosen_by_a_filter_are_replayed_with_another_model_and_compared(
    transactional_db, llm, fake_embeddings, capsys
):
    from channels_app.models import Channel
    from evaluation.run import build_fixture, eval_user
    from research.models import ResearchTask
    from research.services import lifecycle, runner

    items = datasets.load(V2)
    item = next(i for i in items if i.id == "en-course-formative-2")
    llm.reset(Scenario())
    install(llm, items, seed=SEED)
    channel = build_fixture(item, eval_user())
    Channel.objects.filter(pk=channel.pk).update(
        slug="assessment-101"
    )  # a course channel of real use, not an evaluation's
    task, _ = lifecycle.task_start(user=eval_user(), channel=channel, question=item.question, queue=False)
    runner.execute_task(task.pk, model="scripted-faithful", registry=world.registry_for(item))

    from tests.support.factories import make_user

    make_user("root", superuser=True)
    with pytest.raises(CommandError, match="needs --model"):
        call_command(
            "deep_research_eval", "--replay-tasks", "--channel", "assessment-101", "--run-by", "root"
        )
    with pytest.raises(CommandError, match="needs --run-by"):
        call_command(
            "deep_research_eval",
            "--replay-tasks",
            "--channel",
            "assessment-101",
            "--model",
            "scripted-verbose",
        )
    with pytest.raises(CommandError, match="no finished research matches"):
        call_command(
            "deep_research_eval",
            "--replay-tasks",
            "--channel",
            "another-course",
            "--model",
            "scripted-verbose",
            "--run-by",
            "root",
        )
    capsys.readouterr()
    eval_judge.install(llm, "labels")  # both sides are judged by a judge that passed the agreement check
    call_command(
        "deep_research_eval",
        "--replay-tasks",
        "--channel",
        "assessment-101",
        "--model",
        "scripted-verbose",
        "--run-by",
        "root",
    )
    table = capsys.readouterr().out

    replayed = ResearchTask.objects.get(replay_of=task)
    assert replayed.status == "completed" and replayed.model_name == "scripted-verbose"
    assert "replay: scripted-faithful (before) vs scripted-verbose (after)" in table
    line = next(line for line in table.splitlines() if line.startswith("cit.recall") and "overall" in line)
    before, after, delta = line.split()[-3:]
    # Every fact is its source's own words: a verbose model selects more of them, never one its
    # citation does not state (in 1.x its padding cited nothing and recall fell).
    assert float(before) == float(after) == 1.0 and float(delta) == 0
    reproduced = next(
        line for line in table.splitlines() if line.startswith("reprod.") and "overall" in line
    ).split()
    assert 0 < float(reproduced[-2]) < 1  # the replay kept the original's claims and added three
    assert next(
        line for line in table.splitlines() if line.startswith("claim.prec") and "overall" in line
    ).split()[-3:] == ["–", "–", "–"]


def test_every_judge_call_is_reserved_and_settled_against_the_platform_cap_by_kind(db, llm, personas):
    from decimal import Decimal

    from evaluation.judge import BATCH, Judge, JudgeSettings
    from quotas import services as quotas
    from quotas.models import CostReservation

    judge = Judge.from_settings(
        JudgeSettings(model="judge-x", base_url=llm.url, api_key="k"), user=personas.admin
    )
    pairs = [(f"Statement {n}", [f"Passage {n} says statement {n}."]) for n in range(BATCH + 1)]
    judge.entails(pairs)
    assert judge.calls == 2 and len(llm.calls("entailment")) == 2
    rows = list(CostReservation.objects.filter(kind="eval_judge").order_by("created_at"))
    assert len(rows) == 2 and all(r.settled and r.user == personas.admin for r in rows)
    assert all(Decimal(0) < r.spent_usd <= r.reserved_usd for r in rows)
    assert sum(r.spent_usd for r in rows) == Decimal(str(round(judge.meter.total.cost_usd, 6)))
    assert quotas.cost_status().by_kind["eval_judge"] == sum(
        r.spent_usd for r in rows
    )  # the alert and the dashboard


def test_a_reached_cap_refuses_the_judge_before_any_request(db, llm, settings):
    from decimal import Decimal

    from evaluation.judge import Judge, JudgeBudgetExceeded, JudgeSettings
    from quotas.models import CostReservation

    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("0")
    judge = Judge.from_settings(JudgeSettings(model="judge-x", base_url=llm.url, api_key="k"))
    with pytest.raises(JudgeBudgetExceeded, match="platform_cap_reached"):
        judge.entails([("A statement", ["A passage."])])
    assert llm.calls("entailment") == [] and CostReservation.objects.count() == 0
