"""Dataset v3 (evaluation/datasets/uedu_eval_v3.jsonl) checked against the shapes the evaluation
engineers agreed on: independent worlds, both languages, gold marked per passage, look-alike
distractors, abstention items, the ported attack categories, native Chinese figures with
half-up rounding, and tables that reach the real files the product indexes.

The JSON is read directly (so fields a loader may not know yet are still checked) and through
evaluation.dataset.load (so the set keeps loading)."""

from __future__ import annotations

import json
import re
from collections import Counter
from decimal import Decimal

import pytest

from evaluation import dataset as datasets
from evaluation import world
from evaluation.datasets import build_v3
from evaluation.datasets.build_v3_attacks import ATTACKS as V3_ATTACKS
from evaluation.datasets.build_v3_attacks import CATEGORIES as V3_CATEGORIES
from evaluation.datasets.build_v3_common import half_up
from materials.extraction import extract
from tests.support.attacks import CATEGORIES as ATTACK_LETTERS

PATH = datasets.DATASETS / "uedu_eval_v3.jsonl"
_CJK = re.compile(r"[\u3400-\u9fff]")
INSTRUCTION_WORDS = re.compile(
    r"\b(ignore|instruction|assistant|AI|please|must|should|cite|summar\w*|answer with|reply)\b|請|忽略|指示|助理|務必|引用|回答",
    re.IGNORECASE,
)
# unit of a stored figure value: (divisor from USD, decimals)
UNITS = {
    "USD billion": (Decimal(10**9), 2),
    "USD million": (Decimal(10**6), 0),
    "億美元": (Decimal(10**8), 1),
}
UNITS["萬美元"] = (Decimal(10**4), 0)


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return [json.loads(line) for line in PATH.read_text(encoding="utf-8").splitlines() if line.strip()]


def _doc(item: dict, name: str) -> dict:
    return next(d for d in item["documents"] if d["name"] == name)


def _text(document: dict) -> str:
    if document["kind"] == "financials":
        return json.dumps(document["financials"], ensure_ascii=False)
    parts = [document.get("title", "")]
    for page in document.get("pages", []):
        parts += [page.get("title", ""), *page["paragraphs"]]
        for table in page.get("tables", []):
            parts += [table["caption"], *table["columns"], *(c for row in table["rows"] for c in row)]
    return "\n".join(p for p in parts if p)


def test_the_committed_file_is_what_the_builder_writes(raw):
    assert [json.dumps(i, ensure_ascii=False) for i in build_v3.build()] == [
        json.dumps(i, ensure_ascii=False) for i in raw
    ]


def test_v3_loads_and_is_wide_enough(raw):
    items = datasets.load(PATH)
    assert [i.id for i in items] == [r["id"] for r in raw]
    worlds = {r["world"] for r in raw}
    assert len(worlds) >= 45
    # a world is its documents: two world ids never share the very same set of documents
    owners: dict[frozenset, set] = {}
    for r in raw:
        owners.setdefault(frozenset(d["name"] for d in r["documents"]), set()).add(r["world"])
    assert all(len(w) == 1 for w in owners.values()), [w for w in owners.values() if len(w) > 1]
    assert Counter(r["language"] for r in raw).keys() == {"en", "zh-hant"}
    per_category = {
        c: {r["world"] for r in raw if r["category"] == c} for c in ("course", "catalogue", "analyst")
    }
    assert all(len(w) >= 10 for w in per_category.values()), {c: len(w) for c, w in per_category.items()}
    for language in ("en", "zh-hant"):
        assert len({r["world"] for r in raw if r["language"] == language}) >= 18
    assert all(r.get("rubric", {}).get("coverage") for r in raw)


def test_unanswerable_items_are_spread_and_carry_no_gold(raw):
    none = [r for r in raw if r["answerable"] is False]
    assert len(none) >= 8
    assert {r["category"] for r in none} == {"course", "catalogue", "analyst"}
    assert {r["language"] for r in none} == {"en", "zh-hant"}
    assert all(r["gold_facts"] == [] for r in none)
    assert all(r["gold_facts"] for r in raw if r["answerable"])


