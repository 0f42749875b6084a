"""The speed and cost dashboard: figures per day, model or channel, computed in PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db import connection

GROUPS = {
    "day": ("m.day::text", "m.day"),
    "model": ("m.model_name", "m.model_name"),
    "channel": ("c.slug", "c.slug"),
}

FIGURES = [
    ("tasks", "Reports"),
    ("mean_duration", "Mean duration (s)"),
    ("p95_duration", "P95 duration (s)"),
    ("tokens_per_report", "Tokens per report"),
    ("cost_per_report", "Cost per report (USD)"),
    ("tool_calls_per_round", "Tool calls per round"),
    ("searches_per_round", "Searches per round"),
    ("limit_hit_share", "Share of limit hits"),
    ("low_credibility_share", "Share of low-credibility sources"),
    ("citation_coverage", "Citation coverage (sentences and table cells)"),
    ("removed_per_report", "Sentences and cells removed per report"),
    ("conflicts_by_engine", "Conflicts found by the engine"),
    ("conflicts_by_writer", "Conflicts reported by the writer"),
    ("source_pollution_rate", "Source-pollution rate"),
]


@dataclass
class Row:
    key: str
    tasks: int
    mean_duration: float | None
    p95_duration: float | None
    tokens_per_report: float | None
    cost_per_report: float | None
    tool_calls_per_round: float | None
    searches_per_round: float | None
    limit_hit_share: float | None
    low_credibility_share: float | None
    citation_coverage: float | None
    removed_per_report: float | None
    conflicts_by_engine: float | None
    conflicts_by_writer: float | None
    source_pollution_rate: float | None


def figures(*, group: str, start: date, end: date) -> list[Row]:
    if group not in GROUPS:
        raise ValueError(f"group must be one of {sorted(GROUPS)}")
    label, order = GROUPS[group]
    sql = f"""
        SELECT {label} AS key,
               count(*) AS tasks,
               avg(m.duration_seconds) AS mean_duration,
               percentile_cont(0.95) WITHIN GROUP (ORDER BY m.duration_seconds) AS p95_duration,
               avg(m.tokens) AS tokens_per_report,
               avg(m.cost_usd) AS cost_per_report,
               sum(m.tool_calls)::float / nullif(sum(m.rounds), 0) AS tool_calls_per_round,
               sum(m.searches)::float / nullif(sum(m.rounds), 0) AS searches_per_round,
               avg(m.limit_hit::int) AS limit_hit_share,
               sum(m.low_credibility_citations)::float / nullif(sum(m.citations), 0) AS low_credibility_share,
               sum(m.cited_sentences)::float / nullif(sum(m.factual_sentences), 0) AS citation_coverage,
               avg(m.removed_from_body) AS removed_per_report,
               sum(m.conflicts_found) AS conflicts_by_engine,
               sum(m.conflicts_reported_by_writer) AS conflicts_by_writer,
               avg(m.source_pollution_rate) AS source_pollution_rate
          FROM deep_research_metrics m
          JOIN channels_app_channel c ON c.id = m.channel_id
         WHERE m.day BETWEEN %s AND %s
         GROUP BY {order}
         ORDER BY {order}
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [start, end])
        rows = cursor.fetchall()
    return [
        Row(key, tasks, *[None if v is None else round(float(v), 6) for v in rest])
        for key, tasks, *rest in rows
    ]


def chart(rows: list[Row], figure: str, *, width: int = 520, bar: int = 18) -> dict:
    """Bars for one figure, sized on the server (the template draws them as SVG)."""
    values = [getattr(r, figure) or 0 for r in rows]
    top = max(values, default=0) or 1
    return {
        "height": (bar + 8) * len(rows) + 8,
        "width": width,
        "bars": [
            {
                "y": 8 + i * (bar + 8),
                "h": bar,
                "w": round((width - 200) * v / top, 1),
                "label": r.key,
                "value": v,
            }
            for i, (r, v) in enumerate(zip(rows, values))
        ],
    }
