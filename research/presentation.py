"""What the answer bubble and the result page show of a task, computed once in Python.

The report's parts come from the one typed report (agent/engine/report_types.Report, with the
reviewers' decisions: research/services/conflict_decisions.py) through report_view.py; the text
renderings through report_text.py. This module adds what belongs to the task: its anchor, its
limit, the reader's feedback box, the plan and the ledger of the result page."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.conf import settings
from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from agent.engine import novelty, verification
from agent.engine import vocabulary as V
from agent.engine.report_types import Report
from research.charts import Chart, report_charts
from research.citation_view import CitationView, Passages, citation_views
from research.models import AnswerFeedback, ResearchClaim, ResearchMetrics, ResearchTask
from research.rendering import render_markdown
from research.report_text import report_markdown
from research.report_view import ReportView, report_view
from research.selectors import FeedbackGiven, feedback_given
from research.services import retry
from research.services.conflict_decisions import report_with_decisions
from research.services.feedback import MAX_NOTE as FEEDBACK_NOTE_MAX
from research.services.plan_review import MAX_CHARS, MAX_SUB_QUESTIONS
from research.vocabulary_labels import text as label


def citation_anchor(task: ResearchTask) -> str:
    """Prefix of the citation ids of one answer; unique per task, so two answers on one page never clash."""
    return f"cite-{task.task_uuid.hex[:12]}"


def task_report(task: ResearchTask) -> Report | None:
    """The task's report with the reviewers' current decisions; None for a task stored without
    one (it did not complete, or finished before reports existed)."""
    return report_with_decisions(task) if task.report_json else None


@dataclass
class AnswerView:
    task: ResearchTask
    anchor: str
    report: ReportView | None = None
    # A research stored before reports existed: its answer, the AI's words (the page labels them).
    legacy_html: SafeString = SafeString("")
    citations: list[CitationView] = field(default_factory=list)
    limit_label: str = ""
    can_acknowledge: bool = False


def answer_view(task: ResearchTask, user, report: Report | None = None) -> AnswerView:
    anchor = citation_anchor(task)
    view = AnswerView(
        task=task,
        anchor=anchor,
        limit_label=label(V.LIMITS, task.limit_hit) if task.limit_hit else "",
        can_acknowledge=user.is_authenticated and user.pk == task.user_id,
    )
    report = report or task_report(task)
    if report is not None:
        view.report = report_view(report, anchor=anchor, passages=Passages(task))
        view.citations = view.report.citations
        if view.report.nothing_verified and retry.offered(user, task):
            view.report.retry_url = reverse("research_retry_with_web", args=[task.task_uuid])
    else:
        view.citations = citation_views(task.citations_json, anchor)
        view.legacy_html = render_markdown(
            task.final_answer, citation_anchor=anchor, citation_numbers={c.number for c in view.citations}
        )
    return view


def task_charts(task: ResearchTask, report: Report | None = None) -> list[Chart]:
    report = report or task_report(task)
    return report_charts(report) if report is not None else []


# The feedback box's two forms: "not useful" (a rating with an optional reason) and "report a problem".
FEEDBACK_FORMS = ("not_useful", "report")


@dataclass
class FeedbackBox:
    """The answer's feedback box as one reader sees it (research/_feedback_box.html): what they
    already said, which form is open (one of FEEDBACK_FORMS, or none), what it holds, and the
    last message (thanks, or why the server refused)."""

    task: ResearchTask
    given: FeedbackGiven
    form: str = ""
    reason: str = ""
    note: str = ""
    message: str = ""
    reasons: list[tuple[str, str]] = field(default_factory=list)
    note_max: int = FEEDBACK_NOTE_MAX


def feedback_box(
    task: ResearchTask, user, *, form: str = "", reason: str = "", note: str = "", message: str = ""
) -> FeedbackBox:
    return FeedbackBox(
        task=task,
        given=feedback_given(user, task),
        form=form if form in FEEDBACK_FORMS else "",
        reason=reason,
        note=note,
        message=message,
        reasons=[
            (value, str(reason_label))
            for value, reason_label in AnswerFeedback.Reason.choices
            if value != AnswerFeedback.Reason.SOURCE_DOES_NOT_SAY
        ],
    )


def progress_limits() -> dict:
    """The engine's limits as the card shows them before the plan reports its own."""
    return {
        "max_steps": settings.UEDU_DR_MAX_STEPS,
        "max_tokens": settings.UEDU_DR_MAX_TOKENS,
        "max_sub_questions": MAX_SUB_QUESTIONS,
        "max_sub_question_chars": MAX_CHARS,
    }