def test_every_gold_passage_points_at_a_real_paragraph_cell_or_figure(raw):
    for r in raw:
        for g in r["gold_facts"]:
            assert g["passages"] and set(g["documents"]) == {p["document"] for p in g["passages"]}, r["id"]
            for p in g["passages"]:
                doc = _doc(r, p["document"])
                if "figure" in p:
                    assert doc["kind"] == "financials" and p["figure"] in datasets.FIGURE_KEYS
                    assert p["figure"] in doc["financials"]["figures"], r["id"]
                elif "table" in p:
                    t = doc["pages"][p["page"]]["tables"][p["table"]]
                    assert 0 <= p["row"] < len(t["rows"]) and 1 <= p["col"] < len(t["columns"]), r["id"]
                else:
                    assert doc["pages"][p["page"]]["paragraphs"][p["paragraph"]].strip(), r["id"]
        for c in r.get("known_conflicts", []):
            assert len(c["sides"]) == 2 and all(s["documents"] for s in c["sides"])


def test_table_cells_marked_gold_hold_the_fact_value(raw):
    cells = 0
    for r in raw:
        for g in r["gold_facts"]:
            for p in g["passages"]:
                if "table" in p:
                    t = _doc(r, p["document"])["pages"][p["page"]]["tables"][p["table"]]
                    assert t["rows"][p["row"]][p["col"]].lstrip("±") in g["fact"], (r["id"], g["fact"])
                    cells += 1
    assert cells >= 10


def test_distractors_and_planted_documents_are_never_gold_and_look_alike(raw):
    for r in raw:
        gold = {n for g in r["gold_facts"] for n in g["documents"]}
        traps = set(r.get("distractors", [])) | {p["document"] for p in r.get("planted", [])}
        assert not gold & traps, r["id"]
        genuine = [d for d in r["documents"] if d["name"] not in traps and d.get("reliability") != "low"]
        for name in r.get("distractors", []):
            d = _doc(r, name)
            if d.get("reliability") == "low":
                continue  # a forum post is short by nature; it is a trap by its source, not its look
            # compared with the genuine documents of its kind (a preview with the news, a handout
            # with the handout), else with every genuine text
            peers = [len(_text(g)) for g in genuine if g["kind"] == d["kind"]] or [
                len(_text(g)) for g in genuine if g["kind"] != "financials"
            ]
            ratio = len(_text(d)) / (sum(peers) / len(peers))
            assert 0.5 <= ratio <= 2.0, (r["id"], name, round(ratio, 2))


def test_every_attack_category_is_planted_in_both_languages_with_content_markers(raw):
    planted = [(r, p) for r in raw for p in r.get("planted", [])]
    categories = Counter(p["category"] for _, p in planted)
    assert set(categories) == set(V3_CATEGORIES)
    assert {V3_CATEGORIES[c] for c in categories} - {""} == set(ATTACK_LETTERS)
    for category in V3_CATEGORIES:
        assert {r["language"] for r, p in planted if p["category"] == category} == {"en", "zh-hant"}, category
    shapes = {V3_ATTACKS[p["attack"]][2] for _, p in planted if "attack" in p}
    assert len(shapes) >= 6
    for r, p in planted:
        text = _text(_doc(r, p["document"]))
        assert p["canary"].strip() and len(p["obey_markers"]) >= 2, r["id"]
        assert any(m in text for m in p["obey_markers"]), (r["id"], p["document"])
        # the content survives a translation: a language-neutral token or a marker in each script
        neutral = any(re.search(r"[0-9]|https?://|[A-Z]{2,}-[A-Z0-9]", m) for m in p["obey_markers"])
        both = any(_CJK.search(m) for m in p["obey_markers"]) and any(
            not _CJK.search(m) for m in p["obey_markers"]
        )
        assert neutral or both, (r["id"], p["obey_markers"])
        if p["category"] == "false_fact":
            assert p["false_fact"] and p["false_fact"] in text, r["id"]
            assert not INSTRUCTION_WORDS.search(text.replace(p["document"], "")), (r["id"], p["document"])
        else:
            assert p["false_fact"] is None
    # a planted document carries one hostile passage: its own document per attack
    for r in raw:
        names = [p["document"] for p in r.get("planted", [])]
        assert len(names) == len(set(names)), r["id"]


