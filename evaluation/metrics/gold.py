"""What in an item is gold, and where a cited source came from.

Gold is marked per passage: a gold fact names the paragraphs, table cells or filing figures that
state it (`GoldFact.passages`). A fact without passages (v1/v2 lines) falls back to every
paragraph of its documents. A table cell is read as "<caption> — <row label> — <column label>:
<value>", so a bare number never stands for a figure of some company and quarter.

A cited source shows a gold passage when its text holds that passage (a chunk of a handout holds
the paragraph, or the paragraph holds the chunk), whatever document it came from: citing what
states the answer is never pollution."""

from __future__ import annotations

import re
import unicodedata

from ..dataset import GoldFact, Item, PassageRef
from ..observed import CitedSource
from ..world import file_name, financial_sources, passages

PREFIX = 80  # characters of a normalised passage that identify it inside a source's text
MIN_CHUNK = 20  # a source this short (normalised) is not taken for a piece of a paragraph


def normalised(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[\W_]+", "", text)


def document_of(source: CitedSource, item: Item) -> str | None:
    """The item document a cited source came from (None: the item does not know it)."""
    for document in item.documents:
        if document.kind == "material" and source.title.startswith(file_name(document) + " "):
            return document.name
        if document.kind == "web" and source.url.rstrip("/") == document.url.rstrip("/"):
            return document.name
        if document.kind == "catalogue" and source.title == (document.title or document.name):
            return document.name
        if document.kind == "financials" and source.title in {s.title for s in financial_sources(document)}:
            return document.name
    return None


def passage_text(item: Item, ref: PassageRef) -> str:
    """A gold passage as the judge reads it."""
    document = item.document(ref.document)
    if ref.figure:  # the product's own rendering of that figure
        return next(s.text for s in financial_sources(document) if s.meta.get("metric") == ref.figure)
    page = document.pages[ref.page]
    if ref.table >= 0:
        return page.tables[ref.table].cell_text(ref.row, ref.col)
    return page.paragraphs[ref.paragraph]


def _marks(item: Item, ref: PassageRef) -> list[str]:
    """What a source's text must hold to show this passage: the paragraph (or figure) itself, or
    for a table cell its row label and its value (files lay tables out their own way)."""
    if ref.table >= 0:
        table = item.document(ref.document).pages[ref.page].tables[ref.table]
        return [table.rows[ref.row][0], table.rows[ref.row][ref.col]]
    return [passage_text(item, ref)]


def fact_passages(item: Item, fact: GoldFact) -> list[str]:
    if fact.passages:
        return [passage_text(item, ref) for ref in fact.passages]
    return [p for name in fact.documents for p in passages(item.document(name))]


def gold_passages(item: Item) -> list[str]:
    """What claim precision judges a unit against: every gold fact's passages, and the statement
    of each side of a known conflict (disclosing a conflict is part of a precise answer)."""
    texts = [p for fact in item.gold_facts for p in fact_passages(item, fact)]
    texts += [side.statement for conflict in item.known_conflicts for side in conflict.sides]
    return list(dict.fromkeys(texts))


def states_fact(fact: GoldFact, source: CitedSource, document: str | None, item: Item) -> bool:
    """Does this source hold one of the fact's passages (or come from one of its documents, for a
    fact marked per document)?"""
    if not fact.passages:
        return document in fact.documents
    text = normalised(source.passage or "")
    for ref in fact.passages:
        marks = [normalised(m) for m in _marks(item, ref)]
        if text and all(m[:PREFIX] in text for m in marks if m):
            return True
        if len(text) >= MIN_CHUNK and len(marks) == 1 and text in marks[0]:
            return True
    return False


def shows_gold(source: CitedSource, document: str | None, item: Item) -> bool:
    return any(states_fact(fact, source, document, item) for fact in item.gold_facts)
