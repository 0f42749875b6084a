"""Shared pieces of the dataset v3 builders: documents, gold passages located by their text,
figure rounding, and the item record (shapes in datasets/README.md).

Gold is marked per passage, and a passage is found by a piece of its own text rather than typed
as an index, so editing a handout cannot silently move the gold onto the wrong paragraph: a
snippet that is missing or matches twice stops the build."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


class BuildError(ValueError):
    pass


def half_up(value: float | int | Decimal, places: int) -> float:
    """Normal rounding (3.215 -> 3.22, 32.15 -> 32.2), which float formatting does not give."""
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(str(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def fixed(value: float | int | Decimal, places: int) -> str:
    """`value` rounded half-up and written with exactly `places` decimals and thousands commas."""
    return f"{Decimal(str(half_up(value, places))):,.{places}f}"


def page(title: str, paragraphs: list[str], tables: list[dict] | None = None) -> dict:
    out = {"title": title, "paragraphs": list(paragraphs)}
    if tables:
        out["tables"] = tables
    return out


def table(caption: str, columns: list[str], rows: list[list[str]]) -> dict:
    if any(len(row) != len(columns) for row in rows):
        raise BuildError(f"table {caption!r}: every row needs one cell per column")
    return {"caption": caption, "columns": list(columns), "rows": [list(r) for r in rows]}


def material(name: str, pages: list[dict]) -> dict:
    return {"name": name, "kind": "material", "format": name.rsplit(".", 1)[-1], "pages": pages}


def web(name: str, url: str, title: str, paragraphs: list[str], reliability: str = "") -> dict:
    out = {"name": name, "kind": "web", "url": url, "title": title, "pages": [page("", paragraphs)]}
    if reliability:
        out["reliability"] = reliability
    return out


def catalogue(name: str, tool: str, title: str, paragraphs: list[str]) -> dict:
    return {"name": name, "kind": "catalogue", "tool": tool, "title": title, "pages": [page("", paragraphs)]}


def at(document: dict, snippet: str) -> dict:
    """The passage {document, page, paragraph} whose paragraph contains `snippet` (exactly one)."""
    hits = [
        {"document": document["name"], "page": p, "paragraph": i}
        for p, pg in enumerate(document.get("pages", []))
        for i, text in enumerate(pg["paragraphs"])
        if snippet in text
    ]
    if len(hits) != 1:
        raise BuildError(f"{document['name']}: {snippet!r} matches {len(hits)} paragraphs, not one")
    return hits[0]


def cell(document: dict, page_index: int, table_index: int, row_label: str, column: str) -> dict:
    """The table cell in the row labelled `row_label` and the column headed `column`."""
    t = document["pages"][page_index]["tables"][table_index]
    rows = [r for r, row in enumerate(t["rows"]) if row[0] == row_label]
    if len(rows) != 1 or column not in t["columns"]:
        raise BuildError(f"{document['name']}: no single cell {row_label!r} / {column!r}")
    return {
        "document": document["name"],
        "page": page_index,
        "table": table_index,
        "row": rows[0],
        "col": t["columns"].index(column),
    }


def figure(document: dict, key: str) -> dict:
    if key not in document["financials"]["figures"]:
        raise BuildError(f"{document['name']} has no figure {key!r}")
    return {"document": document["name"], "figure": key}


def fact(text: str, passages: list[dict], value: dict | None = None) -> dict:
    documents = list(dict.fromkeys(p["document"] for p in passages))
    out = {"fact": text, "documents": documents, "passages": passages}
    if value is not None:
        out["value"] = value
    return out


def item(
    id: str,
    world: str,
    language: str,
    category: str,
    question: str,
    documents: list[dict],
    facts: list[dict],
    *,
    answerable: bool = True,
    distractors: list[str] = (),
    planted: list[dict] = (),
    conflicts: list[dict] = (),
    coverage: list[str] = (),
) -> dict:
    if answerable == (not facts):
        raise BuildError(f"{id}: an answerable item has gold facts, an unanswerable one has none")
    out = {
        "id": id,
        "world": world,
        "language": language,
        "category": category,
        "answerable": answerable,
        "question": question,
        "documents": documents,
        "gold_facts": facts,
    }
    if distractors:
        out["distractors"] = list(distractors)
    if conflicts:
        out["known_conflicts"] = list(conflicts)
    if planted:
        out["planted"] = list(planted)
    if coverage:
        out["rubric"] = {"coverage": list(coverage)}
    return out
