"""Writes uedu_eval_v2.jsonl from the three parts of the set (course, catalogue, analyst).

    python -m evaluation.datasets.build_v2

The texts are written in these modules; the JSONL is what the evaluation reads (and what a
reviewer diffs), so both are committed. The PDF, DOCX and PPTX files are built at run time."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.datasets import build_v2_analyst, build_v2_catalogue, build_v2_course

OUT = Path(__file__).resolve().parent / "uedu_eval_v2.jsonl"


def build() -> list[dict]:
    return build_v2_course.items() + build_v2_catalogue.items() + build_v2_analyst.items()


def main() -> None:
    items = build()
    OUT.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    print(f"{len(items)} items written to {OUT}")


if __name__ == "__main__":
    main()
