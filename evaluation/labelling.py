"""Labelled pairs from real output: drawn from results folders, labelled twice, independently.

The judge is measured against people (judge_check.py). Its first label set was written by hand to
a template; this module builds one from what the judge actually reads: the (statement, passages)
questions that scoring asked it in real runs, as each results folder keeps them (`judged` in
items/*.json, with the metric that asked: citation recall and precision, claim precision, fact
recall, conflict, obedience, and the rubric's coverage).

    python -m evaluation.labelling draw FOLDER… --out DIR [--n 160] [--seed 1] [--held-out 0.3]
    python -m evaluation.labelling sheet DIR --pass 1        # then label DIR/sheet-1.jsonl into labels-1.jsonl
    python -m evaluation.labelling sheet DIR --pass 2        # by another labeller, who never opens pass 1
    python -m evaluation.labelling agree DIR                 # the two passes' agreement
    python -m evaluation.labelling export DIR --to FILE      # agreed labels (+ adjudicated ones)

`draw` writes DIR/pairs.jsonl: each pair with its id, language, question (entailment or
coverage), purpose, statement and passages, its split, and where it came from (folder, dataset,
item, run, task, researcher model, commit, and the judge's verdict at the time). Pairs are drawn
round-robin over (language, purpose, the judge's verdict) strata in a seeded order, so both
languages and every prompt are represented and a judge that says "no" to everything cannot look
good; identical questions are drawn once. The **held-out split** is made of whole linked groups
(statistics.linked_groups: items sharing a world or a document), so no held-out pair's documents
were seen while developing a prompt on the rest.

`sheet` writes DIR/sheet-<n>.jsonl: id, question, statement and passages only — no verdict, no
provenance, no other pass's label — in an order shuffled by the pass number. A labeller writes
DIR/labels-<n>.jsonl, one `{"id", "label"}` a line, label `supported`, `partly` or
`not_supported` (for coverage: the answer addresses the point fully, in part, or not).

`agree` reads both passes: Cohen's kappa on the three labels and on the judge's binary decision
(supported vs the rest), overall and per language, each with a bootstrap 95 % interval (pairs
resampled, seeded), the raw agreement, and every disagreement's id; written to
DIR/agreement.json. `export` writes the label set judge_check reads: the label both passes gave,
or for a disagreement the one in DIR/adjudicated.jsonl (required for each)."""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path

from . import dataset as datasets
from .statistics import linked_groups

LABELS = ("supported", "partly", "not_supported")
DEFAULT_N = 160
PROVENANCE = ("folder", "dataset", "item", "run", "task_uuid", "researcher_model", "git_commit")


class LabellingError(ValueError):
    pass


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise LabellingError(f"{path} does not exist")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def _purpose(entry: dict) -> str:
    if entry.get("question") == "coverage":
        return "coverage"
    return entry.get("purpose") or "entailment"  # folders from before purposes were recorded


def candidates(folder: Path) -> list[dict]:
    """Every question a results folder's judge was asked (with passages), with its provenance."""
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    dataset = manifest["dataset"]["path"]
    items = {item.id: item for item in datasets.load(dataset)}
    groups = linked_groups(list(items.values()))
    found = []
    for path in sorted((folder / "items").glob("*.json")):
        row = json.loads(path.read_text(encoding="utf-8"))
        item = items.get(row["id"])
        if item is None:
            continue
        for run_index, run in enumerate(row.get("runs") or []):
            for entry in run.get("judged") or []:
                passages = [p for p in entry.get("passages") or [] if p.strip()]
                if not entry.get("asked", True) or not passages or not entry.get("statement", "").strip():
                    continue
                found.append(
                    {
                        "language": item.language,
                        "question": entry.get("question", "entailment"),
                        "purpose": _purpose(entry),
                        "statement": entry["statement"],
                        "passages": passages,
                        "group": groups[item.id],
                        "source": {
                            "folder": folder.name,
                            "dataset": dataset,
                            "item": item.id,
                            "run": run_index,
                            "task_uuid": run.get("task_uuid", ""),
                            "researcher_model": manifest.get("model", ""),
                            "git_commit": manifest.get("git_commit", ""),
                            "judge_model": (manifest.get("judge") or {}).get("model", ""),
                            "judge_verdict": entry.get("verdict"),
                        },
                    }
                )
    return found


