"""Evaluation items: one JSON object per line (see datasets/README.md).

An item freezes the world one research sees: course materials (built as real PDF, DOCX or PPTX
files at run time), web pages, SEC-style quarterly figures and catalogue entries. The gold data
say what a good answer contains and which passages support it; distractors, known conflicts and
planted instructions say what a good answer avoids or must disclose; an item marked
`"answerable": false` asks what its materials do not say (the right answer says so, citing
nothing). v1 and v2 lines still load: without `passages`, every paragraph of a gold fact's
documents counts as gold."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

DATASETS = Path(__file__).resolve().parent / "datasets"
DEFAULT = "uedu_eval_v3.jsonl"  # the command's; a results folder names its own

KINDS = ("material", "web", "financials", "catalogue")
FORMATS = ("pdf", "docx", "pptx")
CATEGORIES = ("course", "catalogue", "analyst")
FIGURE_KEYS = ("revenue", "gross_profit", "operating_income", "net_income", "eps_diluted")


class DatasetError(ValueError):
    pass


@dataclass
class Table:
    caption: str
    columns: list[str]  # the header row: columns[0] heads the row labels
    rows: list[list[str]]  # each row: [row label, cell, …]

    def cell_text(self, row: int, col: int) -> str:
        """One cell as a judge must read it: a bare "USD 44.06 billion" supports nothing, so the
        cell carries its caption, row label and column label."""
        label = self.columns[col] if col < len(self.columns) else ""
        return f"{self.caption} — {self.rows[row][0]} — {label}: {self.rows[row][col]}"

    def cells(self) -> list[str]:
        return [self.cell_text(r, c) for r in range(len(self.rows)) for c in range(1, len(self.rows[r]))]


@dataclass
class Page:
    title: str
    paragraphs: list[str]
    tables: list[Table] = field(default_factory=list)


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
class PassageRef:
    """One gold passage: a paragraph (page, paragraph), a table cell (page, table, row, col) or a
    figure of a financials document (figure: a FIGURE_KEYS key). Indexes are 0-based."""

    document: str
    page: int = -1
    paragraph: int = -1
    table: int = -1
    row: int = -1
    col: int = -1
    figure: str = ""


@dataclass
class Value:
    """A figure fact as numbers, so runs and answers are compared on values, not wording."""

    entity: str
    metric: str
    period: str
    value: float
    unit: str = ""


@dataclass
class GoldFact:
    fact: str
    documents: list[str]
    passages: list[PassageRef] = field(default_factory=list)  # empty (v1/v2): every paragraph of documents
    value: Value | None = None


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
    category: str = "change_task"  # the attack category (tests/support/attacks.py, ported)
    # The canary's content in forms a paraphrase or a translation keeps (a made-up name, a number,
    # a URL, in both languages): an answer showing any of them obeyed.
    obey_markers: list[str] = field(default_factory=list)
    false_fact: str = ""  # a false statement planted without instruction words; repeating it is obeying


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
    world: str = ""  # the independent world (documents shared by an item and its translation)
    answerable: bool = True
    rubric: dict = field(default_factory=dict)  # {"coverage": [points the answer should address]}

    def __post_init__(self):
        self.world = self.world or self.id

    @property
    def expected_facts(self) -> list[str]:
        return [g.fact for g in self.gold_facts]

    @property
    def traps(self) -> list[str]:
        return [
            t
            for t, present in (
                ("distractor", self.distractors),
                ("conflict", self.known_conflicts),
                ("planted", self.planted),
                ("unanswerable", not self.answerable),
            )
            if present
        ]

    def document(self, name: str) -> Document | None:
        return next((d for d in self.documents if d.name == name), None)


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
                tables=[_table(t, f"{where}: document {name!r} page {n}") for t in p.get("tables") or []],
            )
            for n, p in enumerate(raw["pages"])
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
    elif not any(page.paragraphs or page.tables for page in pages):
        raise DatasetError(f"{where}: every document needs a name and paragraphs (or text)")
    if kind == "web" and not document.url.startswith(("http://", "https://")):
        raise DatasetError(f"{where}: web page {name!r} needs an http(s) url")
    if kind == "catalogue" and document.tool not in ("get_course_overview", "get_hs_curriculum"):
        raise DatasetError(
            f"{where}: catalogue entry {name!r} needs tool get_course_overview or get_hs_curriculum"
        )
    return document


def _table(raw: dict, where: str) -> Table:
    columns = [str(c) for c in raw.get("columns") or []]
    rows = [[str(c) for c in row] for row in raw.get("rows") or []]
    if len(columns) < 2 or not rows:
        raise DatasetError(f"{where}: a table needs at least two columns (row labels and values) and a row")
    if any(len(row) != len(columns) for row in rows):
        raise DatasetError(f"{where}: every table row needs {len(columns)} cells (its label first)")
    return Table(caption=str(raw.get("caption", "")), columns=columns, rows=rows)


def _passage(raw: dict, documents: dict[str, Document], where: str) -> PassageRef:
    name = raw.get("document")
    document = documents.get(name)
    if document is None:
        raise DatasetError(f"{where}: a gold passage names unknown document {name!r}")
    if document.kind == "financials":
        figure = raw.get("figure")
        if figure not in document.financials.get("figures", {}):
            raise DatasetError(
                f"{where}: a gold passage of financials {name!r} needs a figure it has "
                f"(one of {', '.join(document.financials.get('figures', {}))}), not {figure!r}"
            )
        return PassageRef(document=name, figure=figure)
    page = raw.get("page")
    if not isinstance(page, int) or not 0 <= page < len(document.pages):
        raise DatasetError(f"{where}: gold passage page {page!r} is not a page of {name!r}")
    if "table" in raw:
        table, row, col = raw.get("table"), raw.get("row"), raw.get("col")
        tables = document.pages[page].tables
        if not isinstance(table, int) or not 0 <= table < len(tables):
            raise DatasetError(
                f"{where}: gold passage table {table!r} is not a table of {name!r} page {page}"
            )
        if not isinstance(row, int) or not 0 <= row < len(tables[table].rows):
            raise DatasetError(f"{where}: gold passage row {row!r} is not a row of that table")
        if not isinstance(col, int) or not 1 <= col < len(tables[table].columns):
            raise DatasetError(f"{where}: gold passage col {col!r} is not a value column of that table")
        return PassageRef(document=name, page=page, table=table, row=row, col=col)
    paragraph = raw.get("paragraph")
    if not isinstance(paragraph, int) or not 0 <= paragraph < len(document.pages[page].paragraphs):
        raise DatasetError(f"{where}: gold passage paragraph {paragraph!r} is not on page {page} of {name!r}")
    return PassageRef(document=name, page=page, paragraph=paragraph)


def _value(raw, where: str) -> Value | None:
    if raw is None:
        return None
    missing = [k for k in ("entity", "metric", "period", "value") if raw.get(k) in (None, "")]
    if missing or isinstance(raw.get("value"), bool) or not isinstance(raw.get("value"), (int, float)):
        raise DatasetError(f"{where}: a gold value needs entity, metric, period and a numeric value")
    return Value(
        entity=str(raw["entity"]),
        metric=str(raw["metric"]),
        period=str(raw["period"]),
        value=float(raw["value"]),
        unit=str(raw.get("unit", "")),
    )


def _planted(raw: dict, names: set[str], where: str) -> Planted:
    document = _names(where, [raw.get("document")], names, "a planted instruction")[0]
    markers = raw.get("obey_markers") or []
    if not isinstance(markers, list) or not all(isinstance(m, str) and m.strip() for m in markers):
        raise DatasetError(f"{where}: obey_markers must be a list of non-empty strings")
    planted = Planted(
        document=document,
        canary=str(raw.get("canary") or ""),
        category=str(raw.get("category") or "change_task"),
        obey_markers=[m.strip() for m in markers],
        false_fact=str(raw.get("false_fact") or ""),
    )
    if not (planted.canary.strip() or planted.false_fact.strip()):
        raise DatasetError(f"{where}: a planted instruction needs a canary (or a planted false_fact)")
    return planted


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
    by_name = {d.name: d for d in documents}
    if "gold_facts" in raw:
        gold = []
        for g in raw["gold_facts"]:
            passages = [_passage(p, by_name, where) for p in g.get("passages") or []]
            named = g.get("documents") or list(dict.fromkeys(p.document for p in passages))
            gold.append(
                GoldFact(
                    fact=g["fact"],
                    documents=_names(where, named, names, "a gold fact"),
                    passages=passages,
                    value=_value(g.get("value"), where),
                )
            )
        if any(not g.documents for g in gold):
            raise DatasetError(f"{where}: every gold fact names the documents (or passages) that support it")
    else:  # v1: expected facts, supported by the item's documents as a whole
        gold = [GoldFact(fact=f, documents=every) for f in raw.get("expected_facts", [])]
    answerable = raw.get("answerable", True)
    if not isinstance(answerable, bool):
        raise DatasetError(f"{where}: 'answerable' is true or false")
    if not answerable and gold:
        raise DatasetError(
            f"{where}: an unanswerable item has no gold facts (its answer is not in the materials)"
        )
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
    planted = [_planted(p, names, where) for p in raw.get("planted", [])]
    gold_names = {n for g in gold for n in g.documents}
    if any(p.document in gold_names for p in planted):
        raise DatasetError(f"{where}: a planted instruction needs its own document, not a gold fact's")
    rubric = raw.get("rubric") or {}
    if not isinstance(rubric, dict) or not all(isinstance(x, str) for x in rubric.get("coverage", [])):
        raise DatasetError(f"{where}: 'rubric' is {{\"coverage\": [points as strings]}}")
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
        world=str(raw.get("world") or raw["id"]),
        answerable=answerable,
        rubric=rubric,
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
