"""How far the judge agrees with people: its verdicts on a labelled set of statement–passage pairs
(datasets/judge_labels_v1.jsonl by default, written by hand; or a set drawn from real output by
evaluation/labelling.py, `--labels FILE [--labels-split held_out]`), as accuracy and Cohen's kappa
per language and overall, each kappa with a bootstrap 95 % interval, beside the always-"no"
baseline (a judge that says "not entailed" to everything: its accuracy is the share of pairs not
labelled supported, its kappa 0).

A pair is a statement and one passage (v1: `"passage"`) or several (a drawn set: `"passages"`),
asked as the scoring asks it: an entailment question, or a rubric point against an answer's
sentences (`"question": "coverage"`, judge.COVERAGE_PROMPT).

The judge decides entailment (judge.py): "supported" is entailed, "partly" and "not_supported"
are not (its prompt says a statement that only partly follows is false). Agreement is measured
on that decision; the confusion matrix keeps the three labels apart, so a lenient judge that
accepts partial support shows in the "partly" row. A statement the judge left out of its reply
has no verdict and counts as a disagreement."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from .dataset import DATASETS
from .judge import Judge

LABELS_FILE = DATASETS / "judge_labels_v1.jsonl"
LABELS = ("supported", "partly", "not_supported")
LANGUAGES = ("en", "zh-hant")


class LabelsError(ValueError):
    pass


QUESTIONS = ("entailment", "coverage")
RESAMPLES = 1000
SEED = 20261203


@dataclass(frozen=True)
class Labelled:
    unit: str
    passages: tuple[str, ...]
    label: str
    language: str
    question: str = "entailment"
    split: str = ""
    purpose: str = ""
    source: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def passage(self) -> str:
        return self.passages[0] if self.passages else ""

    @property
    def entailed(self) -> bool:
        return self.label == "supported"


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_labels(path: Path = LABELS_FILE, split: str | None = None) -> list[Labelled]:
    """The labelled pairs of a file (v1 or a drawn set), only those of `split` when given."""
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            passages = data["passages"] if "passages" in data else [data["passage"]]
            row = Labelled(
                unit=data["unit"],
                passages=tuple(str(p) for p in passages),
                label=data["label"],
                language=data["language"],
                question=data.get("question", "entailment"),
                split=data.get("split", ""),
                purpose=data.get("purpose", ""),
                source=data.get("source") or {},
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise LabelsError(f"{path}:{number}: not a labelled pair ({exc})") from None
        if (
            row.label not in LABELS
            or row.language not in LANGUAGES
            or row.question not in QUESTIONS
            or not row.unit
            or not any(p.strip() for p in row.passages)
        ):
            raise LabelsError(
                f"{path}:{number}: label must be one of {LABELS}, language one of {LANGUAGES}, "
                f"question one of {QUESTIONS}, with a statement and a passage"
            )
        if split is None or row.split == split:
            rows.append(row)
    if not rows:
        raise LabelsError(f"{path}: no labelled pairs" + (f" in split {split!r}" if split else ""))
    return rows


def cohen_kappa(gold: list[bool], said: list[bool | None]) -> float:
    """Cohen's kappa of two raters over the categories entailed / not entailed / no verdict (the
    gold never says "no verdict", so a missing verdict is always a disagreement)."""
    n = len(gold)
    if not n:
        return 0.0
    observed = sum(g == s for g, s in zip(gold, said)) / n
    expected = sum((gold.count(c) / n) * (said.count(c) / n) for c in (True, False, None))
    if expected >= 1.0:  # both raters gave one same category throughout: agreement is not measurable
        return 1.0 if observed == 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


def kappa_interval(gold: list[bool], said: list[bool | None]) -> list[float] | None:
    """Bootstrap 95 % interval of Cohen's kappa (pairs resampled with replacement, seeded)."""
    if not gold:
        return None
    draw = random.Random(SEED)
    values = []
    for _ in range(RESAMPLES):
        picked = [draw.randrange(len(gold)) for _ in gold]
        values.append(cohen_kappa([gold[i] for i in picked], [said[i] for i in picked]))
    values.sort()
    return [
        round(values[int(0.025 * (RESAMPLES - 1))], 4),
        round(values[int(round(0.975 * (RESAMPLES - 1)))], 4),
    ]