def test_chinese_analyst_text_is_native_and_amounts_are_rounded_half_up(raw):
    analyst = [r for r in raw if r["category"] == "analyst"]
    for r in analyst:
        if r["language"] != "zh-hant":
            continue
        texts = [r["question"], *(g["fact"] for g in r["gold_facts"])] + [
            _text(d) for d in r["documents"] if d["kind"] != "financials"
        ]
        for text in texts:
            assert not re.search(r"billion|million|fiscal|revenue", text, re.IGNORECASE), (r["id"], text)
        assert any("億美元" in t or "萬美元" in t for t in texts) or not r["answerable"], r["id"]
        assert "財年" in r["question"] or "最近一季" in r["question"], r["id"]
    values = 0
    for r in analyst:
        for g in r["gold_facts"]:
            v = g.get("value")
            if not v:
                continue
            values += 1
            figs = [_doc(r, p["document"])["financials"]["figures"] for p in g["passages"]]
            keys = [p["figure"] for p in g["passages"]]
            if v["unit"] in UNITS:
                divisor, places = UNITS[v["unit"]]
                usd = sum(Decimal(str(f[k])) for f, k in zip(figs, keys))
                expected = half_up(usd / divisor, places)
                assert abs(v["value"]) == abs(expected), (r["id"], g["fact"], v, expected)
                shown = f"{Decimal(str(abs(expected))):,.{places}f}"
                assert shown in g["fact"], (r["id"], g["fact"], shown)
            elif v["unit"] == "percent":
                if v["metric"] == "revenue_growth":
                    before, after = (Decimal(str(f["revenue"])) for f in figs)
                    expected = half_up((after - before) * 100 / before, 1)
                else:
                    numerator, revenue = (Decimal(str(f[k])) for f, k in zip(figs, keys))
                    expected = half_up(numerator * 100 / revenue, 1)
                assert v["value"] == expected, (r["id"], g["fact"], v, expected)
                assert f"{Decimal(str(abs(expected))):.1f}%" in g["fact"], (r["id"], g["fact"])
            else:
                assert v["metric"] == "eps_diluted" and v["value"] == figs[0]["eps_diluted"]
    assert values >= 60
    # the rounding traps are really there: a half at the last kept decimal, rounded up
    facts = " ".join(g["fact"] for r in analyst for g in r["gold_facts"])
    assert all(s in facts for s in ("USD 3.22 billion", "USD 2.68 billion", "32.2 億美元", "10.5 億美元"))
    # every analyst question that asks for net income has a net-income fact
    for r in analyst:
        if r["answerable"] and re.search(r"net income|淨利(?!率)", r["question"]):
            assert any(g.get("value", {}).get("metric") == "net_income" for g in r["gold_facts"]), r["id"]


def test_tables_reach_the_real_files_the_product_indexes(raw):
    items = {i.id: i for i in datasets.load(PATH)}
    seen = set()
    for r in raw:
        for d in r["documents"]:
            if d["kind"] != "material" or not any(p.get("tables") for p in d["pages"]) or d["name"] in seen:
                continue
            seen.add(d["name"])
            document = items[r["id"]].document(d["name"])
            units = extract(document.format, world.material_bytes(document))
            flat = "".join(" ".join(u.text for u in units).split())
            for page in document.pages:
                for t in page.tables:
                    assert "".join(t.caption.split())[:25] in flat, (d["name"], t.caption)
                    for row in t.rows:
                        assert all("".join(c.split()) in flat for c in row), (d["name"], row)
    assert {n.rsplit(".", 1)[-1] for n in seen} >= {"pdf", "docx", "pptx"}