def task_markdown(task: ResearchTask, *, page_url: str = "", base_url: str = "") -> str:
    """The task's report as Markdown in the active language (report_text.py): the download, the
    API's answer. A task stored before reports existed gives its answer as the AI's words."""
    return report_markdown(
        task_report(task),
        question=task.user_question,
        legacy_answer="" if task.report_json else task.final_answer,
        legacy_citations=None if task.report_json else task.citations_json,
        limit_hit=task.limit_hit,
        page_url=page_url,
        base_url=base_url or settings.UEDU_SITE_URL,
    )


# --------------------------------------------------------------------------- the claim ledger

ACTION_LABELS = dict(ResearchClaim.Action.choices)
# Why a unit of a 1.x answer left its body (the metrics of researches stored before reports of spans).
REMOVED_REASON_LABELS = {
    "no_citation": gettext_lazy("cites no verified claim"),
    "fabricated_citation": gettext_lazy("cites a source that does not exist"),
    "unsupported": gettext_lazy("no verified claim says this"),
    "figure_mismatch": gettext_lazy("the figure differs from the verified claim it cites"),
    "instruction_in_source": gettext_lazy("instruction found in source"),
    "unverified": gettext_lazy("could not be checked"),
    "partial": gettext_lazy("only partly supported: replaced by the text of the claims it cites"),
    "not_in_claims": gettext_lazy("states words that no verified claim it cites states"),
    "superseded": gettext_lazy("states a side that lost a settled conflict"),
}
COMPLEXITY_LABELS = {
    "simple": gettext_lazy("simple"),
    "moderate": gettext_lazy("moderate"),
    "complex": gettext_lazy("complex"),
}
CONTEXT_LABELS = {
    "time_range": gettext_lazy("Time range"),
    "subject": gettext_lazy("Subject"),
    "entities": gettext_lazy("Entities compared"),
    "metrics": gettext_lazy("Figures"),
    "source_language": gettext_lazy("Source language"),
    "source_preference": gettext_lazy("Preferred sources"),
}
# The units a 1.x writer wrote: a ledger row of one of these kinds holds the model's words (a row
# of a report of spans holds a fact's or a passage's own words, or none).
WRITER_KINDS = {"sentence", "cell", "heading", "judgement"}
# Claims the reader should not take at face value: the ledger shows them apart.
DOUBTFUL_VERDICTS = {"unsupported", "no_citation", "fabricated_citation"}


@dataclass
class ClaimView:
    index: int
    text: str
    citations: list[tuple[int, str]]  # (number, "#anchor" or "" when the number is not in the list)
    verdict: str
    verdict_label: str
    reason: str
    tiers: list[str]
    confidence_percent: int
    action: str
    action_label: str
    web_only: bool
    by_model: bool = True  # the text is the model's (a 1.x writer's unit)
    reason_by_model: bool = False
    # A row of a report of spans: a fact (its source's words) or an item the report did not show.
    of_spans: bool = False
    credibility_percent: int | None = None  # a fact's source's credibility weight

    @property
    def doubtful(self) -> bool:
        """A 1.x unit the reader should not take at face value (a report of spans shows none)."""
        if self.of_spans:
            return False
        return self.verdict in DOUBTFUL_VERDICTS or self.action == "dropped"

    @property
    def not_shown(self) -> bool:
        return self.of_spans and self.action == "dropped"


@dataclass
class MetricView:
    key: str
    label: str
    value: str
    detail: str


@dataclass
class LedgerView:
    claims: list[ClaimView]
    metrics: list[MetricView]
    of_spans: bool = False  # the ledger of a report of spans (schema 2.x): facts and what was not shown

    @property
    def doubtful_count(self) -> int:
        return sum(1 for c in self.claims if c.doubtful)

    @property
    def not_shown_count(self) -> int:
        return sum(1 for c in self.claims if c.not_shown)


