"""What the page shows of a report (templates/research/_report.html), computed once in Python from
the one `Report` object: plain values, worded in the reader's language, each marked for what it is.

- Facts: spans (the sources' own words) with their citation [N], the values code parsed from them
  emphasised, and, beside a span in another language, its machine translation (the AI's words,
  labelled);
- codes worded by the page (report_wording.py, vocabulary_labels.py);
- the model's words: every one in a field whose name says so (`question`, `text` of a hypothesis
  or an interpretation item, a translation, a suggestion), which the template puts inside an element
  marked `data-by="model"` with the visible label report_wording.MODEL_LABEL, and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from agent.engine import vocabulary as V
from agent.engine.report_types import Conflict, Fact, Report, Span
from research import report_wording as W
from research.citation_view import (
    CitationView,
    Passages,
    report_citations,
)
from research.vocabulary_labels import text as label


@dataclass
class Part:
    """A piece of a span's text; `value` is the label of the value code parsed from it, if any."""

    text: str
    value: str = ""


@dataclass
class SpanView:
    id: str
    parts: list[Part]
    language: str
    translation: str = ""  # the AI's machine translation into the reader's language (model words)
    translation_language: str = ""


@dataclass
class FactView:
    id: int
    anchor: str
    number: int  # its source's [N]
    cite_href: str
    source_title: str
    tier: str
    spans: list[SpanView]
    by_ranking: bool = False
    superseded: bool = False
    counter: bool = False  # found by the counter-search

    @property
    def text(self) -> str:
        return " ".join("".join(p.text for p in s.parts) for s in self.spans)


@dataclass
class ComputedView:
    text: str
    numbers: list[tuple[int, str]]  # the inputs' sources: (number, href)


@dataclass
class SectionView:
    sub_question: int
    heading: str  # product text: "Sub-question 2"
    question: str  # the model's sub-question ("" when it was not shown)
    facts: list[FactView]
    computed: list[ComputedView] = field(default_factory=list)


@dataclass
class SideView:
    number: int
    tier: str
    facts: list[FactView]
    prevails: bool = False
    superseded: bool = False
    chosen_by_reviewer: bool = False


@dataclass
class DecisionView:
    text: str
    reason: str  # the reviewer's own words
    by: str
    at: datetime | None
    unsettleable: bool


@dataclass
class ConflictView:
    key: str
    subject: str  # product text, when the subject is not a span
    subject_fact: FactView | None  # the span that states the subject
    state: str
    state_code: str  # resolved | unresolved | decided
    found_by: str
    re_search: str
    sides: list[SideView]
    decision: DecisionView | None = None


@dataclass
class HypothesisView:
    heading: str
    text: str  # the model's hypothesis ("" when it was not shown)
    status: str
    status_label: str
    counts: str
    for_facts: list[tuple[int, str]]  # (its source's [N], href)
    against_facts: list[tuple[int, str]]


@dataclass
class JudgementView:
    stance: str
    stance_label: str
    hypothesis: str  # "Hypothesis 2", or ""
    counts: str
    facts: list[tuple[int, str]]


@dataclass
class InterpretationView:
    kind: str
    kind_label: str
    text: str  # the model's words
    facts: list[tuple[int, str]]


@dataclass
class QueriesView:
    """The plan's question and sub-questions in one of the materials' languages (the AI's
    translation, used to search them)."""

    language: str  # "English", in the reader's language
    lang: str  # the html lang attribute
    question: str  # the model's words ("" when not shown)
    sub_questions: list[tuple[str, str]]  # (heading, the model's words), those shown


@dataclass
class NotShownView:
    reason: str
    where: str = ""  # "Sub-question 3", "item 2"
    span_text: str = ""  # the source's words, when it is a span that may be shown
    number: int | None = None
    href: str = ""


@dataclass
class ReportView:
    anchor: str
    language: str
    sections: list[SectionView]
    conflicts: list[ConflictView]
    hypotheses: list[HypothesisView]
    judgement: JudgementView | None
    counter: dict | None
    interpretation: list[InterpretationView]
    suggestions: list[str]  # the model's words
    limitations: list[str]
    why: list[str]  # the limitations that say why nothing was verified (all but "nothing verified")
    not_shown: list[tuple[str, list[NotShownView]]]  # by kind
    citations: list[CitationView]  # the sources a fact rests on
    consulted: list[CitationView]  # the others the research read
    computed: list[ComputedView] = field(default_factory=list)  # across sections
    search_queries: list[QueriesView] = field(default_factory=list)  # the plan's, the AI's words
    nothing_verified: bool = False
    # The hook for a "retry with the web on" action: the page shows it in the
    # nothing-verified block when a view sets it.
    retry_url: str = ""

    @property
    def fact_count(self) -> int:
        return sum(len(s.facts) for s in self.sections)