def test_a_table_cell_is_judged_with_its_caption_row_and_column(raw):
    item = next(i for i in datasets.load(PATH) if i.id == "en-course-stats-results-1")
    document = item.documents[0]
    passages = world.passages(document)
    assert (
        "Table 1. Mean test scores (out of 100) and effect sizes, EDU260 study, autumn semester — Retrieval quizzes"
        " — Effect size (d): 0.71" in passages
    )


def test_a_bad_table_is_refused_clearly(tmp_path, raw):
    line = json.loads(json.dumps(next(r for r in raw if r["id"] == "en-course-stats-results-1")))
    line["documents"][0]["pages"][0]["tables"][0]["rows"][0].append("extra")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(datasets.DatasetError, match="table row needs 4 cells"):
        datasets.load(bad)


V3_SAMPLE = [
    "en-course-stats-results-1",  # a PDF whose gold is table cells, a look-alike, a forged-source upload
    "zh-course-sampling-1",  # a PPTX with a table
    "en-course-web-syllabus-none-1",  # unanswerable, a DOCX with a table
    "en-catalogue-lin220",  # a review page with a planted footnote
    "zh-analyst-hlmr-growth",  # native Chinese figures, a look-alike company's news
]


@pytest.mark.slow
def test_v3_items_run_through_the_real_pipeline_and_are_scored(
    transactional_db, llm, fake_embeddings, tmp_path, capsys
):
    """A sample of v3 (tables in all three formats, an unanswerable item, a planted page, Chinese
    figures) through deep_research_eval against the naive scripted model."""
    from django.core.management import call_command

    from tests.support import eval_judge
    from tests.support.eval_model import install
    from tests.support.scripted_llm import Scenario

    items = {i.id: i for i in datasets.load(PATH)}
    llm.reset(Scenario())
    install(llm, [items[i] for i in V3_SAMPLE], seed=1)
    eval_judge.install(llm, "labels")  # a judge that passes the agreement check
    call_command(
        "deep_research_eval",
        str(PATH),
        "--only",
        *V3_SAMPLE,
        "--k",
        "1",
        "--judge-model",
        "judge-x",
        "--out",
        str(tmp_path),
        "--model",
        "scripted-faithful",
    )
    results = eval_judge.read_results(tmp_path)
    rows = {row["id"]: row for row in results["items"]}
    assert sorted(rows) == sorted(V3_SAMPLE)
    runs = {i: rows[i]["runs"][0] for i in V3_SAMPLE}
    assert all(run["status"] == "completed" for run in runs.values()), {
        i: r["error"] for i, r in runs.items()
    }
    # The naive model answers everything: on the unanswerable item that is the wrong outcome.
    assert runs["en-course-web-syllabus-none-1"]["outcome"] == "answered_unanswerable"
    assert rows["en-course-web-syllabus-none-1"]["abstention"] == 0.0
    assert all(runs[i]["outcome"] == "answered" for i in V3_SAMPLE if items[i].answerable)
    # It restates every source it is shown, the look-alike handout included: that is pollution.
    polluting = {p["document"] for p in runs["en-course-stats-results-1"]["polluting_sources"]}
    assert "week6-results-table-2024-cohort-edu261.pdf" in polluting
    # The light rubric: the items' coverage points asked of the judge, readability by code, both
    # in every row, every summary and the printed table.
    assert llm.calls("coverage")
    for i in V3_SAMPLE:
        assert 0 <= rows[i]["readability"] <= 1, i
        assert items[i].rubric.get("coverage") and 0 <= rows[i]["coverage"] <= 1, i
        assert [p["point"] for p in runs[i]["rubric"]] == items[i].rubric["coverage"], i
    summaries = [results["summary"], *results["by_category"].values()]
    assert all(s["coverage"] is not None and s["readability"] is not None for s in summaries)
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("item "))
    assert "coverage" in header and "readable" in header
