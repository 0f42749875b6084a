"""The report, assembled by code from what the phases found: the typed `Report`
(report_types.py), the citations a task stores and the verification record the metrics read.

Every fact is a located span of a numbered source; every value was read from a fact's span;
every status was computed; the model's words are only in the plan, the interpretation, the
translations and the suggestions, already checked (interpretation.py). Before the report leaves,
`integrity_problems` must find nothing and the JSON must be valid against the published schema:
a report that fails either is a bug, and the research fails rather than show it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import report_types as R
from . import vocabulary as V
from .answer import scrub_links
from .conflicts import Conflict, superseded
from .interpretation import Interpreted
from .quantities import Measures
from .selection import Dropped, Picked
from .state import RunContext
from .types import Citation, Source, tier_weight
from .weighing import Counter, HypothesisWeight, Stance

LOW_CREDIBILITY = 0.65
SNIPPET_CHARS = 300


@dataclass
class CounterSearch:
    """What the counter-search did."""

    ran: bool = False
    searches: int = 0
    queries: list[str] = field(default_factory=list)


@dataclass
class Findings:
    """What the finishing phases found, handed to assembly."""

    index: object = None  # spans.SpanIndex
    facts: list[Picked] = field(default_factory=list)
    measures: Measures = field(default_factory=Measures)
    conflicts: list[Conflict] = field(default_factory=list)
    conflict_rounds: int = 0
    dropped: list[Dropped] = field(default_factory=list)
    limitations: list[dict] = field(default_factory=list)
    targets: list[int] = field(default_factory=list)  # sub-question indexes in the report's order
    plan_sub_questions: list[str] = field(default_factory=list)
    plan_hypotheses: list[str] = field(default_factory=list)
    plan_search_queries: list[dict] = field(default_factory=list)  # interpretation.query_translations
    weights: list[HypothesisWeight] = field(default_factory=list)
    stance: Stance | None = None
    counter: Counter | None = None
    interpretation: Interpreted = field(default_factory=Interpreted)
    selection_calls: int = 0
    by_ranking: int = 0


@dataclass
class Assembled:
    report: R.Report
    citations: list[Citation]
    verification: dict


# An address written into a title ("Dashboards\" url=\"https://…\""): a source's metadata that
# poses as another source's link. The report links a source by its own url field only.
_ADDRESS_IN_TITLE = re.compile(r"(?:[a-z][a-z0-9+.-]*:)?//[^\s<>\"']+|www\.[^\s<>\"']+", re.I)


def _title(source: Source) -> str:
    title = _ADDRESS_IN_TITLE.sub("", scrub_links(source.title, set())[0])
    return title.strip()[:200] or source.url or source.source_tool


def _snippet(run: RunContext, source_id: int, source: Source) -> str:
    flags = run.registry.flagged(source_id)
    # A flagged source's excerpt is shown without the passages that address the model.
    text = flags.clean_text[:SNIPPET_CHARS] if flags else source.snippet
    return scrub_links(text, set())[0]


def _limitations(items: list[dict]) -> list[R.Limitation]:
    out: list[R.Limitation] = []
    seen: set[str] = set()
    for item in items:
        code = V.LIMITATIONS.check(item["code"])
        if code in seen:
            continue
        seen.add(code)
        detail = {
            str(k): (v if isinstance(v, int) and not isinstance(v, bool) else str(v))
            for k, v in item.get("detail", {}).items()
        }
        out.append(R.Limitation(code=code, detail=detail))
    return out


def assemble(run: RunContext, found: Findings, counter: CounterSearch, limitations: list[dict]) -> Assembled:
    registry, index = run.registry, found.index
    lost = superseded(found.conflicts)
    by_id = {f.id: f for f in found.facts}
    shown = [f for f in found.facts if f.id not in lost]

    # Sections: the targets in the plan's order, each fact in the order it was chosen.
    sections = []
    for target in found.targets:
        ids = [f.id for f in shown if f.sub_question == target]
        if ids:
            sections.append(R.Section(sub_question=target, facts=ids))

    # Sources: numbered as the report shows them (facts, then the conflicts' other facts), then
    # every other source the research consulted.
    number: dict[int, int] = {}
    in_sections = [by_id[i] for s in sections for i in s.facts]
    in_conflicts = [by_id[i] for c in found.conflicts for i in sorted(c.facts()) if i in by_id]
    for fact in in_sections + in_conflicts:
        number.setdefault(fact.source_id, len(number) + 1)
    cited = set(number)
    for source_id, _ in registry.items():
        number.setdefault(source_id, len(number) + 1)
    used = {f.id for f in in_sections + in_conflicts}
    facts = [f for f in found.facts if f.id in used]

    spans: list[R.Span] = []
    for fact in facts:
        for span_id in fact.spans:
            cut = index.get(span_id)
            spans.append(
                R.Span(
                    id=span_id,
                    source=number[cut.source_id],
                    kind=V.SPAN_KINDS.check(cut.kind),
                    text=cut.text,
                    language=cut.language if cut.language in ("en", "zh") else "",
                    location=R.Location(page=str(cut.page or ""), start=cut.start, end=cut.end),
                )
            )
    readings = [r for r in found.measures.readings if r.fact in used]
    kept_values = {r.id for r in readings}
    values = [
        R.Value(
            id=r.id,
            span=r.span,
            kind=V.VALUE_KINDS.check(r.kind),
            value=r.value,
            unit=r.unit,
            text=r.text,
            start=r.start,
            end=r.end,
            year=r.year,
        )
        for r in readings
    ]
    computed = [
        R.Computed(id=d.id, kind=V.COMPUTED_KINDS.check(d.kind), inputs=d.inputs, value=d.value, unit=d.unit)
        for d in found.measures.derived
        if all(i in kept_values for i in d.inputs)
    ]
    report_facts = [
        R.Fact(
            id=f.id,
            spans=list(f.spans),
            source=number[f.source_id],
            sub_question=f.sub_question,
            selected_by=V.SELECTED_BY.check(f.selected_by),
            tier=V.TIERS.check(registry.get(f.source_id).tier),
            found_by=f.found_by if f.found_by in ("evidence", "counter_search", "conflict") else "evidence",
            stances=[R.StanceTag(hypothesis=h, stance=V.STANCES.check(s)) for h, s in f.stances],
            values=[r.id for r in readings if r.fact == f.id],
            superseded=f.id in lost,
        )
        for f in facts
    ]
    conflicts = [
        R.Conflict(
            key=c.key,
            found_by=V.CONFLICT_FOUND_BY.check(c.found_by),
            subject=R.ConflictSubject(value_kind=c.value_kind, unit=c.unit, year=c.year, span=c.span),
            sides=[
                R.ConflictSide(facts=s.facts, tier=V.TIERS.check(s.tier), values=s.values) for s in c.sides
            ],
            status=V.CONFLICT_STATUS.check(c.status),
            resolution=c.resolution,
            prevailing_side=c.prevailing_side,
            re_search=R.ReSearch(
                rounds=c.re_search["rounds"],
                new_sources=c.re_search["new_sources"],
                new_facts=[i for i in c.re_search["new_facts"] if i in used],
            ),
        )
        for c in found.conflicts
    ]
    hypotheses = [
        R.HypothesisStatus(
            index=w.index,
            status=V.HYPOTHESIS_STATUS.check(w.status),
            for_facts=w.for_facts,
            against_facts=w.against_facts,
        )
        for w in found.weights
    ]
    judgement = None
    if run.plan.asks_for_judgement and found.stance is not None:
        st = found.stance
        judgement = R.Judgement(
            stance=V.JUDGEMENT_STANCES.check(st.stance),
            hypothesis=st.hypothesis,
            for_by_tier=st.for_by_tier,
            against_by_tier=st.against_by_tier,
            unresolved_conflicts=st.unresolved_conflicts,
            facts=st.facts,
        )
    ce = found.counter or Counter([], {}, {})
    counter_evidence = R.CounterEvidence(
        searched=counter.ran,
        searches=counter.searches,
        facts=[i for i in ce.facts if i in used],
        support_by_tier=ce.support_by_tier,
        against_by_tier=ce.against_by_tier,
    )
    interp = found.interpretation
    lang = run.lang
    span_ids = {s.id for s in spans}
    report = R.Report(
        question=run.inp.question,
        language=lang,
        plan=R.PlanBlock(
            sub_questions=found.plan_sub_questions,
            hypotheses=found.plan_hypotheses,
            search_queries=[R.QueryTranslation(**q) for q in found.plan_search_queries],
        ),
        sections=sections,
        facts=report_facts,
        spans=spans,
        values=values,
        computed=computed,
        conflicts=conflicts,
        hypotheses=hypotheses,
        judgement=judgement,
        counter_evidence=counter_evidence,
        interpretation=R.Interpretation(
            items=[
                R.InterpretationItem(kind=k, text=t, facts=[i for i in ids if i in used])
                for k, t, ids in interp.items
                if any(i in used for i in ids)
            ]
        ),
        translations=R.Translations(
            items=[
                R.Translation(span=s, language=lang, text=t) for s, t in interp.translations if s in span_ids
            ]
        ),
        suggestions=R.Suggestions(items=list(interp.suggestions)),
        not_shown=[
            R.NotShown(
                kind=V.NOT_SHOWN_KINDS.check(d.kind),
                reason=V.NOT_SHOWN_REASONS.check(d.reason),
                span=d.span,
                index=d.index,
            )
            for d in found.dropped
        ],
        sources=[
            R.Source(
                number=n,
                source_id=source_id,
                title=_title(registry.get(source_id)),
                url=registry.get(source_id).url,
                tool=registry.get(source_id).source_tool,
                tier=V.TIERS.check(registry.get(source_id).tier),
                origin=registry.get(source_id).origin,
                locator=registry.get(source_id).locator,
                flagged=bool(registry.flagged(source_id)),
                cited=source_id in cited,
            )
            for source_id, n in sorted(number.items(), key=lambda kv: kv[1])
        ],
    )
    report.limitations = _limitations(limitations + _report_limitations(run, report, counter, found))
    problems = R.integrity_problems(report)
    if problems:
        raise AssertionError("the report does not hold together: " + "; ".join(problems[:5]))
    R.validate(report.to_json())
    citations = _citations(run, report)
    return Assembled(report=report, citations=citations, verification=_record(run, report, found, citations))


def _report_limitations(
    run: RunContext, report: R.Report, counter: CounterSearch, found: Findings
) -> list[dict]:
    out = []
    shown = report.shown_facts()
    if not len(run.registry):
        out.append({"code": "no_sources", "detail": {}})
    elif not shown:
        out.append({"code": "no_facts", "detail": {"sources": len(run.registry)}})
    if not shown and not run.web_offered:
        out.append({"code": "no_web_tools", "detail": {}})
    if counter.ran and len(run.registry) and not report.counter_evidence.facts:
        out.append({"code": "no_counter_evidence", "detail": {"searches": counter.searches}})
    unresolved = [c for c in report.conflicts if c.status == "unresolved"]
    if unresolved:
        out.append(
            {
                "code": "unresolved_conflicts",
                "detail": {"count": len(unresolved), "rounds": found.conflict_rounds},
            }
        )
    web = sum(1 for f in shown if f.tier == "web")
    if shown and web == len(shown):
        out.append({"code": "web_only", "detail": {"facts": web}})
    flagged = sum(1 for f in run.registry.flags.values() if f)
    if flagged:
        out.append({"code": "instructions_in_sources", "detail": {"sources": flagged}})
    return out


def _citations(run: RunContext, report: R.Report) -> list[Citation]:
    """One per source of the report, in its numbering: what the task stores (citations_json),
    with the first span a fact of the report quotes from it."""
    first_span: dict[int, R.Span] = {}
    for fact in report.shown_facts() + report.facts:
        for span in report.fact_spans(fact):
            first_span.setdefault(span.source, span)
    out = []
    for s in report.sources:
        source = run.registry.get(s.source_id)
        span = first_span.get(s.number)
        out.append(
            Citation(
                number=s.number,
                source_id=s.source_id,
                title=s.title,
                url=s.url,
                source_tool=s.tool,
                snippet=_snippet(run, s.source_id, source),
                tier=s.tier,
                origin=s.origin,
                locator=s.locator,
                quote=span.text if span else "",
                location=(
                    {"page": span.location.page, "start": span.location.start, "end": span.location.end}
                    if span
                    else {"page": str((source.meta or {}).get("page") or ""), "start": -1, "end": -1}
                ),
            )
        )
    return out


def _record(run: RunContext, report: R.Report, found: Findings, citations: list[Citation]) -> dict:
    """The verification record stored on the task (verification_json): the ledger rows (facts and
    what was not shown; never a model's words), and the counts the metrics read."""
    weigh = run.credibility or tier_weight
    shown = report.shown_facts()
    ledger = []
    for fact in shown + [f for f in report.facts if f.superseded]:
        source = report.source(fact.source)
        weight = round(weigh(run.registry.get(source.source_id)), 3)
        ledger.append(
            {
                "kind": "fact",
                "text": report.fact_text(fact),
                "span_ids": list(fact.spans),
                "citations": [fact.source],
                "verdict": "supported",
                "reason": "superseded" if fact.superseded else fact.selected_by,
                "confidence": weight,
                "tiers": [fact.tier],
                "web_only": fact.tier == "web",
                "action": "dropped" if fact.superseded else "kept",
            }
        )
    numbers = {s.source_id: s.number for s in report.sources}
    for item in report.not_shown:
        cut = found.index.get(item.span) if item.span and found.index is not None else None
        # A not-shown item's text is its span's own words, or nothing: a model's text is never
        # stored, nor a passage that addresses the model.
        text = cut.text if cut is not None and not cut.flagged else ""
        source = run.registry.get(cut.source_id) if cut is not None else None
        ledger.append(
            {
                "kind": item.kind,
                "text": text,
                "span_ids": [item.span] if item.span else [],
                "citations": [numbers[cut.source_id]] if cut is not None and cut.source_id in numbers else [],
                "verdict": "instruction_in_source"
                if item.reason == "instruction_in_source"
                else "unsupported",
                "reason": item.reason,
                "confidence": 0.0,
                "tiers": [source.tier] if source is not None else [],
                "web_only": bool(source is not None and source.tier == "web"),
                "action": "dropped",
            }
        )
    cited = [c for c in citations if report.source(c.number) and report.source(c.number).cited]
    low = sum(1 for c in cited if weigh(run.registry.get(c.source_id)) < LOW_CREDIBILITY)
    polluted = sum(
        1
        for c in cited
        if weigh(run.registry.get(c.source_id)) < LOW_CREDIBILITY or run.registry.flagged(c.source_id)
    )
    removed: dict[str, int] = {}
    for item in report.not_shown:
        removed[item.reason] = removed.get(item.reason, 0) + 1
    unresolved = [c for c in report.conflicts if c.status == "unresolved"]

    def sources_of(source_ids) -> list[dict]:
        return [
            {"source_tool": s.source_tool, "url": s.url, "tier": s.tier}
            for s in (run.registry.get(i) for i in source_ids)
            if s is not None
        ]

    # What each source was found to be, for the sources' history (research.services.credibility):
    # a fact is a passage the source really holds and the research stood on; a source that
    # holds passages addressing the model counts against its tool and site once.
    evidence = [
        {"verdict": "supported", "sources": sources_of([report.source(f.source).source_id])} for f in shown
    ]
    evidence += [
        {"verdict": "unsupported", "sources": sources_of([source_id])}
        for source_id, flags in sorted(run.registry.flags.items())
        if flags
    ]
    return {
        "status": "complete"
        if not any(x.code in ("selection_failed", "selection_not_run") for x in report.limitations)
        else "incomplete",
        "claims": ledger,
        "evidence": evidence,
        "counts": {"facts": len(shown), "not_shown": len(report.not_shown)},
        "facts": len(shown),
        "by_model": sum(1 for f in shown if f.selected_by == "model"),
        "by_ranking": sum(1 for f in shown if f.selected_by == "search_ranking"),
        "selection_calls": found.selection_calls,
        "values": len(report.values),
        "computed": len(report.computed),
        "conflicts": [
            {
                "key": c.key,
                "found_by": c.found_by,
                "sides": [{"facts": s.facts, "tier": s.tier} for s in c.sides],
            }
            for c in unresolved
        ],
        "conflicts_found": len(report.conflicts),
        "conflicts_marked_by_model": sum(1 for c in report.conflicts if c.found_by == "model"),
        "conflicts_shown": len(report.conflicts),
        "conflict_rounds": found.conflict_rounds,
        "counter_searches": report.counter_evidence.searches if report.counter_evidence.searched else None,
        "web_only_claims": sum(1 for f in shown if f.tier == "web"),
        "low_credibility_sources": low,
        "flagged_sources_cited": sum(1 for c in cited if run.registry.flagged(c.source_id)),
        "source_pollution_rate": round(polluted / len(cited), 4) if cited else None,
        "removed": removed,
        "internal_sources": sum(1 for c in cited if c.origin == "internal"),
        "external_sources": sum(1 for c in cited if c.origin == "external"),
        "hypotheses": [{"index": h.index, "status": h.status} for h in report.hypotheses],
        "links_removed": found.interpretation.links_removed,
        "instruction_echoes_removed": found.interpretation.instruction_echoes,
        "interpretation": {
            "ran": found.interpretation.ran,
            "items": len(report.interpretation.items),
            "suggestions": len(report.suggestions.items),
            "translations": len(report.translations.items),
        },
        "retries": run.retries,
    }
