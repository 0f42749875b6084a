"""The product uses its dependencies through their public names only: no `from pkg import _name`,
no `pkg._name`, no `pkg._private.module`. A private name can change or vanish in any release of
the package; what the product needs of it is either public or written here (as
research.services.events.shard_of is)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_PRODUCT = {".venv", "tests", "var", "node_modules", "staticfiles", ".git"}


def _product_files() -> list[Path]:
    return [
        path
        for path in sorted(ROOT.rglob("*.py"))
        if not (set(path.relative_to(ROOT).parts) & NOT_PRODUCT) and "site-packages" not in path.parts
    ]


FIRST_PARTY = (
    {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    | {p.stem for p in ROOT.glob("*.py")}
    | {"tests"}
)


def _private(name: str) -> bool:
    # `_uedu…`: the product's own markers set on a dependency's class (uedu_dr/request_limits.py)
    return (
        name.startswith("_")
        and not name.startswith("_uedu")
        and not (name.startswith("__") and name.endswith("__"))
    )


def private_uses(source: str, local_modules: frozenset[str] = frozenset()) -> list[str]:
    """`line: what` for every private name of a third-party package the source uses.
    `local_modules`: modules beside the file (a script's directory is on its import path)."""

    def _third_party(module: str) -> bool:
        top = module.split(".")[0]
        return bool(top) and top not in FIRST_PARTY | local_modules and top not in sys.stdlib_module_names

    tree = ast.parse(source)
    found, modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _third_party(alias.name):
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"{node.lineno}: import {alias.name}")
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _third_party(node.module or ""):
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{node.lineno}: from {node.module} import …")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                else:
                    modules.setdefault(alias.asname or alias.name, f"{node.module}.{alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in modules:
                found.append(f"{node.lineno}: {base.id}.{node.attr} ({modules[base.id]})")
    return sorted(found, key=lambda use: int(use.split(":", 1)[0]))


def test_the_product_uses_no_private_name_of_a_dependency():
    files = _product_files()
    assert len(files) > 100 and any(p.match("research/services/events.py") for p in files)
    found = [
        f"{path.relative_to(ROOT)}:{use}"
        for path in files
        for use in private_uses(
            path.read_text(encoding="utf-8"), frozenset(p.stem for p in path.parent.glob("*.py"))
        )
    ]
    assert found == []


def test_the_scan_sees_every_form_of_a_private_use():
    source = """
import redis
import channels_redis.utils as cru
from channels_redis.utils import _consistent_hash, decode_hosts
from django.db.models import _private_thing
from jsonschema._utils import equal
import os
from agent.tools import _loaded
from research.services.events import _Publisher
from _stack import Stack

redis._compat
cru._consistent_hash("x", 2)
decode_hosts._cache
os._exit
redis.__version__
redis.Redis._uedu_marker = True
"""
    assert private_uses(source, frozenset({"_stack"})) == [
        "4: from channels_redis.utils import _consistent_hash",
        "5: from django.db.models import _private_thing",
        "6: from jsonschema._utils import …",
        "12: redis._compat (redis)",
        "13: cru._consistent_hash (channels_redis.utils)",
        "14: decode_hosts._cache (channels_redis.utils.decode_hosts)",
    ]
