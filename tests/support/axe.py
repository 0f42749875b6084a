"""axe-core in the browser tests: the WCAG 2.2 A/AA rules run on a page as a user sees it.

axe-core is vendored for the tests only (tests/support/vendor/axe-core-<version>/, MPL-2.0, from
the npm package `axe-core`; docs/accessibility.md). It is evaluated through Playwright's
`page.evaluate` (the DevTools protocol), which the site's strict Content-Security-Policy does not
govern, so the pages are checked under their real policy: no `bypass_csp`, and a script tag
would be refused by `script-src 'self'`."""

from __future__ import annotations

from pathlib import Path

AXE_VERSION = "4.14.1"
AXE_JS = Path(__file__).resolve().parent / "vendor" / f"axe-core-{AXE_VERSION}" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

# Rules switched off on every page, each with its reason. Keep this empty unless a rule cannot be
# met by the pages themselves.
EXCEPTIONS: dict[str, str] = {}


def axe_violations(
    page,
    *,
    exclude: list[str] | None = None,
    exceptions: dict[str, str] | None = None,
    options: dict | None = None,
) -> list:
    """The violations of the WCAG 2.0/2.1/2.2 A and AA rules on the page as it is now.
    `exclude`: CSS selectors of parts not checked (each caller says why); `exceptions`: rule ids
    switched off for this page, with their reasons; `options`: more of axe.run's options."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_JS.read_text(encoding="utf-8"))
    rules = {rule: {"enabled": False} for rule in {**EXCEPTIONS, **(exceptions or {})}}
    context = {"exclude": [[selector] for selector in exclude]} if exclude else None
    return page.evaluate(
        """async ([context, options]) => {
            const result = await window.axe.run(context || document, options);
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary})),
            }));
        }""",
        [
            context,
            {
                "runOnly": {"type": "tag", "values": WCAG_TAGS},
                "rules": rules,
                "resultTypes": ["violations"],
                **(options or {}),
            },
        ],
    )


def describe(violations: list) -> str:
    """Each violation's rule, impact and the selectors of the elements that break it."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        for node in v["nodes"]:
            lines.append(
                f"    {node['target']}: {node['summary'].splitlines()[-1].strip() if node['summary'] else ''}"
            )
    return "\n".join(lines)


def assert_accessible(page, where: str, **options) -> None:
    violations = axe_violations(page, **options)
    assert not violations, f"axe-core {AXE_VERSION} on {where} ({page.url}):\n{describe(violations)}"
