"""docs/contributing.md's recipes, held against the code: each names files that exist, no more of
them than its kind allows (a tool 2; an event, a permission, a setting 3), and the registries it
names are where it says, read by the places it says need no change."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest

from agent.engine import events, report_types
from agent.tools import REGISTRY, load
from channels_app import access, roles
from research.management.commands import deep_research
from research.ui_strings import js_strings
from tests.support.stack import ROOT

PAGE = ROOT / "docs" / "contributing.md"
LIMITS = {"a tool": 2, "an event": 3, "a permission": 3, "a setting": 3, "a report section": None}


def recipes(text: str) -> dict[str, list[str]]:
    """{"a tool": [its numbered files]}: the first code span of each numbered line of every
    "## Adding …" section."""
    found: dict[str, list[str]] = {}
    for heading, body in re.findall(r"^## Adding (.+?)\n(.*?)(?=^## |\Z)", text, re.M | re.S):
        found[heading] = re.findall(r"^\d+\. `([^`]+)`", body, re.M)
    return found


def exists(path: str) -> bool:
    """A path, or a pattern whose <placeholder> stands for one file name (`agent/tools/<kind>.py`)."""
    return any(ROOT.glob(re.sub(r"<[^>]+>", "*", path)))


def test_each_recipe_names_files_that_exist_and_no_more_than_its_kind_allows():
    found = recipes(PAGE.read_text(encoding="utf-8"))
    assert set(found) == set(LIMITS)
    for kind, files in found.items():
        assert files, kind
        assert [f for f in files if not exists(f)] == [], kind
        if LIMITS[kind] is not None:
            assert len(files) <= LIMITS[kind], (kind, files)


def test_the_recipe_check_reads_numbered_files_and_placeholders(tmp_path):
    text = "## Adding a thing\n\nFiles (2):\n\n1. `agent/tools/<kind>.py`: x\n2. `docs/none.md`: y\n- `not/listed.py`\n"
    assert recipes(text) == {"a thing": ["agent/tools/<kind>.py", "docs/none.md"]}
    assert exists("agent/tools/<kind>.py") and not exists("docs/none.md")


def test_a_tool_is_its_module_under_agent_tools_and_its_row_in_docs_tools():
    tools = load()._tools.values()
    assert tools and REGISTRY is load()
    assert {t.fn.__module__.rsplit(".", 1)[0] for t in tools} == {"agent.tools"}
    table = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    assert [t.name for t in tools if f"| `{t.name}` |" not in table] == []


def test_an_event_is_declared_in_events_and_read_where_the_recipe_says(monkeypatch):
    assert {cls.__module__ for cls in events.EVENTS.values()} == {"agent.engine.events"}

    @dataclasses.dataclass(frozen=True)
    class SourcesRanked(events.Event):
        type = "sources_ranked"
        label = events.gettext_noop("Sources ranked")
        phase = "ranking"
        phase_text = events.gettext_noop("Ranking the sources…")
        sources: int

        @staticmethod
        def summary(data: dict) -> str:
            return f"{data['sources']} sources ranked"

    # Declared only there, it reaches the page's strings and the terminal, which keep no table of
    # their own by event type.
    monkeypatch.setitem(events.EVENTS, SourcesRanked.type, SourcesRanked)
    strings = js_strings()
    assert strings["event"]["sources_ranked"] == "Sources ranked"
    assert strings["event_phase"]["sources_ranked"] == "ranking"
    assert strings["phase"]["ranking"] == "Ranking the sources…"
    assert deep_research._summary("sources_ranked", SourcesRanked(sources=3).data()) == "3 sources ranked"
    terminal = inspect.getsource(deep_research)
    assert [t for t in events.EVENTS if f'"{t}"' in terminal] == []


def test_a_permission_is_declared_in_roles_and_asked_through_access_can():
    assert roles.MATERIALS_MANAGE in roles.PERMISSIONS
    assert inspect.getsourcefile(roles.Permission).endswith("channels_app/roles.py")
    assert inspect.getsourcefile(access.can).endswith("channels_app/access.py")
    page = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert "<!-- role table: start -->" in page and "<!-- role table: end -->" in page


def test_a_report_section_is_a_field_of_the_typed_report():
    assert inspect.getsourcefile(report_types.Report).endswith("agent/engine/report_types.py")
    assembled = (ROOT / "agent" / "engine" / "assemble.py").read_text(encoding="utf-8")
    assert "R.Report(" in assembled


SETTINGS_READ = re.compile(r'(?:\benv(?:\.\w+)?|\b_\w+)\(\s*"([A-Z][A-Z0-9_]{2,})"')


def variables_read(path) -> set[str]:
    """The environment variables a settings module reads (env.int("X", …), or a helper
    `_positive_int("X", …)`)."""
    return set(SETTINGS_READ.findall(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("module", ["base.py", "production.py", "dev.py"])
def test_every_variable_the_settings_read_is_in_docs_operations(module):
    documented = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    read = variables_read(ROOT / "uedu_dr" / "settings" / module)
    assert read
    assert sorted(name for name in read if not re.search(rf"`{name}[`=]", documented)) == []


def test_the_settings_check_sees_a_variable_read_through_a_helper(tmp_path):
    settings = tmp_path / "settings.py"
    settings.write_text(
        'A = env.int("UEDU_A", default=1)\nB = _positive_int("UEDU_B", 2)\nC = ("HTTP_X", "y")\n'
    )
    assert variables_read(settings) == {"UEDU_A", "UEDU_B"}
