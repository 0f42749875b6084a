"""What the answer bubble and the result page show of a task, computed once in Python.

Templates receive plain values: the sanitised answer HTML, citations with their anchors and
labels, conflicts with links to their citations, the verification counts with labels."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.conf import settings
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from agent.engine import verification
from agent.engine.types import TIERS
from research.models import AnswerFeedback, ResearchClaim, ResearchMetrics, ResearchTask
from research.rendering import render_markdown
from research.selectors import FeedbackGiven, feedback_given
from research.services.conflict_decisions import conflict_key, current_decisions
from research.services.feedback import MAX_NOTE as FEEDBACK_NOTE_MAX
from research.services.plan_review import MAX_CHARS, MAX_SUB_QUESTIONS

VERDICT_LABELS = {
    "supported": gettext_lazy("supported"),
    "partial": gettext_lazy("partly supported"),
    "unsupported": gettext_lazy("not supported"),
    "unverified": gettext_lazy("not verified"),
    "no_citation": gettext_lazy("without a source"),
    "fabricated_citation": gettext_lazy("with an invented citation"),
}
LIMIT_LABELS = {
    "max_steps": gettext_lazy("the step limit"),
    "max_tokens": gettext_lazy("the token limit"),
    "max_seconds": gettext_lazy("the time limit"),
    "tool_budget": gettext_lazy("the tool-call budget"),
}


def citation_anchor(task: ResearchTask) -> str:
    """Prefix of the citation ids of one answer; unique per task, so two answers on one page never clash."""
    return f"cite-{task.task_uuid.hex[:12]}"


@dataclass
class CitationView:
    number: int
    anchor: str
    title: str
    url: str
    source_tool: str
    snippet: str
    locator: str
    internal: bool
    # The exact span the report's verified claims quote, inside its passage (the words around it
    # when the passage is known), and the page or section where it is.
    quote: str = ""
    before: str = ""
    after: str = ""
    page: str = ""
    quote_url: str = ""  # the cited material opened at that place, the quote highlighted
    before_is_start: bool = False  # the passage starts where `before` starts (no "…")
    after_is_end: bool = False


# How many characters of the passage the page shows on each side of a quote.
QUOTE_CONTEXT = 220


def _safe_link(url: str) -> str:
    """http(s) addresses, and this site's own pages (a course material: "/channels/…")."""
    if url.lower().startswith(("http://", "https://")):
        return url
    return url if url.startswith("/") and not url.startswith("//") and "\\" not in url else ""


def _quote_link(url: str, quote: str, internal: bool) -> str:
    """A course material's page opened at the quote: the page highlights `quote` (?quote=)."""
    if not (internal and url.startswith("/") and quote):
        return ""
    base, _, fragment = url.partition("#")
    return f"{base}?{urlencode({'quote': quote[:400]})}" + (f"#{fragment}" if fragment else "")


def passages_of(task: ResearchTask) -> dict[tuple[str, str], str]:
    """The stored passage text of every source the research observed, by (url, title): what a
    citation's character offsets point into."""
    found: dict[tuple[str, str], str] = {}
    for full in task.steps.exclude(result_full=None).values_list("result_full", flat=True):
        for source in (full or {}).get("sources") or []:
            if isinstance(source, dict):
                key = (str(source.get("url") or ""), str(source.get("title") or ""))
                found.setdefault(key, str(source.get("text") or source.get("snippet") or ""))
    return found