def agreement(rows: list[Labelled], said: list[bool | None]) -> dict:
    gold = [r.entailed for r in rows]
    confusion = {label: {"entailed": 0, "not_entailed": 0, "no_verdict": 0} for label in LABELS}
    for row, verdict in zip(rows, said):
        key = "no_verdict" if verdict is None else ("entailed" if verdict else "not_entailed")
        confusion[row.label][key] += 1
    return {
        "pairs": len(rows),
        "accuracy": round(sum(g == s for g, s in zip(gold, said)) / len(rows), 4) if rows else 0.0,
        "kappa": round(cohen_kappa(gold, said), 4),
        "kappa_ci95": kappa_interval(gold, said),
        # A judge that says "not entailed" to everything: what accuracy alone would reward.
        "always_no_accuracy": round(gold.count(False) / len(rows), 4) if rows else 0.0,
        "confusion": confusion,
    }


def _verdicts(judge: Judge, rows: list[Labelled]) -> list[bool | None]:
    said: list[bool | None] = [None] * len(rows)
    for question in QUESTIONS:
        at = [i for i, r in enumerate(rows) if r.question == question]
        if at:
            got = judge.verdicts([(rows[i].unit, list(rows[i].passages)) for i in at], question=question)
            for i, verdict in zip(at, got):
                said[i] = verdict
    return said


def run_check(judge: Judge, *, min_kappa: float, path: Path = LABELS_FILE, split: str | None = None) -> dict:
    """The judge's verdict on every labelled pair (of `split`, when given), its agreement per
    language and overall, and whether every language reaches `min_kappa`."""
    rows = load_labels(path, split)
    said = _verdicts(judge, rows)
    by_language = {
        language: agreement(
            [r for r in rows if r.language == language],
            [s for r, s in zip(rows, said) if r.language == language],
        )
        for language in LANGUAGES
        if any(r.language == language for r in rows)
    }
    failing = [language for language, values in by_language.items() if values["kappa"] < min_kappa]
    return {
        "labels": str(path),
        "labels_sha256": sha256(path),
        "split": split or "",
        "by_purpose": {
            purpose: agreement(
                [r for r in rows if r.purpose == purpose],
                [s for r, s in zip(rows, said) if r.purpose == purpose],
            )
            for purpose in sorted({r.purpose for r in rows if r.purpose})
        },
        "min_kappa": min_kappa,
        "by_language": by_language,
        "overall": agreement(rows, said),
        "passed": not failing,
        "failing": failing,
        "disagreements": [
            {"language": r.language, "label": r.label, "unit": r.unit, "verdict": s, "purpose": r.purpose}
            for r, s in zip(rows, said)
            if r.entailed != s
        ],
    }


def describe(check: dict) -> list[str]:
    """The check as the operator reads it in the terminal."""
    split = f", split {check['split']}" if check.get("split") else ""
    lines = [
        f"judge check on {check['overall']['pairs']} labelled pairs ({Path(check['labels']).name}{split}):"
    ]
    lines.append(
        f"{'':<10}{'pairs':>7}{'accuracy':>10}{'kappa':>8}{'95% interval':>18}{'always-no acc.':>16}"
    )
    for name, values in [*check["by_language"].items(), ("overall", check["overall"])]:
        low, high = values.get("kappa_ci95") or (None, None)
        ci = "–" if low is None else f"[{low:.2f}, {high:.2f}]"
        lines.append(
            f"{name:<10}{values['pairs']:>7}{values['accuracy']:>10.2f}{values['kappa']:>8.2f}{ci:>18}"
            f"{values.get('always_no_accuracy', 0.0):>16.2f}"
        )
    for purpose, values in (check.get("by_purpose") or {}).items():
        lines.append(
            f"  {purpose:<18}{values['pairs']:>5} pairs  accuracy {values['accuracy']:.2f}  kappa {values['kappa']:.2f}"
        )
    lines.append("confusion (label × verdict): entailed / not entailed / no verdict")
    for label, counts in check["overall"]["confusion"].items():
        lines.append(
            f"  {label:<14}{counts['entailed']:>5}{counts['not_entailed']:>5}{counts['no_verdict']:>5}"
        )
    lines.append(
        f"required: kappa ≥ {check['min_kappa']:.2f} in every language — "
        + ("passed" if check["passed"] else f"FAILED in {', '.join(check['failing'])}")
    )
    return lines
