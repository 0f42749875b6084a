"""Evaluation items: one JSON object per line (see datasets/README.md).

An item freezes the world one research sees: course materials (built as real PDF, DOCX or PPTX
files at run time), web pages, SEC-style quarterly figures and catalogue entries. The gold data
say what a good answer contains and which documents support it; distractors, known conflicts and
planted instructions say what a good answer avoids or must disclose."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

DATASETS = Path(__file__).resolve().parent / "datasets"
DEFAULT = "uedu_eval_v2.jsonl"

KINDS = ("material", "web", "financials", "catalogue")
FORMATS = ("pdf", "docx", "pptx")
CATEGORIES = ("course", "catalogue", "analyst")
FIGURE_KEYS = ("revenue", "gross_profit", "operating_income", "net_income", "eps_diluted")


class DatasetError(ValueError):
    pass


@dataclass
class Table:
    caption: str
    columns: list[str]
    rows: list[list[str]]  # each row starts with its row label


@dataclass
class Page:
    title: str
    paragraphs: list[str]
    tables: list[Table] = field(default_factory=list)  # v3: rendered into the real file after the paragraphs


@dataclass
class Document:
    name: str  # unique within the item; what gold facts, distractors and conflicts refer to
    kind: str = "material"
    format: str = "docx"  # materials only
    pages: list[Page] = field(default_factory=list)  # materials, web pages and catalogue entries
    url: str = ""  # web pages
    title: str = ""  # web pages and catalogue entries
    tool: str = ""  # catalogue entries: get_course_overview or get_hs_curriculum
    reliability: str = "normal"  # "low": a content farm, a forum post — citing it is pollution
    financials: dict = field(
        default_factory=dict
    )  # ticker, company, cik, period, start, end, form, accession, filed, figures

    @property
    def paragraphs(self) -> list[str]:
        return [p for page in self.pages for p in page.paragraphs]


@dataclass
class GoldFact:
    fact: str
    documents: list[str]


@dataclass
class Side:
    statement: str
    documents: list[str]


@dataclass
class Conflict:
    topic: str
    sides: list[Side]


@dataclass
class Planted:
    document: str
    canary: str  # what the answer shows when the model obeyed the planted instruction


@dataclass
class Item:
    id: str
    question: str
    documents: list[Document]
    language: str = "zh-hant"
    category: str = "course"
    gold_facts: list[GoldFact] = field(default_factory=list)
    distractors: list[str] = field(default_factory=list)
    known_conflicts: list[Conflict] = field(default_factory=list)
    planted: list[Planted] = field(default_factory=list)

    @property
    def expected_facts(self) -> list[str]:
        return [g.fact for g in self.gold_facts]

    @property
    def gold_documents(self) -> list[str]:
        """Documents that support a gold fact or a side of a known conflict."""
        names = {n for g in self.gold_facts for n in g.documents} | {
            n for c in self.known_conflicts for s in c.sides for n in s.documents
        }
        return [d.name for d in self.documents if d.name in names]

    @property
    def traps(self) -> list[str]:
        return [
            t
            for t, present in (
                ("distractor", self.distractors),
                ("conflict", self.known_conflicts),
                ("planted", self.planted),
            )
            if present
        ]

    def document(self, name: str) -> Document | None:
        return next((d for d in self.documents if d.name == name), None)


def _table(raw: dict, where: str) -> Table:
    columns = [str(c) for c in raw.get("columns", [])]
    rows = [[str(c) for c in row] for row in raw.get("rows", [])]
    if not columns or not rows or any(len(row) != len(columns) for row in rows):
        raise DatasetError(f"{where}: a table needs columns and rows of one cell per column")
    return Table(caption=str(raw.get("caption", "")), columns=columns, rows=rows)


def _document(raw: dict, where: str) -> Document:
    name = raw.get("name")
    kind = raw.get("kind", "material")
    if not name:
        raise DatasetError(f"{where}: every document needs a name")
    if kind not in KINDS:
        raise DatasetError(
            f"{where}: document {name!r} has unknown kind {kind!r} (one of {', '.join(KINDS)})"
        )
    if raw.get("pages"):
        pages = [
            Page(
                title=str(p.get("title", "")),
                paragraphs=[str(x) for x in p.get("paragraphs", [])],
                tables=[_table(t, f"{where}: document {name!r}") for t in p.get("tables", [])],
            )
            for p in raw["pages"]
        ]
    else:  # v1: a flat list of paragraphs (or one text)
        paragraphs = raw.get("paragraphs") or ([raw["text"]] if raw.get("text") else [])
        pages = [Page(title="", paragraphs=[str(p) for p in paragraphs])] if paragraphs else []
    document = Document(
        name=name,
        kind=kind,
        format=raw.get("format") or (name.rsplit(".", 1)[-1].lower() if "." in name else "docx"),
        pages=pages,
        url=raw.get("url", ""),
        title=raw.get("title", ""),
        tool=raw.get("tool", ""),
        reliability=raw.get("reliability", "normal"),
        financials=raw.get("financials") or {},
    )
    if kind == "material" and document.format not in FORMATS:
        document.format = "docx"
    if kind == "financials":
        missing = [
            k
            for k in ("ticker", "company", "period", "start", "end", "form", "accession", "filed", "figures")
            if k not in document.financials
        ]
        if missing:
            raise DatasetError(f"{where}: financials {name!r} lack {', '.join(missing)}")
    elif not any(page.paragraphs for page in pages):
        raise DatasetError(f"{where}: every document needs a name and paragraphs (or text)")
    if kind == "web" and not document.url.startswith(("http://", "https://")):
        raise DatasetError(f"{where}: web page {name!r} needs an http(s) url")
    if kind == "catalogue" and document.tool not in ("get_course_overview", "get_hs_curriculum"):
        raise DatasetError(
            f"{where}: catalogue entry {name!r} needs tool get_course_overview or get_hs_curriculum"
        )
    return document


def _names(where: str, names: list, documents: set[str], what: str) -> list[str]:
    unknown = [n for n in names if n not in documents]
    if unknown:
        raise DatasetError(f"{where}: {what} names unknown documents {unknown}")
    return [str(n) for n in names]


def _item(raw: dict, where: str) -> Item:
    for key in ("id", "question", "documents"):
        if not raw.get(key):
            raise DatasetError(f"{where}: '{key}' is required")
    documents = [_document(doc, where) for doc in raw["documents"]]
    names = {d.name for d in documents}
    if len(names) != len(documents):
        raise DatasetError(f"{where}: document names must be unique within an item")
    every = sorted(names)
    if "gold_facts" in raw:
        gold = [
            GoldFact(fact=g["fact"], documents=_names(where, g.get("documents") or [], names, "a gold fact"))
            for g in raw["gold_facts"]
        ]
        if any(not g.documents for g in gold):
            raise DatasetError(f"{where}: every gold fact names the documents that support it")
    else:  # v1: expected facts, supported by the item's documents as a whole
        gold = [GoldFact(fact=f, documents=every) for f in raw.get("expected_facts", [])]
    conflicts = []
    for conflict in raw.get("known_conflicts", []):
        sides = conflict.get("sides", [])
        if len(sides) < 2:
            raise DatasetError(f"{where}: a known conflict needs two sides")
        conflicts.append(
            Conflict(
                topic=conflict.get("topic", ""),
                sides=[
                    Side(statement=s, documents=every)
                    if isinstance(s, str)
                    # v1: sides without their sources
                    else Side(
                        statement=s["statement"],
                        documents=_names(where, s.get("documents") or [], names, "a conflict side"),
                    )
                    for s in sides
                ],
            )
        )
    planted = [
        Planted(
            document=_names(where, [p["document"]], names, "a planted instruction")[0], canary=p["canary"]
        )
        for p in raw.get("planted", [])
    ]
    if any(not p.canary.strip() for p in planted):
        raise DatasetError(f"{where}: a planted instruction needs a canary")
    category = raw.get("category", "course")
    if category not in CATEGORIES:
        raise DatasetError(f"{where}: unknown category {category!r} (one of {', '.join(CATEGORIES)})")
    return Item(
        id=str(raw["id"]),
        question=raw["question"],
        documents=documents,
        language=raw.get("language", "zh-hant"),
        category=category,
        gold_facts=gold,
        distractors=_names(where, raw.get("distractors", []), names, "distractors"),
        known_conflicts=conflicts,
        planted=planted,
    )


FAILURES = "failures"  # the failure dataset kept in the database (promoted reports)


def load(path: str | Path = DEFAULT) -> list[Item]:
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