REASON_LABELS = {
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
KIND_LABELS = {
    "sentence": gettext_lazy("Sentence"),
    "cell": gettext_lazy("Table cell"),
    "heading": gettext_lazy("Heading"),
    "judgement": gettext_lazy("Judgement"),
    "assumption": gettext_lazy("Assumption"),
    "conflict": gettext_lazy("Conflict"),
    "counter_evidence": gettext_lazy("Counter-evidence"),
    "code": gettext_lazy("Code block"),
}
LIMITATION_LABELS = {
    "limit_hit": gettext_lazy("The research stopped at a limit: %(reason)s."),
    "tool_failed": gettext_lazy("A tool was unavailable: %(tool)s (%(calls)s failed calls)."),
    "no_counter_evidence": gettext_lazy(
        "The counter-search (%(searches)s searches) found no evidence against the main conclusions."
    ),
    "unresolved_conflicts": gettext_lazy(
        "%(count)s disagreement(s) remained after %(rounds)s targeted re-search round(s)."
    ),
    "web_only_claims": gettext_lazy(
        "%(count)s statement(s) rest only on web sources, the least reliable tier."
    ),
    "verification_incomplete": gettext_lazy("Not every claim could be checked."),
    "instructions_in_sources": gettext_lazy(
        "%(sources)s source(s) contained instructions addressed to an AI; they were not used as evidence."
    ),
    "no_sources": gettext_lazy("No source that could be cited was found."),
    "claims_not_drawn": gettext_lazy("No time or tokens were left to draw claims from the sources."),
    "claims_failed": gettext_lazy("The model could not state claims from the sources found."),
    "written_from_claims": gettext_lazy(
        "No time or tokens were left for the writer: the findings are the verified claims themselves."
    ),
    "no_verified_claims": gettext_lazy(
        "No statement could be verified from the sources found, so the report states none."
    ),
    "draft_check_failed": gettext_lazy(
        "The written answer could not be checked, so the report shows the verified claims themselves."
    ),
    "draft_unverified": gettext_lazy(
        "Nothing in the written answer could be verified, so the report shows the verified claims themselves."
    ),
    "writing_failed": gettext_lazy(
        "The answer could not be written, so the report shows the verified claims themselves."
    ),
    "action_failed": gettext_lazy(
        "The model's choice of the next search failed; the answer rests on what was found until then."
    ),
    "searched_by_code": gettext_lazy(
        "The model could not choose a search, so the engine searched each sub-question itself."
    ),
    "plan_fallback": gettext_lazy(
        "The model could not make a research plan; the question itself was researched as one."
    ),
}
FOUND_BY_LABELS = {
    "engine": gettext_lazy("found by the engine"),
    "verifier": gettext_lazy("found by the verifier"),
    "writer": gettext_lazy("reported by the writer"),
}


def _limitation_text(item: dict) -> str:
    code, detail = item.get("code", ""), dict(item.get("detail") or {})
    if code == "limit_hit":
        detail["reason"] = str(LIMIT_LABELS.get(detail.get("reason"), detail.get("reason", "")))
    label = LIMITATION_LABELS.get(code)
    if label is None:
        return code
    try:
        return str(label) % detail
    except (KeyError, TypeError, ValueError):
        return code


@dataclass
class ReportView:
    """The report's sections beyond the body, with their labels in the reader's language."""

    summary_html: SafeString
    findings_html: SafeString
    conflicts: list[dict]
    counter: dict | None
    judgement: dict | None
    limitations: list[str]
    not_verified: list[dict]
    nothing_verified: bool = False  # no statement could be verified: the page says so
    consulted: list[dict] = field(default_factory=list)  # then, the sources that were read


def _tier_counts(counts: dict) -> list[tuple[str, int]]:
    return [
        (str(TIER_LABELS.get(tier, tier)), n)
        for tier, n in sorted(
            (counts or {}).items(),
            key=lambda kv: list(TIER_LABELS).index(kv[0]) if kv[0] in TIER_LABELS else 9,
        )
    ]


def report_view(task: ResearchTask, anchor: str, numbers: set[int]) -> ReportView | None:
    report = task.report_json or {}
    if not report.get("schema_version"):
        return None
    findings = "\n\n".join(
        (f"## {f['heading']}\n\n" if f.get("heading") else "") + f.get("text", "")
        for f in report.get("findings", [])
    )
    conflicts = []
    decisions = current_decisions(task) if report.get("conflicts") else {}
    for c in report.get("conflicts", []):
        key = conflict_key(c)
        decided = decisions.get(key) if c.get("status") == "unresolved" else None
        conflicts.append(
            {
                "key": key,
                "unresolved": c.get("status") == "unresolved",
                # a reviewer's current decision (codes and who/when; the template words it)
                "decision": {
                    "unsettleable": decided.decision == "unsettleable",
                    "side": decided.side,
                    "side_number": (decided.side or 0) + 1,
                    "reason": decided.reason,
                    "by": decided.decided_by.username if decided.decided_by else "—",
                    "at": decided.decided_at,
                }
                if decided
                else None,
                "subject": c.get("subject", ""),
                "resolved": c.get("status") == "resolved",
                "found_by": str(FOUND_BY_LABELS.get(c.get("found_by"), c.get("found_by", ""))),
                "rounds": (c.get("re_search") or {}).get("rounds", 0),
                "new_sources": (c.get("re_search") or {}).get("new_sources", 0),
                "sides": [
                    {
                        "statement": side.get("statement", ""),
                        "citations": [n for n in side.get("citations", []) if n in numbers],
                        "tier": str(TIER_LABELS.get(side.get("tier"), side.get("tier", ""))),
                        "prevails": c.get("prevailing_side") == i,
                        "chosen_by_reviewer": decided is not None and decided.side == i,
                        # the losing side of a settled conflict: shown only here, attributed and marked
                        "superseded": c.get("status") == "resolved"
                        and c.get("prevailing_side") is not None
                        and c.get("prevailing_side") != i,
                        "sources": [src.get("title", "") for src in side.get("sources", [])],
                    }
                    for i, side in enumerate(c.get("sides", []))
                ],
            }
        )
    counter = report.get("counter_evidence") or {}
    counter_view = None
    if counter.get("searched") or counter.get("found"):
        counter_view = {
            "searches": counter.get("searches", 0),
            "queries": counter.get("queries", []),
            "found": [
                {
                    "summary": f.get("summary", ""),
                    "citations": [n for n in f.get("citations", []) if n in numbers],
                }
                for f in counter.get("found", [])
            ],
            "support": _tier_counts(counter.get("support_by_tier")),
            "against": _tier_counts(counter.get("against_by_tier")),
        }
    judgement = report.get("judgement")
    if judgement:
        judgement = {
            "html": render_markdown(
                judgement.get("text", ""), citation_anchor=anchor, citation_numbers=numbers
            ),
            "claim_ids": judgement.get("claim_ids", []),
            "assumptions": judgement.get("assumptions", []),
        }
    not_verified = [
        {
            "kind": str(KIND_LABELS.get(n.get("kind"), n.get("kind", ""))),
            "text": n.get("text"),
            "reason": str(REASON_LABELS.get(n.get("reason"), n.get("reason", ""))),
            "sources": [src.get("title", "") for src in n.get("sources", [])],
        }
        for n in report.get("not_verified", [])
    ]
    consulted = [
        {"title": str(src.get("title", "")), "url": str(src.get("url", ""))}
        for item in report.get("limitations", [])
        if item.get("code") == "no_verified_claims"
        for src in (item.get("detail") or {}).get("sources", [])
    ]
    return ReportView(
        nothing_verified=any(i.get("code") == "no_verified_claims" for i in report.get("limitations", [])),
        consulted=[
            dict(c, url=c["url"] if c["url"].lower().startswith(("http://", "https://")) else "")
            for c in consulted
        ],
        summary_html=render_markdown(
            report.get("summary", ""), citation_anchor=anchor, citation_numbers=numbers
        )
        if report.get("summary")
        else SafeString(""),
        findings_html=render_markdown(findings, citation_anchor=anchor, citation_numbers=numbers),
        conflicts=conflicts,
        counter=counter_view,
        judgement=judgement,
        limitations=[_limitation_text(item) for item in report.get("limitations", [])],
        not_verified=not_verified,
    )


@dataclass
class AnswerView:
    task: ResearchTask
    html: SafeString
    anchor: str
    report: ReportView | None = None
    citations: list[CitationView] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)
    counts: list[tuple[str, int, str]] = field(default_factory=list)  # (verdict, count, label)
    verification_incomplete: bool = False
    limit_label: str = ""
    can_acknowledge: bool = False
    # "Report a problem" offers these; "this source does not say this" belongs to one citation.
    report_reasons: list[tuple[str, str]] = field(default_factory=list)
    feedback_note_max: int = 0