def draw(folders: list[Path], *, n: int = DEFAULT_N, seed: int = 1, held_out: float = 0.3) -> list[dict]:
    """`n` distinct pairs, round-robin over (language, purpose, judge's verdict) strata, each
    marked `dev` or `held_out` by its linked group."""
    pool: dict[str, dict] = {}
    for folder in folders:
        for pair in candidates(folder):
            key = _digest(pair["question"], pair["statement"], pair["passages"])
            pool.setdefault(key, {**pair, "id": key[:12]})
    if not pool:
        raise LabellingError("the results folders hold no judged question with passages")
    order = random.Random(seed)
    strata: dict[tuple, list[dict]] = {}
    for pair in sorted(pool.values(), key=lambda p: p["id"]):
        stratum = (pair["language"], pair["purpose"], pair["source"]["judge_verdict"])
        strata.setdefault(stratum, []).append(pair)
    for members in strata.values():
        order.shuffle(members)
    keys = sorted(strata, key=repr)
    order.shuffle(keys)
    chosen: list[dict] = []
    while len(chosen) < n and any(strata[k] for k in keys):
        for key in keys:
            if strata[key] and len(chosen) < n:
                chosen.append(strata[key].pop())
    # Whole linked groups are held out (by a seeded hash of the group's name, so the split does
    # not depend on which pairs were drawn).
    names = sorted({p["group"] for p in chosen}, key=lambda g: _digest(seed, g))
    kept_out = set(names[: round(held_out * len(names))])
    for pair in chosen:
        pair["split"] = "held_out" if pair["group"] in kept_out else "dev"
    return sorted(chosen, key=lambda p: p["id"])


def sheet(pairs: list[dict], labelling_pass: int) -> list[dict]:
    """What a labeller sees: the question only, in this pass's own order."""
    rows = [
        {
            "id": p["id"],
            "question": p["question"],
            "statement": p["statement"],
            "passages": p["passages"],
            "label": "",
        }
        for p in pairs
    ]
    random.Random(f"pass-{labelling_pass}").shuffle(rows)
    return rows


def read_labels(path: Path, ids: set[str]) -> dict[str, str]:
    labels = {}
    for row in _read_jsonl(path):
        if row.get("label") not in LABELS:
            raise LabellingError(
                f"{path}: pair {row.get('id')} has label {row.get('label')!r}, not one of {LABELS}"
            )
        labels[row["id"]] = row["label"]
    missing = ids - set(labels)
    if missing:
        raise LabellingError(f"{path}: {len(missing)} pair(s) unlabelled, e.g. {sorted(missing)[:3]}")
    return labels


def kappa(a: list, b: list) -> float:
    """Cohen's kappa of two raters over any categories."""
    n = len(a)
    if not n:
        return 0.0
    observed = sum(x == y for x, y in zip(a, b)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[c] * count_b[c] for c in set(a) | set(b)) / (n * n)
    if expected >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def kappa_interval(a: list, b: list, *, resamples: int = 1000, seed: int = 20261203) -> list[float] | None:
    """Bootstrap 95 % interval of kappa (pairs resampled with replacement, seeded)."""
    if not a:
        return None
    draw_ = random.Random(seed)
    values = []
    for _ in range(resamples):
        picked = [draw_.randrange(len(a)) for _ in a]
        values.append(kappa([a[i] for i in picked], [b[i] for i in picked]))
    values.sort()
    return [
        round(values[int(0.025 * (resamples - 1))], 4),
        round(values[int(round(0.975 * (resamples - 1)))], 4),
    ]


def _agreement(first: list[str], second: list[str]) -> dict:
    binary = ([x == "supported" for x in first], [y == "supported" for y in second])
    return {
        "pairs": len(first),
        "raw": round(sum(x == y for x, y in zip(first, second)) / len(first), 4) if first else None,
        "kappa": round(kappa(first, second), 4),
        "kappa_ci95": kappa_interval(first, second),
        "kappa_binary": round(kappa(*binary), 4),
        "kappa_binary_ci95": kappa_interval(*binary),
    }


def agree(pairs: list[dict], first: dict[str, str], second: dict[str, str]) -> dict:
    result = {"overall": _agreement([first[p["id"]] for p in pairs], [second[p["id"]] for p in pairs])}
    for language in sorted({p["language"] for p in pairs}):
        chosen = [p for p in pairs if p["language"] == language]
        result[language] = _agreement([first[p["id"]] for p in chosen], [second[p["id"]] for p in chosen])
    result["disagreements"] = [p["id"] for p in pairs if first[p["id"]] != second[p["id"]]]
    result["labels"] = {
        "pass_1": dict(Counter(first[p["id"]] for p in pairs)),
        "pass_2": dict(Counter(second[p["id"]] for p in pairs)),
    }
    return result


