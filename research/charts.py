"""Small bar charts of a report's values, laid out in Python and drawn as inline SVG by the result
page (templates/research/_charts.html).

What may feed a chart is decided here, from the typed report, and nothing else does:

- a value code parsed from a span of a fact the report shows (`Report.values`, listed by a fact
  of a section), never from a fact on the losing side of a settled conflict (`superseded`) nor
  from a source that addresses the model, never a year (a year is a bar's label, not its length),
  a finite number, with the year the span gives it for (a bar is labelled by its source and its
  year: a count without a year is too often a count of something else);
- or a value code computed from such values (`Report.computed`), drawn in charts of their own and
  labelled "computed".

Values are grouped by kind and unit (a percentage never beside a count, USD never beside TWD,
nothing converted). A group is drawn when it has at least two bars. A bar's label is source
metadata and the value's year ("Online course enrolment, 2019–2021 · 2019"), its number the value
code parsed, its link the citation of its source; the chart's title and description are the
page's words in the reader's language (the template's), never the model's.

Why server-side SVG and no charting library: the page runs under a strict CSP (no inline script,
no style attributes), the values are few, and a chart drawn by the server is in the HTML the print
view and the PDF export get, with its links and text, without any script. The SVG uses
presentation attributes for geometry and CSS classes (static/css/charts.css) for colour."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from agent.engine import vocabulary as V
from agent.engine.report_types import Report
from research.report_wording import number_text, unit_text
from research.vocabulary_labels import text as label

MAX_CHARTS = 6
MAX_MARKS = 16  # per chart: a report's values, not a data set
CHARTED_KINDS = ("number", "percent", "percentage_points", "currency")

# Geometry of one chart, in SVG user units (the SVG scales to its box's width). Each bar has its
# label on a line of its own above it: a source's title is long, and a label cut short would
# leave the bar's accessible name without the words a reader sees.
WIDTH = 640
VALUE_SPACE = 150  # after the longest bar: its value and source number
LABEL_LINE = 16
BAR = 18
ROW = LABEL_LINE + BAR + 10
TOP = 6
LABEL_CHARS = 80  # longer labels are cut (the full one is in the mark's <title>)


@dataclass
class Mark:
    key: str  # "v<value id>" or "c<computed id>"
    label_parts: tuple[str, str]  # (source title or computation, year or years)
    value: float
    number: int  # the [N] of its source (of its first input, for a computed value)
    computed: bool = False
    label: str = ""  # cut to fit
    full_label: str = ""
    value_text: str = ""
    shown: str = ""  # the value with its unit, as the bar states it
    # layout: SVG coordinates, as strings (see _u)
    y: str = ""
    x: str = ""
    width: str = ""
    label_y: str = ""
    text_y: str = ""
    value_x: str = ""


@dataclass
class Chart:
    key: str  # "kind|unit" (or "computed:kind|unit"), unique on the page
    kind: str
    unit: str
    computed: bool = False
    title: str = ""  # the page's words, in the reader's language
    unit_label: str = ""
    marks: list[Mark] = field(default_factory=list)
    height: str = ""
    zero_x: str = ""
    width: int = WIDTH
    bar_height: int = BAR


def _title(kind: str, unit: str, computed: bool) -> str:
    if computed:
        return _("%(computation)s computed from the values in the sources") % {
            "computation": label(V.COMPUTED_KINDS, kind).capitalize()
        }
    return {
        "number": _("Numbers stated in the sources"),
        "percent": _("Percentages stated in the sources"),
        "percentage_points": _("Percentage points stated in the sources"),
        "currency": _("Amounts of money stated in the sources"),
    }.get(kind, label(V.VALUE_KINDS, kind))


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _finite(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def report_charts(report: Report) -> list[Chart]:
    """The charts of one report (module docstring)."""
    shown = [f for f in report.shown_facts() if not f.superseded and f.spans]
    charted: dict[int, int] = {}  # value id → the [N] of its fact's source
    for fact in shown:
        source = report.source(fact.source)
        if source is None or source.flagged:
            continue
        for value_id in fact.values:
            charted.setdefault(value_id, fact.source)
    charts: dict[str, Chart] = {}
    for value_id, number in charted.items():
        value = report.value(value_id)
        amount = _finite(value.value) if value else None
        if value is None or value.kind not in CHARTED_KINDS or amount is None or value.year is None:
            continue
        key = f"{value.kind}|{value.unit}"
        chart = charts.setdefault(key, Chart(key=key, kind=value.kind, unit=value.unit))
        title, year = report.source(number).title, str(value.year)
        same = next(
            (
                m
                for m in chart.marks
                if m.number == number and m.label_parts == (title, year) and m.value == amount
            ),
            None,
        )
        if same is None:  # the same value of one source said twice is one bar
            chart.marks.append(
                Mark(key=f"v{value.id}", label_parts=(title, year), value=amount, number=number)
            )
    for computed in report.computed:
        inputs = [report.value(i) for i in computed.inputs]
        amount = _finite(computed.value)
        if amount is None or not inputs or any(v is None or v.id not in charted for v in inputs):
            continue
        key = f"computed:{computed.kind}|{computed.unit}"
        chart = charts.setdefault(key, Chart(key=key, kind=computed.kind, unit=computed.unit, computed=True))
        years = "→".join(str(v.year) for v in inputs if v.year is not None)
        chart.marks.append(
            Mark(
                key=f"c{computed.id}",
                label_parts=(label(V.COMPUTED_KINDS, computed.kind), years),
                value=amount,
                number=charted[inputs[0].id],
                computed=True,
            )
        )
    drawn = []
    for chart in charts.values():
        if len(chart.marks) < 2:
            continue
        chart.marks = chart.marks[:MAX_MARKS]
        chart.title = _title(chart.kind, chart.unit, chart.computed)
        unit = unit_text(chart.unit)
        if chart.computed and chart.kind == "difference" and chart.unit == "%":
            unit = label(V.VALUE_KINDS, "percentage_points")
        chart.unit_label = unit
        _layout(chart)
        for mark in chart.marks:
            mark.shown = mark.value_text + (unit if unit == "%" else f" {unit}" if unit else "")
        drawn.append(chart)
        if len(drawn) == MAX_CHARTS:
            break
    return drawn


def _u(x: float) -> str:
    """A coordinate as the SVG gets it: one decimal, never localised by the template."""
    return f"{x:.1f}"


def _layout(chart: Chart) -> None:
    """Bars from zero (negative values to its left), scaled to the widest, each under its label."""
    low = min(0.0, *(m.value for m in chart.marks))
    high = max(0.0, *(m.value for m in chart.marks))
    span = (high - low) or 1.0
    left, room = 0.0, WIDTH - VALUE_SPACE
    zero = left + (0.0 - low) / span * room
    for i, mark in enumerate(chart.marks):
        mark.full_label = " · ".join(part for part in mark.label_parts if part)
        mark.label = _cut(mark.full_label)
        mark.value_text = number_text(mark.value)
        start = left + (min(mark.value, 0.0) - low) / span * room
        width = max(abs(mark.value) / span * room, 1.0)  # a zero still shows
        y = TOP + i * ROW + LABEL_LINE
        mark.x, mark.width, mark.y, mark.text_y = _u(start), _u(width), _u(y), _u(y + BAR / 2 + 4)
        mark.label_y = _u(y - 4)
        # the value right after a positive bar, right of zero for a negative one
        mark.value_x = _u((start + width if mark.value >= 0 else zero) + 6)
    chart.zero_x = _u(zero)
    chart.height = _u(TOP * 2 + len(chart.marks) * ROW - 10)