def _value_parts(report: Report, span: Span) -> list[Part]:
    """The span's text cut around the values code parsed from it."""
    found = sorted(
        (v for v in report.values if v.span == span.id and 0 <= v.start < v.end <= len(span.text)),
        key=lambda v: v.start,
    )
    parts, at = [], 0
    for value in found:
        if value.start < at or span.text[value.start : value.end] != value.text:
            continue
        if value.start > at:
            parts.append(Part(span.text[at : value.start]))
        description = label(V.VALUE_KINDS, value.kind)
        if value.year is not None and value.kind != "year":
            description = f"{description} · {value.year}"
        parts.append(Part(value.text, value=description))
        at = value.end
    if at < len(span.text) or not parts:
        parts.append(Part(span.text[at:]))
    return parts


class _Builder:
    def __init__(self, report: Report, anchor: str):
        self.report = report
        self.anchor = anchor
        self.translations = {t.span: t for t in report.translations.items if t.text}
        self.numbers = {s.number for s in report.sources if s.cited}

    def href(self, number: int) -> str:
        return f"#{self.anchor}-{number}" if number in self.numbers else ""

    def fact_href(self, fact_id: int) -> str:
        return f"#{self.anchor}-fact-{fact_id}"

    def fact_links(self, ids) -> list[tuple[int, str]]:
        """(its source's [N], the link to the fact on the page) for each fact the page shows."""
        shown = {i for s in self.report.sections for i in s.facts}
        return [
            (fact.source, self.fact_href(fact.id) if fact.id in shown else self.href(fact.source))
            for fact in (self.report.fact(i) for i in ids)
            if fact is not None
        ]

    def span_view(self, span: Span) -> SpanView:
        view = SpanView(id=span.id, parts=_value_parts(self.report, span), language=span.language)
        translation = self.translations.get(span.id)
        if translation is not None and translation.language != span.language:
            view.translation, view.translation_language = translation.text, translation.language
        return view

    def fact_view(self, fact: Fact) -> FactView:
        source = self.report.source(fact.source)
        return FactView(
            id=fact.id,
            anchor=f"{self.anchor}-fact-{fact.id}",
            number=fact.source,
            cite_href=self.href(fact.source),
            source_title=source.title if source else "",
            tier=label(V.TIERS, fact.tier),
            spans=[self.span_view(s) for s in self.report.fact_spans(fact)],
            by_ranking=fact.selected_by == "search_ranking",
            superseded=fact.superseded,
            counter=fact.found_by == "counter_search",
        )

    def facts(self, ids) -> list[FactView]:
        return [self.fact_view(f) for f in (self.report.fact(i) for i in ids) if f is not None and f.spans]

    def computed_view(self, computed) -> ComputedView | None:
        words = W.computed_text(self.report, computed)
        if not words:
            return None
        numbers: list[tuple[int, str]] = []
        for value_id in computed.inputs:
            value = self.report.value(value_id)
            span = self.report.span(value.span) if value else None
            if span is not None and span.source not in [n for n, _ in numbers]:
                numbers.append((span.source, self.href(span.source)))
        return ComputedView(text=words, numbers=numbers)

    # ------------------------------------------------------------------ parts of the page

    def sections(self) -> tuple[list[SectionView], list[ComputedView]]:
        sections = []
        questions = self.report.plan.sub_questions
        value_section: dict[int, int] = {}
        for section in self.report.sections:
            facts = self.facts(section.facts)
            if not facts:
                continue
            n = section.sub_question
            sections.append(
                SectionView(
                    sub_question=n,
                    heading=W.section_heading(n),
                    question=questions[n] if 0 <= n < len(questions) else "",
                    facts=facts,
                )
            )
            for fact in (self.report.fact(i) for i in section.facts):
                for value_id in fact.values if fact else []:
                    value_section.setdefault(value_id, len(sections) - 1)
        across = []
        for computed in self.report.computed:
            view = self.computed_view(computed)
            if view is None:
                continue
            homes = {value_section.get(i) for i in computed.inputs}
            if len(homes) == 1 and None not in homes:
                sections[homes.pop()].computed.append(view)
            else:
                across.append(view)
        return sections, across

    def conflict_view(self, conflict: Conflict) -> ConflictView:
        subject_fact = None
        if conflict.subject.span:
            span = self.report.span(conflict.subject.span)
            source = self.report.source(span.source) if span else None
            if span is not None and source is not None and not source.flagged:
                subject_fact = FactView(
                    id=0,
                    anchor="",
                    number=span.source,
                    cite_href=self.href(span.source),
                    source_title=source.title,
                    tier=label(V.TIERS, source.tier),
                    spans=[self.span_view(span)],
                )
        decided = conflict.decision
        sides = []
        for i, side in enumerate(conflict.sides):
            settled = conflict.status == "resolved" and conflict.prevailing_side is not None
            sides.append(
                SideView(
                    number=i + 1,
                    tier=label(V.TIERS, side.tier),
                    facts=self.facts(side.facts),
                    prevails=settled and conflict.prevailing_side == i,
                    superseded=settled and conflict.prevailing_side != i,
                    chosen_by_reviewer=decided is not None
                    and decided.decision == "side"
                    and decided.side == i,
                )
            )
        decision = None
        if decided is not None:
            try:
                at = datetime.fromisoformat(decided.decided_at) if decided.decided_at else None
            except ValueError:
                at = None
            decision = DecisionView(
                text=W.decision_text(conflict),
                reason=decided.reason,
                by=decided.decided_by or "—",
                at=at,
                unsettleable=decided.decision == "unsettleable",
            )
        return ConflictView(
            key=conflict.key,
            subject="" if subject_fact else W.conflict_subject(conflict),
            subject_fact=subject_fact,
            state=W.conflict_state(conflict),
            state_code="decided" if decided else conflict.status,
            found_by=label(V.CONFLICT_FOUND_BY, conflict.found_by),
            re_search=W.re_search_text(conflict),
            sides=sides,
            decision=decision,
        )

    def hypotheses(self) -> list[HypothesisView]:
        texts = self.report.plan.hypotheses
        return [
            HypothesisView(
                heading=W.hypothesis_heading(h.index),
                text=texts[h.index] if 0 <= h.index < len(texts) else "",
                status=h.status,
                status_label=label(V.HYPOTHESIS_STATUS, h.status),
                counts=W.hypothesis_counts(h),
                for_facts=self.fact_links(h.for_facts),
                against_facts=self.fact_links(h.against_facts),
            )
            for h in self.report.hypotheses
        ]

    def judgement(self) -> JudgementView | None:
        j = self.report.judgement
        if j is None:
            return None
        return JudgementView(
            stance=j.stance,
            stance_label=label(V.JUDGEMENT_STANCES, j.stance),
            hypothesis=W.hypothesis_heading(j.hypothesis) if j.hypothesis is not None else "",
            counts=W.judgement_counts(j),
            facts=self.fact_links(j.facts),
        )

    def counter(self) -> dict | None:
        c = self.report.counter_evidence
        if not (c.searched or c.facts):
            return None
        return {
            "searches": c.searches,
            "facts": self.facts(c.facts),
            "support": W.tier_counts(c.support_by_tier),
            "against": W.tier_counts(c.against_by_tier),
        }

    def interpretation(self) -> list[InterpretationView]:
        return [
            InterpretationView(
                kind=item.kind,
                kind_label=label(V.NOT_SHOWN_KINDS, item.kind),
                text=item.text,
                facts=self.fact_links(item.facts),
            )
            for item in self.report.interpretation.items
            if item.text
        ]

    def search_queries(self) -> list[QueriesView]:
        out = []
        for block in self.report.plan.search_queries:
            shown = [(W.section_heading(n), q) for n, q in enumerate(block.sub_questions) if q]
            if block.question or shown:
                out.append(
                    QueriesView(
                        language=W.language_name(block.language),
                        lang=W.LANG_ATTRIBUTES.get(block.language, ""),
                        question=block.question,
                        sub_questions=shown,
                    )
                )
        return out

    def not_shown(self) -> list[tuple[str, list[NotShownView]]]:
        groups: dict[str, list[NotShownView]] = {}
        for item in self.report.not_shown:
            view = NotShownView(reason=W.not_shown_reason(item.kind, item.reason))
            if item.index is not None:
                if item.kind in ("sub_question", "search_query"):
                    view.where = W.section_heading(item.index)
                elif item.kind == "hypothesis":
                    view.where = W.hypothesis_heading(item.index)
                else:
                    view.where = W.item_heading(item.index)
            span = self.report.span(item.span) if item.span else None
            source = self.report.source(span.source) if span else None
            # A span is the source's words, shown unless its source addresses the model.
            if (
                span is not None
                and source is not None
                and not source.flagged
                and item.reason != "instruction_in_source"
            ):
                view.span_text, view.number, view.href = span.text, span.source, self.href(span.source)
            groups.setdefault(item.kind, []).append(view)
        ordered = sorted(
            groups.items(),
            key=lambda kv: V.NOT_SHOWN_KINDS.values.index(kv[0]) if kv[0] in V.NOT_SHOWN_KINDS else 99,
        )
        return [(label(V.NOT_SHOWN_KINDS, kind), items) for kind, items in ordered]

    def build(self, passages: Passages) -> ReportView:
        sections, across = self.sections()
        view = ReportView(
            anchor=self.anchor,
            language=self.report.language,
            sections=sections,
            computed=across,
            conflicts=[self.conflict_view(c) for c in self.report.conflicts],
            hypotheses=self.hypotheses(),
            judgement=self.judgement(),
            counter=self.counter(),
            interpretation=self.interpretation(),
            suggestions=[s for s in self.report.suggestions.items if s],
            limitations=[W.limitation_text(item) for item in self.report.limitations],
            why=[W.limitation_text(item) for item in self.report.limitations if item.code != "no_facts"],
            not_shown=self.not_shown(),
            citations=report_citations(self.report, self.anchor, passages, cited=True),
            consulted=report_citations(self.report, self.anchor, passages, cited=False),
            search_queries=self.search_queries(),
        )
        view.nothing_verified = not sections
        return view


def report_view(report: Report, *, anchor: str, passages: Passages) -> ReportView:
    return _Builder(report, anchor).build(passages)
