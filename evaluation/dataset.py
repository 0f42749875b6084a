"""Evaluation items: one JSON object per line (see datasets/README.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

DATASETS = Path(__file__).resolve().parent / "datasets"


class DatasetError(ValueError):
    pass


@dataclass
class Document:
    name: str
    paragraphs: list[str]


@dataclass
class Item:
    id: str
    question: str
    documents: list[Document]
    language: str = "zh-hant"
    expected_facts: list[str] = field(default_factory=list)
    known_conflicts: list[dict] = field(default_factory=list)  # {"topic", "sides": [a, b]}


def _item(raw: dict, where: str) -> Item:
    for key in ("id", "question", "documents"):
        if not raw.get(key):
            raise DatasetError(f"{where}: '{key}' is required")
    documents = []
    for doc in raw["documents"]:
        paragraphs = doc.get("paragraphs") or ([doc["text"]] if doc.get("text") else [])
        if not doc.get("name") or not paragraphs:
            raise DatasetError(f"{where}: every document needs a name and paragraphs (or text)")
        documents.append(Document(name=doc["name"], paragraphs=[str(p) for p in paragraphs]))
    for conflict in raw.get("known_conflicts", []):
        if len(conflict.get("sides", [])) < 2:
            raise DatasetError(f"{where}: a known conflict needs two sides")
    return Item(id=str(raw["id"]), question=raw["question"], documents=documents, language=raw.get("language", "zh-hant"),
                expected_facts=list(raw.get("expected_facts", [])), known_conflicts=list(raw.get("known_conflicts", [])))


FAILURES = "failures"  # the failure dataset kept in the database (promoted reports)


def load(path: str | Path) -> list[Item]:
    if str(path) == FAILURES:
        from research.services.feedback import failure_items

        items = [_item(raw, f"failure dataset {raw['id']}") for raw in failure_items()]
        if not items:
            raise DatasetError("the failure dataset is empty: promote reported answers in the admin first")
        return items
    path = Path(path)
    if not path.exists() and (DATASETS / path).exists():
        path = DATASETS / path
    items, seen = [], set()
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"{path}:{number}: not JSON ({exc})") from None
            item = _item(raw, f"{path}:{number}")
            if item.id in seen:
                raise DatasetError(f"{path}:{number}: duplicate id {item.id!r}")
            seen.add(item.id)
            items.append(item)
    if not items:
        raise DatasetError(f"{path}: no items")
    return items
