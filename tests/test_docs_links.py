"""The README is a map into docs/: every relative link in README.md and docs/*.md (Markdown links
and <img src>) must lead to a file that exists, and a link to a heading of a page to a heading it
has, so a page or section that moves or is renamed fails here rather than in a reader's browser."""

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


def anchors(page: Path) -> set[str]:
    """The fragment GitHub gives each heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    headings = re.findall(r"^#+\s+(.+?)\s*$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve()
        if not linked.exists() or (fragment and linked.suffix == ".md" and fragment not in anchors(linked)):
            broken.append(target)
    return broken


def test_every_relative_link_of_the_readme_and_docs_leads_to_a_file():
    assert {p.relative_to(ROOT).as_posix(): broken_links(p) for p in pages() if broken_links(p)} == {}


def test_the_check_sees_a_broken_link_and_ignores_code_and_external_links(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# There\n\n## A `part`, here\n")
    page.write_text(
        "[ok](there.md#a-part-here) [gone](missing.md) [no such part](there.md#elsewhere)\n"
        "`[code](nowhere.md)` [web](https://example.org)\n"
        '<img src="lost.png" alt="">\n'
    )
    assert broken_links(page) == ["missing.md", "there.md#elsewhere", "lost.png"]


def test_the_readme_links_into_docs():
    assert any(t.startswith("docs/") for t in relative_links(ROOT / "README.md"))


def test_the_readme_is_a_short_map():
    """The detail (benchmark figures, test doubles, measured models) lives in docs/; the README
    keeps what a newcomer needs first."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_every_test_and_bench_the_readme_names_exists():
    """A claim in the README names the test or bench that holds it; a renamed file fails here."""
    named = re.findall(r"`((?:tests|bench)/[\w/]+\.py)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert named and [path for path in named if not (ROOT / path).is_file()] == []