def citation_views(
    raw_citations, anchor: str, passages: dict | None = None, flagged: set | frozenset = frozenset()
) -> list[CitationView]:
    """Stored citations (a research's, or an ordinary chat answer's) as the page lists them: only
    http(s) links and this site's pages, a label for an untitled source, and the quote a
    research's claims rest on inside its passage (`passages`: passages_of the task; never the
    stored passage of a `flagged` citation, which holds instructions to the model: its cleaned
    excerpt only). Used by both kinds of answer bubble."""
    citations = []
    for raw in raw_citations or []:
        try:
            number = int(raw.get("number"))
        except (TypeError, ValueError, AttributeError):
            continue
        url = _safe_link(str(raw.get("url") or ""))
        view = CitationView(
            number=number,
            anchor=f"{anchor}-{number}",
            title=str(raw.get("title") or _("(untitled source)")),
            url=url,
            source_tool=str(raw.get("source_tool") or ""),
            snippet=str(raw.get("snippet") or ""),
            locator=str(raw.get("locator") or ""),
            internal=raw.get("origin") == "internal",
        )
        _place_quote(view, raw, {} if number in flagged else passages or {})
        citations.append(view)
    return citations


def _place_quote(view: CitationView, raw: dict, passages: dict) -> None:
    """The quote inside its passage: the stored passage at the quote's offsets when they still
    point at it, else the quote found in the excerpt, else the quote alone."""
    quote = str(raw.get("quote") or "")
    if not quote:
        return
    location = raw.get("location") if isinstance(raw.get("location"), dict) else {}
    view.quote, view.page = quote, str(location.get("page") or "")
    view.quote_url = _quote_link(view.url, quote, view.internal)
    passage = passages.get((str(raw.get("url") or ""), str(raw.get("title") or "")), "")
    start, end = location.get("start", -1), location.get("end", -1)
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(passage)):
        start, end = -1, -1
    if start < 0 or passage[start:end] != quote:
        passage = view.snippet
        start = passage.find(quote)
        end = start + len(quote)
    if start < 0:
        return
    view.before = passage[max(0, start - QUOTE_CONTEXT) : start]
    view.after = passage[end : end + QUOTE_CONTEXT]
    view.before_is_start = start <= QUOTE_CONTEXT
    view.after_is_end = end + QUOTE_CONTEXT >= len(passage)


