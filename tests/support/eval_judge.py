"""Scripted judges for the evaluation tests, installed on the scripted OpenAI-compatible server as
its "entailment" role, and a reader of results folders.

- `install(llm, "labels")`: a careful judge. On a pair of the labelled set
  (evaluation/datasets/judge_labels_v1.jsonl) it answers as the people who labelled it did
  (entailed = "supported"), except one pair in ERROR_EVERY where it errs, so its agreement is high
  but not perfect; on anything else it answers as the scripted server does (word overlap).
- `install(llm, "agree")`: a lenient judge that says every statement is entailed.
- `install(llm, "silent")`: a judge whose replies leave every statement out."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from evaluation.judge_check import load_labels
from tests.support.scripted_llm import _user_text, overlap_entails

ERROR_EVERY = 15


def _labelled() -> dict[tuple[str, str], bool]:
    return {(row.unit, row.passage): row.entailed for row in load_labels()}


def _errs(statement: str) -> bool:
    return int(hashlib.sha256(statement.encode()).hexdigest(), 16) % ERROR_EVERY == 0


def install(llm, mode: str = "labels") -> None:
    labelled = _labelled()

    def judge(body: dict) -> dict:
        payload = re.search(r"<observations>\n(.*)\n</observations>", _user_text(body), re.S)
        items = json.loads(payload.group(1)) if payload else []
        results = []
        for item in items:
            if mode == "silent":
                continue
            if mode == "agree":
                entailed = True
            elif len(item["passages"]) == 1 and (item["statement"], item["passages"][0]) in labelled:
                entailed = labelled[(item["statement"], item["passages"][0])] != _errs(item["statement"])
            else:
                entailed = overlap_entails(item["statement"], item["passages"])
            results.append({"id": item["id"], "entailed": entailed})
        return {"content": json.dumps({"results": results})}

    llm.on("entailment", judge)


def results_folders(root: Path) -> list[Path]:
    return sorted(p for p in Path(root).iterdir() if (p / "manifest.json").is_file())


def read_results(folder: Path) -> dict:
    """A results folder as one dict: the summary, the manifest and every item file in order."""
    folder = Path(folder)
    if not (folder / "manifest.json").is_file():  # a root holding one results folder
        (folder,) = results_folders(folder)
    summary_file = folder / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else {}
    items = [json.loads(p.read_text()) for p in sorted((folder / "items").glob("*.json"))]
    return {
        **summary,
        "folder": folder,
        "manifest": json.loads((folder / "manifest.json").read_text()),
        "items": items,
    }
