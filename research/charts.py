"""Small bar charts of a report's verified figures, laid out in Python and drawn as inline SVG by
the result page (templates/research/_charts.html).

What may feed a chart is decided here, by code, and nothing else does:

- a figure claim the report's findings state (`report["findings"][*]["claims"]`, kind "figure")
  with a finite numeric value, a metric and a unit;
- that the engine verified: its atomic record in `verification_json["evidence_claims"]` has the
  verdict "supported" or "partial", no failure reason and no flag (a report without those records
  draws nothing: fail closed);
- that is not the losing side of a conflict the engine settled;
- that cites at least one source the page lists, so every mark links to its citation.

Figures are grouped by metric and unit (normalised: case and spacing); different units are never
converted nor mixed ("USD billion" and "USD million" are two charts). A group is drawn when it has
at least two marks (two entities, or two periods). Each mark is one claim: its label is the
entity and the period, its bar starts at zero.

Why server-side SVG and no charting library: the page runs under a strict CSP (no inline script,
no style attributes), the figures are few (a report's handful), and a chart drawn by the server is
in the HTML the print view and the PDF export get, with its links and text, without any script.
The SVG uses presentation attributes for geometry and CSS classes (static/css/app.css) for colour.

No Django here: the page gives the labels (translated at render) to the template."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

VERIFIED_VERDICTS = ("supported", "partial")
MAX_CHARTS = 6
MAX_MARKS = 16  # per chart: a report's figures, not a data set

# Geometry of one chart, in SVG user units (the SVG scales to its box's width).
WIDTH = 640
LABEL_WIDTH = 200  # the entity · period labels, right-aligned before the bars
VALUE_SPACE = 120  # after the longest bar: its value and citation numbers
ROW = 28
BAR = 18
TOP = 8
LABEL_CHARS = 28  # longer labels are cut (the full one is in the mark's <title>)


@dataclass
class Mark:
    claim_id: int
    entity: str
    period: str
    value: float
    citations: list[int]  # the cited sources' numbers on the page; the bar links to the first
    label: str = ""  # entity · period, cut to fit
    full_label: str = ""
    value_text: str = ""
    # layout: SVG coordinates, as strings (see _u)
    y: str = ""
    x: str = ""
    width: str = ""
    text_y: str = ""
    value_x: str = ""


@dataclass
class Chart:
    key: str  # normalised "metric|unit", unique on the page
    metric: str
    unit: str
    marks: list[Mark] = field(default_factory=list)
    height: str = ""
    zero_x: str = ""
    width: int = WIDTH
    label_x: int = LABEL_WIDTH - 8
    bar_height: int = BAR


def _norm(text: str) -> str:
    return " ".join(str(text or "").lower().split())


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def verified_claim_ids(evidence_claims) -> set[int]:
    """The ids of the atomic claims the engine verified (the same rule as Claim.verified), never
    a flagged one."""
    ids = set()
    for c in evidence_claims or []:
        if not isinstance(c, dict) or not isinstance(c.get("id"), int):
            continue
        if c.get("verdict") in VERIFIED_VERDICTS and not c.get("reason") and not c.get("flagged"):
            ids.add(c["id"])
    return ids


def superseded_claim_ids(report: dict) -> set[int]:
    """The claims of every side that lost a conflict the engine settled."""
    lost = set()
    for conflict in report.get("conflicts") or []:
        prevailing = conflict.get("prevailing_side")
        if conflict.get("status") != "resolved" or prevailing is None:
            continue
        for i, side in enumerate(conflict.get("sides") or []):
            if i != prevailing:
                lost.update(c for c in side.get("claim_ids") or [] if isinstance(c, int))
    return lost


def format_value(value: float) -> str:
    """35.08 → "35.08", 120.0 → "120", 1234567 → "1,234,567" (up to four decimals, no trailing zeros)."""
    text = f"{value:,.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def figure_charts(report: dict, evidence_claims, citation_numbers) -> list[Chart]:
    """The charts of one report: verified figure claims grouped by metric and unit (module docstring)."""
    if not isinstance(report, dict):
        return []
    verified = verified_claim_ids(evidence_claims)
    lost = superseded_claim_ids(report)
    shown = set(citation_numbers or ())
    charts: dict[str, Chart] = {}
    seen: set[int] = set()
    for finding in report.get("findings") or []:
        for claim in finding.get("claims") or []:
            claim_id, value = claim.get("id"), _number(claim.get("value"))
            if (
                claim.get("kind") != "figure"
                or not isinstance(claim_id, int)
                or claim_id in seen
                or claim_id not in verified
                or claim_id in lost
                or value is None
            ):
                continue
            metric, unit = str(claim.get("metric") or "").strip(), str(claim.get("unit") or "").strip()
            entity, period = str(claim.get("entity") or "").strip(), str(claim.get("period") or "").strip()
            citations = [n for n in claim.get("citations") or [] if isinstance(n, int) and n in shown]
            if not (metric and unit and (entity or period) and citations):
                continue
            seen.add(claim_id)
            key = f"{_norm(metric)}|{_norm(unit)}"
            chart = charts.setdefault(key, Chart(key=key, metric=metric, unit=unit))
            same = next(
                (
                    m
                    for m in chart.marks
                    if (_norm(m.entity), _norm(m.period)) == (_norm(entity), _norm(period))
                    and math.isclose(m.value, value, rel_tol=1e-9, abs_tol=1e-12)
                ),
                None,
            )
            if same is not None:  # two sources stating the same figure: one mark, both citations
                same.citations += [n for n in citations if n not in same.citations]
                continue
            chart.marks.append(Mark(claim_id, entity, period, value, citations))
    drawn = []
    for chart in charts.values():
        subjects = {(_norm(m.entity), _norm(m.period)) for m in chart.marks}
        if len(subjects) < 2:
            continue
        chart.marks = chart.marks[:MAX_MARKS]
        _layout(chart)
        drawn.append(chart)
        if len(drawn) == MAX_CHARTS:
            break
    return drawn


def _u(x: float) -> str:
    """A coordinate as the SVG gets it: one decimal, never localised by the template."""
    return f"{x:.1f}"


def _layout(chart: Chart) -> None:
    """Bars from zero (negative values to its left), scaled to the widest."""
    low = min(0.0, *(m.value for m in chart.marks))
    high = max(0.0, *(m.value for m in chart.marks))
    span = (high - low) or 1.0
    left, room = LABEL_WIDTH, WIDTH - LABEL_WIDTH - VALUE_SPACE
    zero = left + (0.0 - low) / span * room
    for i, mark in enumerate(chart.marks):
        mark.full_label = " · ".join(part for part in (mark.entity, mark.period) if part)
        mark.label = _cut(mark.full_label)
        mark.value_text = format_value(mark.value)
        start = left + (min(mark.value, 0.0) - low) / span * room
        width = max(abs(mark.value) / span * room, 1.0)  # a zero still shows
        y = TOP + i * ROW
        mark.x, mark.width, mark.y, mark.text_y = _u(start), _u(width), _u(y), _u(y + BAR / 2 + 4)
        # the value right after a positive bar, right of zero for a negative one
        mark.value_x = _u((start + width if mark.value >= 0 else zero) + 6)
    chart.zero_x = _u(zero)
    chart.height = _u(TOP * 2 + len(chart.marks) * ROW)


def stored_charts(report_json, verification_json, citations_json) -> list[Chart]:
    """figure_charts of a task's stored report, verification record and citation list."""
    numbers = set()
    for raw in citations_json or []:
        number = raw.get("number") if isinstance(raw, dict) else None
        if isinstance(number, int):
            numbers.add(number)
    return figure_charts(report_json or {}, (verification_json or {}).get("evidence_claims") or [], numbers)
