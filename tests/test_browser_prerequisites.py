"""The browser tests' check for a CJK font (tests/support/system_fonts.py): a machine without one
is told which package to install before any page opens, and .ci/run installs that package."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.support.system_fonts import CJK_FONT_PACKAGE, cjk_font_problem

ROOT = Path(__file__).resolve().parents[1]


def _fake_fc_list(tmp_path: Path, monkeypatch, output: str) -> None:
    script = tmp_path / "fc-list"
    script.write_text(f"#!/bin/sh\nprintf '%s' '{output}'\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))


def test_a_machine_without_a_chinese_font_is_told_which_package_to_install(tmp_path, monkeypatch):
    _fake_fc_list(tmp_path, monkeypatch, "")
    problem = cjk_font_problem()
    assert problem is not None and CJK_FONT_PACKAGE in problem and "fc-list :lang=zh" in problem


def test_a_machine_with_a_chinese_font_passes(tmp_path, monkeypatch):
    _fake_fc_list(tmp_path, monkeypatch, "Noto Sans CJK TC\\n")
    assert cjk_font_problem() is None


def test_a_machine_without_fontconfig_is_told_to_install_it_and_the_font(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no fc-list
    problem = cjk_font_problem()
    assert problem is not None and "fontconfig" in problem and CJK_FONT_PACKAGE in problem


def test_ci_installs_the_font_package_the_check_names():
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(rf"missing\+=\([^)]*\b{CJK_FONT_PACKAGE}\b", script)
    assert 'apt-get install -y -qq "${missing[@]}"' in script and os.access(ROOT / ".ci" / "run", os.X_OK)
