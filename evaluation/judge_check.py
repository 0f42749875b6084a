"""How far the judge agrees with people: its verdicts on a hand-labelled set of unit–passage pairs
(datasets/judge_labels_v1.jsonl), as accuracy and Cohen's kappa per language and overall.

The judge decides entailment (judge.py): "supported" is entailed, "partly" and "not_supported"
are not (its prompt says a statement that only partly follows is false). Agreement is measured
on that decision; the confusion matrix keeps the three labels apart, so a lenient judge that
accepts partial support shows in the "partly" row. A statement the judge left out of its reply
has no verdict and counts as a disagreement."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from .dataset import DATASETS
from .judge import Judge

LABELS_FILE = DATASETS / "judge_labels_v1.jsonl"
LABELS = ("supported", "partly", "not_supported")
LANGUAGES = ("en", "zh-hant")


class LabelsError(ValueError):
    pass


@dataclass(frozen=True)
class Labelled:
    unit: str
    passage: str
    label: str
    language: str

    @property
    def entailed(self) -> bool:
        return self.label == "supported"


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_labels(path: Path = LABELS_FILE) -> list[Labelled]:
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            row = Labelled(
                unit=data["unit"], passage=data["passage"], label=data["label"], language=data["language"]
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise LabelsError(f"{path}:{number}: not a labelled pair ({exc})") from None
        if row.label not in LABELS or row.language not in LANGUAGES or not row.unit or not row.passage:
            raise LabelsError(f"{path}:{number}: label must be one of {LABELS}, language one of {LANGUAGES}")
        rows.append(row)
    if not rows:
        raise LabelsError(f"{path}: no labelled pairs")
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
        "confusion": confusion,
    }


def run_check(judge: Judge, *, min_kappa: float, path: Path = LABELS_FILE) -> dict:
    """The judge's verdict on every labelled pair, its agreement per language and overall, and
    whether every language reaches `min_kappa`."""
    rows = load_labels(path)
    said = judge.verdicts([(r.unit, [r.passage]) for r in rows])
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
        "min_kappa": min_kappa,
        "by_language": by_language,
        "overall": agreement(rows, said),
        "passed": not failing,
        "failing": failing,
        "disagreements": [
            {"language": r.language, "label": r.label, "unit": r.unit, "verdict": s}
            for r, s in zip(rows, said)
            if r.entailed != s
        ],
    }


def describe(check: dict) -> list[str]:
    """The check as the operator reads it in the terminal."""
    lines = [f"judge check on {check['overall']['pairs']} labelled pairs ({Path(check['labels']).name}):"]
    lines.append(f"{'':<10}{'pairs':>7}{'accuracy':>10}{'kappa':>8}")
    for name, values in [*check["by_language"].items(), ("overall", check["overall"])]:
        lines.append(f"{name:<10}{values['pairs']:>7}{values['accuracy']:>10.2f}{values['kappa']:>8.2f}")
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