def answer_view(task: ResearchTask, user) -> AnswerView:
    anchor = citation_anchor(task)
    citations = citation_views(
        task.citations_json,
        anchor,
        passages_of(task) if any((c or {}).get("quote") for c in task.citations_json or []) else None,
        flagged={c.get("id") for c in (task.report_json or {}).get("citations", []) if c.get("flagged")},
    )
    numbers = {c.number for c in citations}
    verification = task.verification_json or {}
    conflicts = []
    for conflict in verification.get("conflicts") or []:
        positions = [
            {
                "summary": str(p.get("summary", "")),
                "citations": [n for n in p.get("citations", []) if n in numbers],
            }
            for p in conflict.get("positions", [])
        ]
        conflicts.append({"topic": conflict.get("topic", ""), "positions": positions, "anchor": anchor})
    counts = [
        (verdict, count, str(VERDICT_LABELS.get(verdict, verdict)))
        for verdict, count in sorted(
            (verification.get("counts") or {}).items(),
            key=lambda kv: list(VERDICT_LABELS).index(kv[0]) if kv[0] in VERDICT_LABELS else 99,
        )
        if count
    ]
    return AnswerView(
        task=task,
        html=render_markdown(task.final_answer, citation_anchor=anchor, citation_numbers=numbers),
        anchor=anchor,
        report=report_view(task, anchor, numbers),
        citations=citations,
        conflicts=conflicts,
        counts=counts,
        verification_incomplete=verification.get("status") == "incomplete",
        limit_label=str(LIMIT_LABELS.get(task.limit_hit, task.limit_hit)) if task.limit_hit else "",
        can_acknowledge=user.is_authenticated and user.pk == task.user_id,
    )


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
            (value, str(label))
            for value, label in AnswerFeedback.Reason.choices
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