def removed_reason_label(reason: str) -> str:
    """Why something left a report, in the reader's language: a 1.x unit's reason, or a code of
    what a report of spans did not show."""
    if reason in REMOVED_REASON_LABELS:
        return str(REMOVED_REASON_LABELS[reason])
    if reason in V.NOT_SHOWN_REASONS:
        return label(V.NOT_SHOWN_REASONS, reason)
    return reason


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{round(value * 100)}%"


def _metrics_of_spans(m: ResearchMetrics) -> list[MetricView]:
    """The metrics of a report of spans, as they read there: every fact is a passage of its cited
    source by construction, so what counts is what was kept out, how conflicts were found and how
    trustworthy the cited sources are."""
    marked = m.conflicts_reported_by_writer or 0
    return [
        MetricView(
            "facts",
            _("Facts shown"),
            str(m.factual_sentences),
            _("each a passage of the source it cites"),
        ),
        MetricView(
            "removed_from_body",
            _("Not shown"),
            str(m.removed_from_body),
            ", ".join(
                f"{removed_reason_label(reason)}: {n}"
                for reason, n in sorted((m.removed_reasons or {}).items())
            )
            or _("nothing was kept out"),
        ),
        MetricView(
            "conflicts_by_source",
            _("Conflicts: by figures / marked by the AI"),
            f"{max(m.conflicts_found - marked, 0)} / {marked}",
            _("found by comparing the values read, against marked by the AI as contradicting"),
        ),
        MetricView(
            "source_pollution_rate",
            _("Source pollution"),
            _percent(m.source_pollution_rate),
            _("cited sources that are low-tier or contained instructions"),
        ),
        MetricView(
            "low_credibility_share",
            _("Low-credibility sources"),
            _percent(m.low_credibility_share),
            _("%(low)d of %(total)d cited sources")
            % {"low": m.low_credibility_citations, "total": m.citations},
        ),
    ]


def _metrics(task: ResearchTask, of_spans: bool = False) -> list[MetricView]:
    try:
        m = task.metrics
    except ResearchMetrics.DoesNotExist:
        return []
    if of_spans:
        return _metrics_of_spans(m)
    return [
        MetricView(
            "citation_coverage",
            _("Citation coverage"),
            _percent(m.citation_coverage),
            _("%(cited)d of %(total)d factual sentences and table cells cite a source (%(cells)d cells)")
            % {"cited": m.cited_sentences, "total": m.factual_sentences, "cells": m.table_cells},
        ),
        MetricView(
            "removed_from_body",
            _("Removed from the body"),
            str(m.removed_from_body),
            ", ".join(
                f"{removed_reason_label(reason)}: {n}"
                for reason, n in sorted((m.removed_reasons or {}).items())
            )
            or _("nothing was removed"),
        ),
        MetricView(
            "conflicts_by_source",
            _("Conflicts: engine / writer"),
            f"{m.conflicts_found} / {m.conflicts_reported_by_writer}",
            _("found by comparing the claims, against reported by the writer"),
        ),
        MetricView(
            "source_pollution_rate",
            _("Source pollution"),
            _percent(m.source_pollution_rate),
            _("cited sources that are low-tier or contained instructions"),
        ),
        MetricView(
            "unsupported_rate",
            _("Unsupported claims"),
            _percent(m.unsupported_rate),
            _("%(n)d claims unsupported, uncited or citing an invented source") % {"n": m.unsupported_claims},
        ),
        MetricView(
            "conflicts",
            _("Conflicts found / shown"),
            f"{m.conflicts_found} / {m.conflicts_shown}",
            _("disagreements between sources, and how many the answer shows"),
        ),
        MetricView(
            "low_credibility_share",
            _("Low-credibility sources"),
            _percent(m.low_credibility_share),
            _("%(low)d of %(total)d cited sources")
            % {"low": m.low_credibility_citations, "total": m.citations},
        ),
    ]


