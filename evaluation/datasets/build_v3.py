"""Writes uedu_eval_v3.jsonl from its parts (course, cross-language course, catalogue, analyst; planted passages in
build_v3_attacks.py, shared pieces in build_v3_common.py).

    python -m evaluation.datasets.build_v3

The output is deterministic (no clock, no randomness): rebuilding an unchanged set gives the same
bytes, so a reviewer diffs the JSONL. The PDF, DOCX and PPTX files are built at run time."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.datasets import build_v3_analyst, build_v3_bilingual, build_v3_catalogue, build_v3_course

OUT = Path(__file__).resolve().parent / "uedu_eval_v3.jsonl"


def build() -> list[dict]:
    items = (
        build_v3_course.items()
        + build_v3_bilingual.items()
        + build_v3_catalogue.items()
        + build_v3_analyst.items()
    )
    ids = [i["id"] for i in items]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate item ids in dataset v3")
    return items


def main() -> None:
    items = build()
    OUT.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    worlds = {i["world"] for i in items}
    print(f"{len(items)} items in {len(worlds)} worlds written to {OUT}")


if __name__ == "__main__":
    main()