def answer_markdown(task: ResearchTask, page_url: str) -> str:
    """The downloadable .md: question, answer and a numbered source list."""
    question = task.user_question.strip()
    lines = [f"# {question.splitlines()[0][:200]}", ""]
    if "\n" in question or len(question) > 200:
        lines += ["> " + line for line in question.splitlines()] + [""]
    report = task.report_json or {}
    if report.get("schema_version"):
        lines += report_markdown_sections(report)
    else:
        lines += [task.final_answer.strip(), ""]
    if task.citations_json:
        heading = _("Sources")
        lines += [f"## {heading}", ""]
        for c in task.citations_json:
            origin = _("Uedu") if c.get("origin") == "internal" else _("external")
            entry = f"{c.get('number')}. {c.get('title', '')}"
            if c.get("url"):
                entry += f" — <{c['url']}>"
            entry += f" ({c.get('source_tool', '')}, {origin})"
            lines.append(entry)
        lines.append("")
    lines += [
        "---",
        "",
        _(
            "This answer was compiled by AI from several sources; check the citations yourself. It may not be submitted as coursework."
        ),
        "",
        page_url,
        "",
    ]
    return "\n".join(lines)


def report_markdown_sections(report: dict) -> list[str]:
    """The report's sections as Markdown, in the fixed order of the schema, titled in the reader's
    language (the stored report holds no titles)."""
    lines: list[str] = []

    def cites(numbers) -> str:
        return "".join(f"[{n}]" for n in numbers or [])

    if report.get("summary"):
        lines += [f"## {_('Summary')}", "", report["summary"].strip(), ""]
    lines += [f"## {_('Findings')}", ""]
    for finding in report.get("findings", []):
        if finding.get("heading"):
            lines += [f"### {finding['heading']}", ""]
        lines += [finding.get("text", "").strip(), ""]
    if report.get("judgement"):
        j = report["judgement"]
        lines += [f"## {_('Judgement')} ({_('a judgement, not a fact')})", "", j.get("text", "").strip(), ""]
        if j.get("assumptions"):
            lines += [_("Assumptions:"), ""] + [f"- {a}" for a in j["assumptions"]] + [""]
    if report.get("conflicts"):
        lines += [f"## {_('Conflicts between sources')}", ""]
        for c in report["conflicts"]:
            state = (
                _("settled by the more reliable source") if c.get("status") == "resolved" else _("unresolved")
            )
            lines.append(
                f"- **{c.get('subject', '')}** ({state}; {FOUND_BY_LABELS.get(c.get('found_by'), c.get('found_by', ''))})"
            )
            for n, side in enumerate(c.get("sides", [])):
                lost = c.get("status") == "resolved" and c.get("prevailing_side") not in (None, n)
                lines.append(
                    f"  - {side.get('statement', '')} {cites(side.get('citations'))} ({TIER_LABELS.get(side.get('tier'), side.get('tier'))})"
                    + (f" — {_('superseded')}" if lost else "")
                )
        lines.append("")
    counter = report.get("counter_evidence") or {}
    if counter.get("searched") or counter.get("found"):
        lines += [f"## {_('Counter-evidence')}", ""]
        lines += [f"- {f.get('summary', '')} {cites(f.get('citations'))}" for f in counter.get("found", [])]
        support = ", ".join(f"{tier} {n}" for tier, n in _tier_counts(counter.get("support_by_tier"))) or "0"
        against = ", ".join(f"{tier} {n}" for tier, n in _tier_counts(counter.get("against_by_tier"))) or "0"
        lines += ["", f"{_('Independent sources in support:')} {support} · {_('against:')} {against}", ""]
    if report.get("limitations"):
        lines += (
            [f"## {_('Limitations')}", ""]
            + [f"- {_limitation_text(item)}" for item in report["limitations"]]
            + [""]
        )
    if report.get("not_verified"):
        lines += [f"## {_('Not verified')}", ""]
        for item in report["not_verified"]:
            text = f"“{item['text']}”" if item.get("text") else _("(text withheld)")
            sources = ", ".join(src.get("title", "") for src in item.get("sources", []))
            lines.append(
                f"- {KIND_LABELS.get(item.get('kind'), item.get('kind'))}: {text} — {REASON_LABELS.get(item.get('reason'), item.get('reason'))}"
                + (f" ({sources})" if sources else "")
            )
        lines.append("")
    return lines


