"""No import cycle inside any app, counting the imports inside functions.

A cycle broken by an import inside a function is still a cycle to whoever reads the code: "what
does this module depend on?" has no bottom. So this reads every module of each app with `ast`,
collects every import wherever it is (module level, function, class, a TYPE_CHECKING block), and
fails on any cycle between modules of one app.

Why not import-linter: its graph (grimp) does count imports inside functions, but its only
cycle contract, `acyclic_siblings`, merges each package into one node, so it also refuses
package-level loops that are no module cycle (research.selectors → research.services.settlement
while research.services.* → research.selectors). .importlinter keeps the layers; this test keeps
the modules acyclic. Services queue Celery
jobs by name (uedu_dr.jobs) so that tasks → services stays the only direction."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = (
    "uedu_dr",
    "channels_app",
    "materials",
    "catalogue",
    "quotas",
    "agent",
    "research",
    "chat",
    "governance",
    "evaluation",
)


def modules_of(package_dir: Path) -> dict[str, Path]:
    """Dotted name → file, for every module of the package under `package_dir`."""
    base = package_dir.parent
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that module `name` imports, anywhere in its body."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                source = ".".join(anchor + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                targets.add(submodule if submodule in known else source)
    resolved = set()
    for target in targets:
        # `import a.b.c` names a module of ours or something inside one: take the longest known prefix.
        parts = target.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts and ".".join(parts) != name:
            resolved.add(".".join(parts))
    return resolved


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    modules = modules_of(package_dir)
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(graph: dict[str, set[str]], component: list[str]) -> str:
    members = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]
    return "; ".join(edges)


@pytest.mark.parametrize("app", APPS)
def test_no_import_cycle_inside_the_app(app):
    graph = import_graph(ROOT / app)
    assert graph, f"no modules found for {app}"
    found = cycles(graph)
    assert not found, f"import cycles in {app} (function-level imports count): " + " | ".join(
        describe(graph, c) for c in found
    )


def test_the_check_sees_a_cycle_made_by_a_function_level_import(tmp_path):
    """The check itself can fail: a cycle closed only inside a function, and a relative one."""
    package = tmp_path / "shop"
    (package / "services").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "services" / "__init__.py").write_text("")
    (package / "tasks.py").write_text("from shop.services import orders\n")
    (package / "services" / "orders.py").write_text(
        "def enqueue(order_id):\n    from shop.tasks import send\n    send(order_id)\n"
    )
    (package / "services" / "a.py").write_text("from . import b\n")
    (package / "services" / "b.py").write_text("def f():\n    from .a import thing\n")
    graph = import_graph(package)
    assert graph["shop.tasks"] == {"shop.services.orders"}
    assert cycles(graph) == [["shop.services.a", "shop.services.b"], ["shop.services.orders", "shop.tasks"]]


def test_every_job_queued_by_name_is_a_registered_task(db):
    """uedu_dr.jobs names the tasks services queue; each must be the name a task is registered
    under (a misspelt name would go to the broker and never be run)."""
    from uedu_dr import jobs
    from uedu_dr.celery import app

    names = [value for key, value in vars(jobs).items() if key.isupper() and isinstance(value, str)]
    assert names
    missing = [name for name in names if name not in app.tasks]
    assert not missing, f"queued by name but no task is registered under it: {missing}"
