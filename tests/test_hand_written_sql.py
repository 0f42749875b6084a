"""The hand-written SQL of the hot write paths names its columns by hand (research/services/runner.py,
events.py, credibility.py, materials/term_shares.py, materials/bilingual.py). Its column lists are compared here with
the models' concrete fields, so a new field (a new NOT NULL column above all, which such an INSERT
would leave NULL) fails this test, not a research at run time."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest
from django.apps import apps

ROOT = Path(__file__).resolve().parents[1]
# Every module with raw INSERT or UPDATE statements of a model's table.
MODULES = [
    "research.services.runner",
    "research.services.events",
    "research.services.credibility",
    "materials.term_shares",
    "materials.bilingual",
]
# The tables those statements must be found for: the scan cannot pass by finding nothing.
EXPECTED_INSERTS = {
    "deep_research_steps",
    "deep_research_transcript",
    "deep_research_events",
    "deep_research_source_stats",
    "deep_research_source_reports",
    "channels_app_channeltermshare",
}
EXPECTED_UPDATES = {"deep_research_steps", "deep_research_tasks", "channels_app_channel"}
# Columns an INSERT leaves out on purpose (their model default is NULL or the row's own id). A
# new field goes into the statement or here, with its reason.
NOT_INSERTED: dict[str, set[str]] = {}

_INSERT = re.compile(r"\bINSERT\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.I)
_UPDATE = re.compile(r"\bUPDATE\s+(\w+)\s+SET\s+(.*)", re.I | re.S)
_END_OF_SET = re.compile(r"\s(FROM|WHERE|RETURNING)\b", re.I)


def _strings(module_name: str) -> list[str]:
    """The module's string literals (adjacent ones are one literal); an f-string's `{NAME}` is the
    module's value of NAME when it has one."""
    module = importlib.import_module(module_name)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(value.value)
                elif isinstance(value.value, ast.Name) and isinstance(
                    getattr(module, value.value.id, None), str
                ):
                    parts.append(getattr(module, value.value.id))
                else:
                    parts.append("{}")
            out.append("".join(parts))
    return out


def _top_level_assignments(set_clause: str) -> list[str]:
    """`a = %s, b = jsonb_set(b, '{x}', (SELECT … FROM …)) FROM next …` -> ["a", "b"]: commas and
    keywords inside brackets or quotes neither split nor end the clause."""
    columns, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(set_clause + ","):
        if char == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and (char == "," or _END_OF_SET.match(set_clause, i)):
            columns.append(set_clause[start:i].split("=", 1)[0].strip())
            if char != ",":
                break
            start = i + 1
    return columns


def _statements():
    inserts, updates = [], []
    for module_name in MODULES:
        for text in _strings(module_name):
            inserts += [
                (module_name, t, [c.strip() for c in cols.split(",")]) for t, cols in _INSERT.findall(text)
            ]
            updates += [(module_name, t, _top_level_assignments(s)) for t, s in _UPDATE.findall(text)]
    return inserts, updates


def _columns(table: str) -> tuple[dict, str]:
    model = next((m for m in apps.get_models() if m._meta.db_table == table), None)
    assert model is not None, f"{table} is no model's table"
    return {f.column: f for f in model._meta.concrete_fields}, model.__name__


def test_the_scan_finds_the_hot_paths_statements():
    inserts, updates = _statements()
    assert {t for _, t, _ in inserts} == EXPECTED_INSERTS
    assert {t for _, t, _ in updates} >= EXPECTED_UPDATES


def test_every_insert_names_every_column_of_its_model():
    inserts, _ = _statements()
    for module_name, table, listed in inserts:
        fields, model = _columns(table)
        unknown = set(listed) - set(fields)
        assert not unknown, (
            f"{module_name}: INSERT INTO {table} names columns {model} does not have: {unknown}"
        )
        expected = {c for c, f in fields.items() if not f.primary_key} - NOT_INSERTED.get(table, set())
        missing = expected - set(listed)
        assert not missing, (
            f"{module_name}: INSERT INTO {table} leaves out {sorted(missing)} of {model}: add them to the "
            "statement (a NOT NULL column left out fails every insert at run time)"
        )


def test_every_update_sets_columns_its_model_has():
    _, updates = _statements()
    for module_name, table, assigned in updates:
        fields, model = _columns(table)
        assert assigned and set(assigned) <= set(fields), (
            f"{module_name}: UPDATE {table} SET {assigned} ({model})"
        )


@pytest.mark.parametrize(
    "statement, problem",
    [
        ("INSERT INTO deep_research_events (task_id, seq, type, created_at) SELECT 1", "leaves out ['data']"),
        ("INSERT INTO deep_research_events (task_id, seq, type, data, kind, created_at)", "does not have"),
    ],
)
def test_the_check_catches_a_column_list_that_drifted_from_its_model(monkeypatch, statement, problem):
    monkeypatch.setattr(sys.modules[__name__], "_strings", lambda module_name: [statement])
    with pytest.raises(AssertionError, match=re.escape(problem)):
        test_every_insert_names_every_column_of_its_model()
