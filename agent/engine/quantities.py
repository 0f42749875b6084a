"""The values of the facts: read by code from their spans (`values.parse`), and the few values code
computes from them.

A value keeps the characters it was read from (offsets into its span), its kind, unit and the
year the span gives it for. Computed values are conservative: only the growth of one series
across years, from two values of one kind and unit about one subject (the same source, or the
same filed figure of a structured source), labelled as computed wherever shown."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import spans
from . import values as value_parser
from .selection import Picked

# Kinds a growth can be computed for (a growth of percentages or years says nothing).
GROWING_KINDS = ("number", "currency")


@dataclass
class Reading:
    id: int
    fact: int
    span: str
    kind: str
    value: float
    unit: str
    text: str
    start: int
    end: int
    year: int | None = None


@dataclass
class Derived:
    id: int
    kind: str
    inputs: list[int]
    value: float
    unit: str


@dataclass
class Measures:
    readings: list[Reading] = field(default_factory=list)
    derived: list[Derived] = field(default_factory=list)

    def of_fact(self, fact_id: int) -> list[Reading]:
        return [r for r in self.readings if r.fact == fact_id]


def read(facts: list[Picked], index) -> Measures:
    """Every value of every fact's spans, numbered in the facts' order."""
    out = Measures()
    for fact in facts:
        for span_id in fact.spans:
            cut = index.get(span_id)
            if cut is None:
                continue
            for parsed in value_parser.parse(cut.text):
                if cut.text[parsed.start : parsed.end] != parsed.text:
                    continue  # a value must be the span's own characters
                out.readings.append(
                    Reading(
                        id=len(out.readings) + 1,
                        fact=fact.id,
                        span=span_id,
                        kind=parsed.kind,
                        value=float(parsed.value),
                        unit=parsed.unit or "",
                        text=parsed.text,
                        start=parsed.start,
                        end=parsed.end,
                        year=parsed.year,
                    )
                )
    return out


def subject_of(source) -> tuple | None:
    """The subject a structured source's metadata names (a filed figure: company and metric)."""
    meta = getattr(source, "meta", None) or {}
    if meta.get("ticker") and meta.get("metric"):
        return (str(meta["ticker"]).upper(), str(meta["metric"]).lower())
    return None


def compute(measures: Measures, facts: list[Picked], registry) -> None:
    """The growth of one series across years: two values of one kind and unit, with different
    years, about one subject (one source, or one filed figure), earlier to later year."""
    by_fact = {f.id: f for f in facts}
    series: dict[tuple, list[Reading]] = {}
    for r in measures.readings:
        if r.kind not in GROWING_KINDS or r.year is None or not r.value:
            continue
        source_id = by_fact[r.fact].source_id
        subject = subject_of(registry.get(source_id)) or ("source", source_id)
        series.setdefault((subject, r.kind, r.unit), []).append(r)
    for members in series.values():
        by_year: dict[int, Reading] = {}
        for r in members:
            if r.year in by_year and not _same(by_year[r.year].value, r.value):
                by_year = {}  # two values for one year: not one series
                break
            by_year.setdefault(r.year, r)
        years = sorted(by_year)
        for a, b in zip(years, years[1:]):
            first, then = by_year[a], by_year[b]
            a, b = _parsed(first), _parsed(then)
            growth = value_parser.compute("growth", a, b)
            if growth is None:
                continue
            measures.derived.append(
                Derived(
                    id=len(measures.derived) + 1,
                    kind="growth",
                    inputs=[first.id, then.id],
                    value=round(growth, 4),
                    unit=value_parser.computed_unit("growth", a),
                )
            )


def _parsed(r: Reading) -> value_parser.ParsedValue:
    return value_parser.ParsedValue(r.kind, r.value, r.unit, r.text, r.start, r.end, r.year)


def _same(a: float, b: float, tolerance: float = 0.01) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def subject_words(text: str) -> set[str]:
    """The content terms of a span (spans.terms: English words stemmed, stop words out; Chinese
    character pairs), numbers left out: two spans about one subject share some."""
    return {t for t in spans.terms(text) if not t.isdigit()}
