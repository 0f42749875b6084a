"""The dashboard's daily trend as a line chart laid out in Python and drawn as inline SVG by the
template (templates/research/_trend_chart.html), like the result page's charts (research/charts.py
says why: a strict CSP, no script, the chart in the HTML itself).

One line per series (researches asked, completed, finished at a limit), a point per day with its
count in its <title>, a y axis from 0 to a round maximum with three gridlines, and the dates of
the first, middle and last day under the axis. Colours and line styles come from CSS classes
(static/css/app.css): the series differ in dash pattern too, not in colour alone.

No Django here: the page gives the series' labels (translated) and the days."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date

WIDTH = 640
HEIGHT = 220
LEFT = 40  # the y axis' numbers
RIGHT = 12
TOP = 12
BOTTOM = 28  # the dates
TICKS = 3  # gridlines above zero


@dataclass
class Point:
    x: str
    y: str
    day: date
    value: int


@dataclass
class Line:
    key: str
    label: str
    points: list[Point] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The polyline's points attribute."""
        return " ".join(f"{p.x},{p.y}" for p in self.points)

    @property
    def total(self) -> int:
        return sum(p.value for p in self.points)


@dataclass
class Tick:
    y: str
    value: int


@dataclass
class DayLabel:
    x: str
    day: date
    anchor: str  # text-anchor


@dataclass
class TrendChart:
    lines: list[Line]
    ticks: list[Tick]
    days: list[DayLabel]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right_x: int = WIDTH - RIGHT
    base_y: str = ""
    label_y: int = HEIGHT - 8
    points_shown: bool = True  # a point per day; left out when days are too close to tell apart


def _u(value: float) -> str:
    return f"{value:.1f}"


def _round_top(top: int) -> int:
    """The axis maximum: at least 1 and a multiple of TICKS, so the gridlines fall on integers."""
    return max(TICKS, math.ceil(max(top, 1) / TICKS) * TICKS)


def layout(days: list[date], series: list[tuple[str, str, list[int]]]) -> TrendChart:
    """`series`: (key, label, one count per day) each."""
    top = _round_top(max((v for _, _, values in series for v in values), default=0))
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = inner_w / max(len(days) - 1, 1)

    def x(i: int) -> float:
        return LEFT + (i * step if len(days) > 1 else inner_w / 2)

    def y(v: float) -> float:
        return TOP + inner_h * (1 - v / top)

    lines = [
        Line(key, label, [Point(_u(x(i)), _u(y(v)), days[i], v) for i, v in enumerate(values)])
        for key, label, values in series
    ]
    ticks = [Tick(_u(y(top * n / TICKS)), top * n // TICKS) for n in range(TICKS + 1)]
    shown = sorted({0, (len(days) - 1) // 2, len(days) - 1}) if days else []
    labels = [
        DayLabel(
            _u(x(i)),
            days[i],
            "start" if i == 0 and len(days) > 1 else "end" if i == len(days) - 1 else "middle",
        )
        for i in shown
    ]
    return TrendChart(lines, ticks, labels, base_y=_u(y(0)), points_shown=step >= 8)