def export(
    pairs: list[dict], first: dict[str, str], second: dict[str, str], adjudicated: dict[str, str]
) -> list[dict]:
    """The label set: one row per pair in judge_check's shape (unit, passage(s), label, language)
    with its question, purpose, split, provenance and both passes' labels."""
    rows = []
    for pair in pairs:
        agreed = first[pair["id"]] == second[pair["id"]]
        if not agreed and pair["id"] not in adjudicated:
            raise LabellingError(f"pair {pair['id']}: the passes disagree and adjudicated.jsonl has no label")
        rows.append(
            {
                "id": pair["id"],
                "unit": pair["statement"],
                "passages": pair["passages"],
                "label": first[pair["id"]] if agreed else adjudicated[pair["id"]],
                "language": pair["language"],
                "question": pair["question"],
                "purpose": pair["purpose"],
                "split": pair["split"],
                "passes": [first[pair["id"]], second[pair["id"]]],
                "source": {key: pair["source"][key] for key in PROVENANCE},
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation.labelling", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    drawing = commands.add_parser("draw", help="draw pairs from results folders into DIR/pairs.jsonl")
    drawing.add_argument("folders", nargs="+", type=Path)
    drawing.add_argument("--out", type=Path, required=True)
    drawing.add_argument("--n", type=int, default=DEFAULT_N)
    drawing.add_argument("--seed", type=int, default=1)
    drawing.add_argument("--held-out", type=float, default=0.3)
    sheeting = commands.add_parser("sheet", help="DIR/sheet-<pass>.jsonl: what one labeller sees")
    sheeting.add_argument("dir", type=Path)
    sheeting.add_argument("--pass", dest="labelling_pass", type=int, choices=(1, 2), required=True)
    agreeing = commands.add_parser("agree", help="the two passes' agreement, into DIR/agreement.json")
    agreeing.add_argument("dir", type=Path)
    exporting = commands.add_parser("export", help="the label set judge_check reads")
    exporting.add_argument("dir", type=Path)
    exporting.add_argument("--to", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "draw":
            pairs = draw(args.folders, n=args.n, seed=args.seed, held_out=args.held_out)
            args.out.mkdir(parents=True, exist_ok=True)
            _write_jsonl(args.out / "pairs.jsonl", pairs)
            counts = Counter((p["language"], p["purpose"], p["split"]) for p in pairs)
            print(f"{len(pairs)} pairs into {args.out / 'pairs.jsonl'}")
            for (language, purpose, split), count in sorted(counts.items()):
                print(f"  {language:<8}{purpose:<18}{split:<9}{count:>4}")
            return 0
        pairs = _read_jsonl(args.dir / "pairs.jsonl")
        if args.command == "sheet":
            target = args.dir / f"sheet-{args.labelling_pass}.jsonl"
            _write_jsonl(target, sheet(pairs, args.labelling_pass))
            print(f"{len(pairs)} pairs to label in {target}; write labels-{args.labelling_pass}.jsonl")
            return 0
        ids = {p["id"] for p in pairs}
        first = read_labels(args.dir / "labels-1.jsonl", ids)
        second = read_labels(args.dir / "labels-2.jsonl", ids)
        if args.command == "agree":
            result = agree(pairs, first, second)
            # Which files were compared: the protocol records each pass's hash when it is sealed.
            result["files"] = {
                name: hashlib.sha256((args.dir / name).read_bytes()).hexdigest()
                for name in ("pairs.jsonl", "labels-1.jsonl", "labels-2.jsonl")
            }
            (args.dir / "agreement.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
            for scope in [k for k in result if k not in ("disagreements", "labels", "files")]:
                v = result[scope]
                print(
                    f"{scope:<8} {v['pairs']:>4} pairs  raw {v['raw']:.2f}  kappa {v['kappa']:.2f} {v['kappa_ci95']}"
                    f"  binary kappa {v['kappa_binary']:.2f} {v['kappa_binary_ci95']}"
                )
            print(f"{len(result['disagreements'])} disagreement(s): adjudicate them in adjudicated.jsonl")
            return 0
        adjudicated_file = args.dir / "adjudicated.jsonl"
        adjudicated = (
            {r["id"]: r["label"] for r in _read_jsonl(adjudicated_file)} if adjudicated_file.is_file() else {}
        )
        rows = export(pairs, first, second, adjudicated)
        _write_jsonl(args.to, rows)
        print(f"{len(rows)} labelled pairs into {args.to}")
        return 0
    except (LabellingError, OSError, datasets.DatasetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
