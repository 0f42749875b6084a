"""The README is a map into docs/: every relative link in README.md and docs/*.md (Markdown links
and <img src>) must lead to a file that exists, so a page that moves or is renamed fails here
rather than in a reader's browser."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.stack import ROOT

# [text](target) and <img src="target">; a code span is not a link, so code spans are removed first.
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<img\s[^>]*src=\"([^\"]+)\"")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
EXTERNAL = ("http://", "https://", "mailto:", "#")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def relative_links(page: Path) -> list[str]:
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    targets = [a or b for a, b in LINK.findall(text)]
    return [t for t in targets if not t.startswith(EXTERNAL)]


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path = target.split("#", 1)[0]
        if not (page.parent / path).resolve().exists():
            broken.append(target)
    return broken


def test_every_relative_link_of_the_readme_and_docs_leads_to_a_file():
    assert {p.relative_to(ROOT).as_posix(): broken_links(p) for p in pages() if broken_links(p)} == {}


def test_the_check_sees_a_broken_link_and_ignores_code_and_external_links(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("x")
    page.write_text(
        "[ok](there.md#part) [gone](missing.md) `[code](nowhere.md)` [web](https://example.org)\n"
        '<img src="lost.png" alt="">\n'
    )
    assert broken_links(page) == ["missing.md", "lost.png"]


def test_the_readme_links_into_docs():
    assert any(t.startswith("docs/") for t in relative_links(ROOT / "README.md"))
