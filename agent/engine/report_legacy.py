"""Reports stored before the span design (schema 1.x) in the shape of today's `Report`, so every
stored research still renders, and renders under today's guarantee.

A 1.x report holds two kinds of text. The sources' own words: each citation's `quote`, the text of
its source from `location.start` to `location.end`, which the engine located when the research ran
(and a conflict side's quotes, where they are that same text or a slice of the stored excerpt).
And the model's words: the summary, the findings' texts and headings, the claims' paraphrases,
the judgement and its assumptions, the conflicts' subjects and statements, the counter-evidence
summaries and the not-verified list's texts. Only the first kind becomes facts:

- a citation's located quote becomes a span of its source (one per source: a 1.x citation kept
  the first located quote the report's verified claims rest on);
- each verified claim a finding states becomes the fact of its own located quotes when the caller
  has them (`claim_quotes`: the verification record's quotes, cut from the passages the research
  read; research/legacy_reports.py), else of its cited sources' spans, in the findings' order, in
  one section for the question as a whole (a finding's heading is the model's, beyond the plan:
  dropped, like the summary and the claims' texts);
- a conflict keeps its sides as the facts of their claims and citations, and its key (the one
  reviewers' decisions were stored under); its subject and statements are dropped and the page
  words the subject; a conflict a side of which rests on no span leaves the report;
- the counter-evidence keeps its counts and the facts it cited; its summaries are dropped;
- the judgement's text and assumptions are the model's reasoning: kept only in the
  interpretation block, citing the judgement's facts, and only when their figures, years, names
  and negations are in those facts' spans (novelty.py, the same check as for today's reports);
  otherwise listed as not shown;
- the not-verified list becomes `not_shown` by kind and reason, without its texts;
- limitation codes are renamed where today's vocabulary has their meaning, dropped where it has
  none (the writer's fallbacks: there is no writer now); the sources a research without a verified
  claim consulted become sources that no fact cites.

No value is read from a 1.x claim's `entity`/`metric`/`period`/`value` (the model's labels):
values are parsed by code from the spans (values.py), as for every report."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from . import vocabulary as V
from .novelty import novel
from .report_types import (
    Conflict,
    ConflictSide,
    CounterEvidence,
    Fact,
    InterpretationItem,
    Limitation,
    Location,
    NotShown,
    Report,
    ReSearch,
    Section,
    Source,
    Span,
    Value,
)
from .values import parse

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# 1.x limitation codes that mean what a code of today means (the others described the writer).
_LIMITATIONS = {
    "limit_hit": "limit_hit",
    "tool_failed": "tool_failed",
    "no_counter_evidence": "no_counter_evidence",
    "unresolved_conflicts": "unresolved_conflicts",
    "web_only_claims": "web_only",
    "instructions_in_sources": "instructions_in_sources",
    "no_sources": "no_sources",
    "no_verified_claims": "no_facts",
    "claims_not_drawn": "selection_not_run",
    "claims_failed": "selection_failed",
    "action_failed": "action_failed",
    "searched_by_code": "searched_by_code",
    "plan_fallback": "plan_fallback",
}
_NOT_SHOWN_KINDS = {
    "assumption": "assumption",
    "conflict": "contradiction",
}  # every other 1.x unit (sentence, cell, heading, judgement, code, counter-evidence) was the writer's reasoning
_NOT_SHOWN_REASONS = {
    "no_citation": "no_spans",
    "fabricated_citation": "unknown_span",
    "figure_mismatch": "novel_figure",
    "instruction_in_source": "instruction_in_source",
    "superseded": "superseded",
}  # unsupported, partial, unverified, not_in_claims: "could not be verified"
_FOUND_BY = {"engine": "values", "verifier": "model", "writer": "model"}


def language_of(text: str) -> str:
    return "zh" if _CJK.search(text or "") else "en"


def legacy_conflict_key(conflict: dict) -> str:
    """The key a 1.x conflict's decisions are stored under: a SHA-256 of its subject and, per side,
    its claim ids (or its statement when it names none). Unchanged, so stored decisions still apply."""
    sides = [
        sorted(side.get("claim_ids") or []) or (side.get("statement") or "").strip()
        for side in conflict.get("sides") or []
    ]
    material = json.dumps(
        {"subject": (conflict.get("subject") or "").strip(), "sides": sides},
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()


def _ints(values) -> list[int]:
    return [v for v in values or [] if isinstance(v, int) and not isinstance(v, bool)]


def _dicts(values) -> list[dict]:
    return [v for v in values or [] if isinstance(v, dict)]


def _location(raw) -> Location:
    raw = raw if isinstance(raw, dict) else {}
    start, end = raw.get("start", -1), raw.get("end", -1)
    ok = isinstance(start, int) and isinstance(end, int) and 0 <= start < end
    return Location(page=str(raw.get("page") or ""), start=start if ok else -1, end=end if ok else -1)


@dataclass(frozen=True)
class ClaimQuote:
    """A located quote of a verified 1.x claim: the source's own text at `location`, read by the
    caller from the passage the research stored (never the model's copy of it)."""

    number: int  # the citation number of its source
    text: str
    location: Location


class _Builder:
    def __init__(self, data: dict, claim_quotes: dict[int, list[ClaimQuote]] | None = None):
        self.data = data
        self.claim_quotes = claim_quotes or {}
        self.report = Report(question=str(data.get("question") or ""))
        self.report.language = language_of(self.report.question)
        self.snippets: dict[int, str] = {}
        self.span_of: dict[int, str] = {}  # source number → its span id (the citation's quote)
        self.fact_of: dict[str, int] = {}  # span id → its fact
        self.claim_numbers: dict[int, list[int]] = {}  # claim id → the citation numbers it cites
        self.claim_facts_of: dict[int, list[int]] = {}  # claim id → the facts of its own quotes

    # ------------------------------------------------------------------ sources and their spans

    def sources(self) -> None:
        for raw in _dicts(self.data.get("citations")):
            number = raw.get("id", raw.get("number"))
            if not isinstance(number, int) or self.report.source(number):
                continue
            source_id = raw.get("source_id") if isinstance(raw.get("source_id"), int) else number
            source = Source(
                number=number,
                source_id=source_id,
                title=str(raw.get("title") or ""),
                url=str(raw.get("url") or ""),
                tool=str(raw.get("source_tool") or ""),
                tier=raw.get("tier") if raw.get("tier") in V.TIERS else "web",
                origin="internal" if raw.get("origin") == "internal" else "external",
                locator=str(raw.get("locator") or ""),
                flagged=bool(raw.get("flagged")),
            )
            self.report.sources.append(source)
            self.snippets[number] = str(raw.get("snippet") or "")
            quote = str(raw.get("quote") or "")
            if quote.strip() and not source.flagged:  # a flagged source's words are never a fact
                self.span_of[number] = self._add_span(source, quote, _location(raw.get("location")))

    def _add_span(self, source: Source, text: str, location: Location) -> str:
        n = 1 + sum(1 for s in self.report.spans if s.source == source.number)
        span = Span(
            id=f"{source.source_id}.{n}",
            source=source.number,
            text=text,
            language=language_of(text),
            location=location,
        )
        self.report.spans.append(span)
        return span.id

    def consulted(self) -> None:
        """The sources a research with nothing verified had read (1.x kept them in a limitation)."""
        known = {(s.url, s.title) for s in self.report.sources}
        number = max((s.number for s in self.report.sources), default=0)
        for limitation in _dicts(self.data.get("limitations")):
            if limitation.get("code") != "no_verified_claims":
                continue
            for raw in _dicts((limitation.get("detail") or {}).get("sources")):
                key = (str(raw.get("url") or ""), str(raw.get("title") or ""))
                if key in known:
                    continue
                known.add(key)
                number += 1
                self.report.sources.append(
                    Source(number=number, source_id=-number, title=key[1], url=key[0], tool="")
                )

    # ------------------------------------------------------------------ facts

    def fact(self, number: int) -> int | None:
        """The fact resting on source `number`'s span (made once), or None when it has no span."""
        span_id = self.span_of.get(number)
        if span_id is None:
            return None
        if span_id not in self.fact_of:
            source = self.report.source(number)
            fact = Fact(id=len(self.report.facts) + 1, spans=[span_id], source=number, tier=source.tier)
            self.report.facts.append(fact)
            self.fact_of[span_id] = fact.id
        return self.fact_of[span_id]

    def facts_of(self, numbers) -> list[int]:
        return list(dict.fromkeys(f for f in (self.fact(n) for n in _ints(numbers)) if f is not None))

    def quoted_fact(self, quote: ClaimQuote) -> int | None:
        """The fact of one located claim quote (made once per place in its source)."""
        source = self.report.source(quote.number)
        if source is None or source.flagged or not quote.text.strip():
            return None
        for span in self.report.spans:
            if (span.source, span.location.start, span.location.end, span.text) == (
                quote.number,
                quote.location.start,
                quote.location.end,
                quote.text,
            ):
                return self.fact_of.get(span.id)
        span_id = self._add_span(source, quote.text, quote.location)
        fact = Fact(id=len(self.report.facts) + 1, spans=[span_id], source=quote.number, tier=source.tier)
        self.report.facts.append(fact)
        self.fact_of[span_id] = fact.id
        return fact.id

    def findings(self) -> None:
        section = Section(sub_question=-1)
        for finding in _dicts(self.data.get("findings")):
            for claim in _dicts(finding.get("claims")):
                numbers = _ints(claim.get("citations"))
                claim_id = claim.get("id") if isinstance(claim.get("id"), int) else None
                if claim_id is not None:
                    self.claim_numbers[claim_id] = numbers
                own = [self.quoted_fact(q) for q in self.claim_quotes.get(claim_id, [])]
                own = [f for f in own if f is not None]
                if own:
                    self.claim_facts_of[claim_id] = own
                facts = own or self.facts_of(numbers)
                section.facts += [f for f in facts if f not in section.facts]
        if section.facts:
            self.report.sections.append(section)

    def claim_facts(self, claim_ids, numbers=()) -> list[int]:
        own = [f for c in _ints(claim_ids) for f in self.claim_facts_of.get(c, [])]
        rest = [c for c in _ints(claim_ids) if c not in self.claim_facts_of]
        cited = [n for c in rest for n in self.claim_numbers.get(c, [])]
        if not own:
            cited += _ints(numbers)
        return list(dict.fromkeys(own + self.facts_of(cited)))

    # ------------------------------------------------------------------ conflicts, counter-evidence

    def side_facts(self, side: dict) -> list[int]:
        facts = self.claim_facts(side.get("claim_ids"), side.get("citations"))
        for quote in _dicts(side.get("quotes")):
            number, text = quote.get("citation"), str(quote.get("text") or "")
            source = self.report.source(number) if isinstance(number, int) else None
            if source is None or source.flagged or not text.strip():
                continue
            span_id = self.span_of.get(number)
            if span_id and self.report.span(span_id).text == text:
                continue  # the citation's own quote: its fact is there already
            start = self.snippets.get(number, "").find(text)
            if start < 0:
                continue  # not the source's words as far as the report can show
            span_id = self._add_span(source, text, Location(start=start, end=start + len(text)))
            self.span_of.setdefault(number, span_id)  # what else cites this source rests on it
            fact = Fact(id=len(self.report.facts) + 1, spans=[span_id], source=number, tier=source.tier)
            self.report.facts.append(fact)
            self.fact_of[span_id] = fact.id
            facts.append(fact.id)
        return facts

    def conflicts(self) -> None:
        for raw in _dicts(self.data.get("conflicts")):
            raw_sides = _dicts(raw.get("sides"))
            sides = [
                ConflictSide(
                    facts=self.side_facts(side),
                    tier=side.get("tier") if side.get("tier") in V.TIERS else "web",
                )
                for side in raw_sides
            ]
            if len(sides) < 2 or any(not side.facts for side in sides):
                self.report.not_shown.append(NotShown(kind="contradiction", reason="no_spans"))
                continue
            status = "resolved" if raw.get("status") == "resolved" else "unresolved"
            prevailing = raw.get("prevailing_side")
            prevailing = prevailing if isinstance(prevailing, int) and 0 <= prevailing < len(sides) else None
            if status == "resolved" and prevailing is not None:
                for i, side in enumerate(sides):
                    for fact_id in side.facts if i != prevailing else []:
                        self.report.fact(fact_id).superseded = True
            re_search = raw.get("re_search") if isinstance(raw.get("re_search"), dict) else {}
            self.report.conflicts.append(
                Conflict(
                    key=legacy_conflict_key(raw),
                    found_by=_FOUND_BY.get(raw.get("found_by"), "model"),
                    sides=sides,
                    status=status,
                    resolution="higher_tier" if status == "resolved" and prevailing is not None else "",
                    prevailing_side=prevailing if status == "resolved" else None,
                    re_search=ReSearch(
                        rounds=int(re_search.get("rounds") or 0),
                        new_sources=int(re_search.get("new_sources") or 0),
                        new_facts=self.claim_facts(re_search.get("new_claim_ids")),
                    ),
                )
            )

    def counter_evidence(self) -> None:
        raw = self.data.get("counter_evidence")
        raw = raw if isinstance(raw, dict) else {}
        facts: list[int] = []
        for found in _dicts(raw.get("found")):
            facts += [
                f for f in self.claim_facts(found.get("claim_ids"), found.get("citations")) if f not in facts
            ]
        self.report.counter_evidence = CounterEvidence(
            searched=bool(raw.get("searched")),
            searches=int(raw.get("searches") or 0),
            facts=facts,
            support_by_tier=_counts(raw.get("support_by_tier")),
            against_by_tier=_counts(raw.get("against_by_tier")),
        )

    # ------------------------------------------------------------------ the model's words

    def judgement(self) -> None:
        raw = self.data.get("judgement")
        if not isinstance(raw, dict):
            return
        facts = self.claim_facts(raw.get("claim_ids"), raw.get("citations"))
        items = [("reasoning", str(raw.get("text") or ""))]
        items += [("assumption", str(a)) for a in raw.get("assumptions") or [] if isinstance(a, str)]
        for kind, text in items:
            text = _without_markers(text)
            if not text:
                continue
            reason = self._novel(text, facts) if facts else "no_spans"
            if reason:
                self.report.not_shown.append(NotShown(kind=kind, reason=reason))
                continue
            self.report.interpretation.items.append(InterpretationItem(kind=kind, text=text, facts=facts))

    def _novel(self, text: str, facts: list[int]) -> str:
        """Why `text` may not be shown beside these facts ('' when it may): the first thing it
        states that their spans lack (novelty.py)."""
        grounds = [s.text for f in facts for s in self.report.fact_spans(self.report.fact(f))]
        found = novel(text, grounds)
        return found[0][0] if found else ""

    def values(self) -> None:
        """The values code reads from every span of a fact (values.py), as for any report."""
        for fact in self.report.facts:
            for span in self.report.fact_spans(fact):
                for parsed in parse(span.text):
                    value = Value(
                        id=len(self.report.values) + 1,
                        span=span.id,
                        kind=parsed.kind,
                        value=parsed.value,
                        unit=parsed.unit,
                        text=parsed.text,
                        start=parsed.start,
                        end=parsed.end,
                        year=parsed.year,
                    )
                    self.report.values.append(value)
                    fact.values.append(value.id)

    def not_verified(self) -> None:
        for raw in _dicts(self.data.get("not_verified")):
            self.report.not_shown.append(
                NotShown(
                    kind=_NOT_SHOWN_KINDS.get(raw.get("kind"), "reasoning"),
                    reason=_NOT_SHOWN_REASONS.get(raw.get("reason"), "unverified"),
                )
            )

    def limitations(self) -> None:
        for raw in _dicts(self.data.get("limitations")):
            code = _LIMITATIONS.get(raw.get("code"))
            if code is None:
                continue
            detail = {
                str(k): v
                for k, v in (raw.get("detail") or {}).items()
                if isinstance(v, str | int) and not isinstance(v, bool)
            }
            self.report.limitations.append(Limitation(code=code, detail=detail))

    def build(self) -> Report:
        self.sources()
        self.consulted()
        self.findings()
        self.conflicts()
        self.counter_evidence()
        self.values()
        self.judgement()
        self.not_verified()
        self.limitations()
        cited = {f.source for f in self.report.facts}
        for source in self.report.sources:
            source.cited = source.number in cited
        self.report.spans.sort(key=lambda s: (s.source, int(s.id.rsplit(".", 1)[1])))
        return self.report


def _counts(raw) -> dict[str, int]:
    return (
        {str(k): v for k, v in (raw or {}).items() if isinstance(v, int) and not isinstance(v, bool)}
        if isinstance(raw, dict)
        else {}
    )


_MARKERS = re.compile(r"\s*\[\d+(?:\s*[,，、;；]\s*\d+)*\]")


def _without_markers(text: str) -> str:
    """A 1.x text without its citation markers: the interpretation cites facts, not numbers."""
    return " ".join(_MARKERS.sub("", text).split())


def from_v1(data: dict, claim_quotes: dict[int, list[ClaimQuote]] | None = None) -> Report:
    """A report of schema 1.x (or an empty dict: a task that finished without one) as a `Report`;
    `claim_quotes`: the located quotes of its verified claims, by claim id, when the caller has
    the passages they point into."""
    return _Builder(data if isinstance(data, dict) else {}, claim_quotes).build()