# What code wrote as a check's detail, worded in the reader's language; a detail the verifier
# model wrote is its data and is shown as written.
DETAIL_LABELS = {
    verification.INSTRUCTION_TEXT: gettext_lazy("instruction found in source"),
    verification.NO_CITATION_TEXT: gettext_lazy("no claim or source cited"),
    verification.SUPERSEDED_TEXT: gettext_lazy("states a side that lost a settled conflict"),
    verification.NO_CLAIM_SAYS_TEXT: gettext_lazy("no verified claim says this"),
    verification.FIGURE_MISMATCH_TEXT: gettext_lazy("the figure differs from the verified claims it cites"),
    verification.NO_VERDICT_TEXT: gettext_lazy("the verifier gave no verdict"),
    verification.CLAIMS_DO_NOT_SAY_TEXT: gettext_lazy("the verified claims it cites do not say this"),
    verification.PARTLY_SUPPORTED_TEXT: gettext_lazy("partly supported by the claims it cites"),
    verification.QUOTES_NOTHING_TEXT: gettext_lazy("the claim quotes nothing"),
    verification.FIGURE_NOT_QUOTED_TEXT: gettext_lazy("its quotes do not state this figure"),
    verification.PERIOD_NOT_QUOTED_TEXT: gettext_lazy("its quotes and sources do not name this period"),
    verification.ENTITY_NOT_QUOTED_TEXT: gettext_lazy("its quotes and sources do not name this entity"),
    verification.OPPOSITE_DIRECTION_TEXT: gettext_lazy("its quotes say the opposite direction"),
    verification.RESTATES_QUOTE_TEXT: gettext_lazy("restates its quote"),
}
DETAIL_PATTERNS = (
    (
        re.compile(re.escape(verification.NOT_IN_CLAIMS_TEXT) + r"(?P<words>.+)", re.S),
        gettext_lazy("words no cited claim states: %(words)s"),
    ),
    (
        re.compile(verification.QUOTE_MISSING_TEXT.format(n=r"(?P<n>\d+)", source=r"\d+")),
        gettext_lazy("quote %(n)s is not in its source"),
    ),
)


def detail_label(detail: str) -> tuple[str, bool]:
    """A ledger row's detail in the reader's language: the engine's own phrases (alone or joined
    with "; ") translated, anything else (the verifier's words) as it is; and whether any part
    is the model's (then the page shows it as the AI's words)."""
    by_model = False

    def one(part: str) -> str:
        nonlocal by_model
        if part in DETAIL_LABELS:
            return str(DETAIL_LABELS[part])
        for pattern, wording in DETAIL_PATTERNS:
            found = pattern.fullmatch(part)
            if found:
                return str(wording) % found.groupdict()
        by_model = True
        return part

    text = "; ".join(one(part) for part in detail.split("; ")) if detail else ""
    return text, by_model


def ledger_view(task: ResearchTask) -> LedgerView:
    """The ledger and the quality metrics of a finished task: for a report of spans, its facts
    (their sources' words, who chose them, the source's credibility) and what it did not show
    (kind and reason); for a 1.x research, its writer's units with their verdicts."""
    of_spans = str((task.report_json or {}).get("schema_version") or "").startswith("2.")
    if of_spans:
        return _ledger_of_spans(task)
    anchor = citation_anchor(task)
    numbers = set()
    for raw in task.citations_json or []:
        try:
            numbers.add(int(raw.get("number")))
        except (TypeError, ValueError):
            continue
    verdicts = dict(ResearchClaim.Verdict.choices)
    claims = []
    for claim in task.claims.order_by("index"):
        if claim.is_plan_heading:
            continue  # a heading that repeats the plan states nothing to check
        if claim.reason in V.NOT_SHOWN_REASONS:  # a row of a report of spans: codes only
            reason, reason_by_model = label(V.NOT_SHOWN_REASONS, claim.reason), False
        elif claim.reason in V.SELECTED_BY:
            reason, reason_by_model = label(V.SELECTED_BY, claim.reason), False
        else:
            reason, reason_by_model = detail_label(claim.reason)
        cited = []
        for n in claim.citations or []:
            if isinstance(n, int):
                cited.append((n, f"#{anchor}-{n}" if n in numbers else ""))
        claims.append(
            ClaimView(
                index=claim.index,
                text=claim.text,
                citations=cited,
                verdict=claim.verdict,
                verdict_label=str(verdicts.get(claim.verdict, claim.verdict)),
                reason=reason,
                by_model=claim.kind in WRITER_KINDS,
                reason_by_model=reason_by_model,
                tiers=[label(V.TIERS, t) for t in claim.tiers or []],
                confidence_percent=round((claim.confidence or 0) * 100),
                action=claim.action,
                action_label=str(ACTION_LABELS.get(claim.action, claim.action)),
                web_only=claim.web_only,
            )
        )
    return LedgerView(claims=claims, metrics=_metrics(task))