# --------------------------------------------------------------------------- the claim ledger

# The engine's tier table holds each tier's label (marked for translation there), in table order.
TIER_LABELS = {name: gettext_lazy(tier.label) for name, tier in TIERS.items()}
ACTION_LABELS = dict(ResearchClaim.Action.choices)
HYPOTHESIS_LABELS = {
    "open": gettext_lazy("still open"),
    "supported": gettext_lazy("supported"),
    "refuted": gettext_lazy("refuted"),
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

    @property
    def doubtful(self) -> bool:
        return self.verdict in DOUBTFUL_VERDICTS or self.action == "dropped"


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
    counter_evidence: list[dict]
    counter_searches: int | None
    hypotheses: list[dict]

    @property
    def doubtful_count(self) -> int:
        return sum(1 for c in self.claims if c.doubtful)

    @property
    def counter_check_ran(self) -> bool:
        return self.counter_searches is not None or bool(self.counter_evidence)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{round(value * 100)}%"


def _metrics(task: ResearchTask) -> list[MetricView]:
    try:
        m = task.metrics
    except ResearchMetrics.DoesNotExist:
        return []
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
                f"{REASON_LABELS.get(reason, reason)}: {n}"
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


def detail_label(detail: str) -> str:
    """A ledger row's detail in the reader's language: the engine's own phrases (alone or joined
    with "; ") translated, anything else (the verifier's words) as it is."""

    def one(part: str) -> str:
        if part in DETAIL_LABELS:
            return str(DETAIL_LABELS[part])
        for pattern, label in DETAIL_PATTERNS:
            found = pattern.fullmatch(part)
            if found:
                return str(label) % found.groupdict()
        return part

    return "; ".join(one(part) for part in detail.split("; ")) if detail else ""


def ledger_view(task: ResearchTask) -> LedgerView:
    """The claim ledger, the quality metrics and the counter-evidence check of a finished task."""
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
                reason=detail_label(claim.reason),
                tiers=[str(TIER_LABELS.get(t, t)) for t in claim.tiers or []],
                confidence_percent=round((claim.confidence or 0) * 100),
                action=claim.action,
                action_label=str(ACTION_LABELS.get(claim.action, claim.action)),
                web_only=claim.web_only,
            )
        )
    verification = task.verification_json or {}
    counter = []
    for item in verification.get("counter_evidence") or []:
        cited = [n for n in item.get("citations", []) if isinstance(n, int)]
        counter.append(
            {
                "summary": str(item.get("summary", "")),
                "citations": [(n, f"#{anchor}-{n}" if n in numbers else "") for n in cited],
            }
        )
    searches = verification.get("counter_searches")
    hypotheses = [
        {
            "text": str(h.get("text", "")),
            "status": h.get("status", "open"),
            "label": str(HYPOTHESIS_LABELS.get(h.get("status", "open"), h.get("status", ""))),
        }
        for h in verification.get("hypotheses") or []
    ]
    return LedgerView(
        claims=claims,
        metrics=_metrics(task),
        counter_evidence=counter,
        counter_searches=searches if isinstance(searches, int) else None,
        hypotheses=hypotheses,
    )


def plan_view(task: ResearchTask) -> dict:
    """The plan as researched, with the context agreed before the run and any edits made to it."""
    plan = task.plan_json or {}
    edits = task.plan_edits_json or {}
    original = edits.get("original") or []
    return {
        "sub_questions": plan.get("sub_questions") or [],
        "hypotheses": plan.get("hypotheses") or [],
        "complexity": str(COMPLEXITY_LABELS.get(plan.get("complexity"), plan.get("complexity") or "")),
        "context": [(str(CONTEXT_LABELS.get(k, k)), v) for k, v in (task.context_json or {}).items() if v],
        "edited": bool(edits.get("sub_questions")),
        "original": original if edits.get("sub_questions") else [],
        "timed_out": bool(edits.get("timed_out")),
    }