def _ledger_of_spans(task: ResearchTask) -> LedgerView:
    anchor = citation_anchor(task)
    numbers = {s.get("number") for s in (task.report_json or {}).get("sources") or [] if s.get("cited")}
    kept, dropped = str(ACTION_LABELS["kept"]), _("not shown")
    rows = []
    for claim in task.claims.order_by("index"):
        fact = claim.kind == "fact"
        if fact:
            what = _("a passage of its source")
            why = label(V.SELECTED_BY, claim.reason) if claim.reason in V.SELECTED_BY else ""
            if claim.reason in V.NOT_SHOWN_REASONS:  # a superseded fact
                why = label(V.NOT_SHOWN_REASONS, claim.reason)
        else:
            what = label(V.NOT_SHOWN_KINDS, claim.kind) if claim.kind in V.NOT_SHOWN_KINDS else claim.kind
            why = label(V.NOT_SHOWN_REASONS, claim.reason) if claim.reason in V.NOT_SHOWN_REASONS else ""
        rows.append(
            ClaimView(
                index=claim.index,
                text=claim.text,  # a span's words, or nothing: never the model's
                citations=[
                    (n, f"#{anchor}-{n}" if n in numbers else "")
                    for n in claim.citations or []
                    if isinstance(n, int)
                ],
                verdict=claim.verdict,
                verdict_label=what,
                reason=why,
                by_model=False,
                tiers=[label(V.TIERS, t) for t in claim.tiers or []],
                confidence_percent=round((claim.confidence or 0) * 100),
                action=claim.action,
                action_label=kept if claim.action == "kept" else dropped,
                web_only=claim.web_only,
                of_spans=True,
                credibility_percent=round((claim.confidence or 0) * 100) if fact else None,
            )
        )
    return LedgerView(claims=rows, metrics=_metrics(task, of_spans=True), of_spans=True)


def _plan_grounds(task: ResearchTask) -> list[str]:
    return [task.user_question] + [str(v) for v in (task.context_json or {}).values() if v]


def _plan_text(text: str, grounds: list[str]) -> str:
    """A sub-question of the stored plan as the page may show it (as the AI's): "" when it states
    a figure, year, name or negation that the student's question and agreed context lack, the
    rule the report's plan follows (agent/engine/interpretation.plan_texts)."""
    text = " ".join(str(text or "").split())
    return "" if not text or novelty.novel(text, grounds) else text


def plan_view(task: ResearchTask, report: Report | None = None) -> dict:
    """The plan as researched, with the context agreed before the run and any edits made to it.

    The stored plan is the model's raw plan: the page shows its sub-questions as the report's plan
    shows them (checked by code), or, for a task without a report, checked by the same rule; one
    that is not shown keeps its number, without its words."""
    plan = task.plan_json or {}
    edits = task.plan_edits_json or {}
    grounds = _plan_grounds(task)
    raw = [sq for sq in plan.get("sub_questions") or [] if isinstance(sq, dict)]
    if (
        report is not None
        and report.schema_version.startswith("2.")
        and len(report.plan.sub_questions) == len(raw)
    ):
        texts = list(report.plan.sub_questions)
    else:
        texts = [_plan_text(sq.get("question", ""), grounds) for sq in raw]
    # numbered as the report's sections are: one that is not shown keeps its place, without words
    sub_questions = [
        {"question": text, "suggested_tools": sq.get("suggested_tools") or [] if text else []}
        for sq, text in zip(raw, texts, strict=True)
    ]
    original = [_plan_text(q, grounds) for q in (edits.get("original") or [])]
    return {
        "sub_questions": sub_questions,
        "not_shown": sum(1 for sq in sub_questions if not sq["question"]),
        "complexity": str(COMPLEXITY_LABELS.get(plan.get("complexity"), "")),
        "context": [(str(CONTEXT_LABELS.get(k, k)), v) for k, v in (task.context_json or {}).items() if v],
        "edited": bool(edits.get("sub_questions")),
        "original": [q for q in original if q] if edits.get("sub_questions") else [],
        "timed_out": bool(edits.get("timed_out")),
    }
