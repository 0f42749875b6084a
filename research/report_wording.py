"""The product's words for a report's codes, in the active language: section headings, the label
of the AI's blocks, limitations, conflict subjects, hypothesis and judgement counts, values and
computed values. The HTML view (report_view.py) and the text renderings (report_text.py) both word
a report here, so the page, the Markdown, the terminal and the e-mail say the same thing.

Nothing here is the model's: every string is a msgid of the catalogue, filled with numbers, codes'
labels (research/vocabulary_labels.py), source metadata or the characters code parsed from a span."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from agent.engine import vocabulary as V
from agent.engine.report_types import (
    Computed,
    Conflict,
    HypothesisStatus,
    Judgement,
    Limitation,
    Report,
    Value,
)
from research.vocabulary_labels import order, text

# The visible label of every block the model wrote (data-by="model" on the page; a labelled
# blockquote in the text renderings). One msgid, so a scanner can find every block by it.
MODEL_LABEL = gettext_lazy("Written by the AI — not the sources' words")
SUGGESTION_LABEL = gettext_lazy("Questions the AI suggests")


def section_heading(sub_question: int) -> str:
    if sub_question < 0:
        return _("The question as a whole")
    return _("Sub-question %(n)d") % {"n": sub_question + 1}


# The languages a report's texts may be in (a span's, a translation's), named for the reader, and
# the html lang attribute of each.
LANGUAGE_NAMES = {"en": gettext_lazy("English"), "zh": gettext_lazy("Chinese")}
LANG_ATTRIBUTES = {"en": "en", "zh": "zh-Hant"}


def language_name(code: str) -> str:
    return str(LANGUAGE_NAMES.get(code, code))


def hypothesis_heading(index: int) -> str:
    return _("Hypothesis %(n)d") % {"n": index + 1}


# What a sub-question or hypothesis of the plan states that the student's question does not (the
# plan is checked against the question, not against passages).
_PLAN_REASONS = {
    "novel_figure": gettext_lazy("states a figure your question does not"),
    "novel_year": gettext_lazy("states a year your question does not"),
    "novel_name": gettext_lazy("states a name your question does not"),
}


def not_shown_reason(kind: str, reason: str) -> str:
    """Why an item is not shown, worded for what it is."""
    if kind in ("sub_question", "hypothesis") and reason in _PLAN_REASONS:
        return str(_PLAN_REASONS[reason])
    return text(V.NOT_SHOWN_REASONS, reason)


def item_heading(index: int) -> str:
    return _("item %(n)d") % {"n": index + 1}


# ------------------------------------------------------------------ numbers


def number_text(number: float) -> str:
    """35.08 → "35.08", 120000.0 → "120,000", 158.333 → "158.33" (two decimals at most)."""
    rounded = round(number, 2)
    out = f"{rounded:,.2f}".rstrip("0").rstrip(".")
    return "0" if out in ("-0", "") else out


def value_text(value: Value) -> str:
    """A parsed value as the page states it: the span's own characters, with the year it is for."""
    if value.year is not None and value.kind != "year":
        return _("%(value)s (%(year)s)") % {"value": value.text, "year": value.year}
    return value.text


def unit_text(unit: str) -> str:
    """A value's unit as shown: percentage points by name, a currency by its code."""
    return text(V.VALUE_KINDS, "percentage_points") if unit == "pp" else unit


def computed_text(report: Report, computed: Computed) -> str:
    """ "growth from 120,000 (2019) to 310,000 (2021): +158.33%" in the reader's language."""
    inputs = [report.value(i) for i in computed.inputs]
    if len(inputs) != 2 or any(v is None for v in inputs):
        return ""
    first, second = (value_text(v) for v in inputs)
    number = number_text(computed.value)
    if computed.kind == "growth":
        shown = ("+" if computed.value > 0 else "") + number + "%"
        return _("Growth from %(first)s to %(second)s: %(value)s") % {
            "first": first,
            "second": second,
            "value": shown,
        }
    if computed.kind == "difference":
        sign = "+" if computed.value > 0 else ""
        if computed.unit == "%":
            # the difference of two percentages is in percentage points, not percent
            shown = _("%(value)s percentage points") % {"value": sign + number}
        else:
            shown = f"{sign}{number} {computed.unit}".strip()
        return _("Difference from %(first)s to %(second)s: %(value)s") % {
            "first": first,
            "second": second,
            "value": shown,
        }
    return _("Ratio of %(second)s to %(first)s: %(value)s") % {
        "first": first,
        "second": second,
        "value": number,
    }


# ------------------------------------------------------------------ tiers and counts


def tier_counts(counts: dict[str, int]) -> list[tuple[str, int]]:
    """(tier label, count) pairs, the most reliable tier first."""
    return [
        (text(V.TIERS, tier), n)
        for tier, n in sorted((counts or {}).items(), key=lambda kv: order(V.TIERS, kv[0]))
        if n
    ]


def tier_counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{label} {n}" for label, n in tier_counts(counts)) or "0"


def hypothesis_counts(status: HypothesisStatus) -> str:
    """What the hypothesis's status was computed from, worded honestly."""
    n_for, n_against = len(status.for_facts), len(status.against_facts)
    return ngettext(
        "%(for)d fact tagged for it, %(against)d against",
        "%(for)d facts tagged for it, %(against)d against",
        n_for,
    ) % {"for": n_for, "against": n_against}


def judgement_counts(judgement: Judgement) -> str:
    return _(
        "Independent sources for: %(for)s · against: %(against)s · unresolved conflicts: %(conflicts)d"
    ) % {
        "for": tier_counts_text(judgement.for_by_tier),
        "against": tier_counts_text(judgement.against_by_tier),
        "conflicts": judgement.unresolved_conflicts,
    }


# ------------------------------------------------------------------ conflicts


def conflict_subject(conflict: Conflict) -> str:
    """The subject of a conflict found by comparing values, worded from its kind, unit and year.
    (A subject that is a span is shown as that span by the caller; a contradiction the model
    marked without one is named as such.)"""
    subject = conflict.subject
    if not subject.value_kind:
        return _("The sources contradict each other")
    kind = text(V.VALUE_KINDS, subject.value_kind)
    unit = f" ({unit_text(subject.unit)})" if subject.unit and subject.unit != "%" else ""
    if subject.year is not None:
        return _("The sources give different figures (%(kind)s%(unit)s) for %(year)s") % {
            "kind": kind,
            "unit": unit,
            "year": subject.year,
        }
    return _("The sources give different figures (%(kind)s%(unit)s)") % {"kind": kind, "unit": unit}


def conflict_state(conflict: Conflict) -> str:
    if conflict.decision is not None:
        return _("decided by a reviewer")
    if conflict.status == "resolved":
        if conflict.resolution:
            return text(V.CONFLICT_RESOLUTIONS, conflict.resolution)
        return text(V.CONFLICT_STATUS, "resolved")
    return text(V.CONFLICT_STATUS, "unresolved")


def re_search_text(conflict: Conflict) -> str:
    rounds = conflict.re_search.rounds
    if not rounds:
        return ""
    return ngettext(
        "%(count)d re-search round found %(found)d new source(s)",
        "%(count)d re-search rounds found %(found)d new source(s)",
        rounds,
    ) % {"count": rounds, "found": conflict.re_search.new_sources}


def decision_text(conflict: Conflict) -> str:
    decision = conflict.decision
    if decision is None:
        return ""
    if decision.decision == "unsettleable":
        return _("A reviewer judged that the sources cannot settle this conflict.")
    return _("A reviewer decided that side %(n)s prevails.") % {"n": (decision.side or 0) + 1}


# ------------------------------------------------------------------ limitations


def _count(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def _limitation_templates(detail: dict) -> dict[str, str]:
    """The sentence of each limitation, chosen by its detail where the detail changes what is true
    (no counter-search run at all; some sub-questions only chosen by the ranking)."""
    return {
        "limit_hit": _("The research stopped at %(limit)s."),
        "tool_failed": _("A tool was unavailable: %(tool)s (%(calls)s failed calls)."),
        "no_counter_evidence": _(
            "The counter-search (%(searches)s searches) found no evidence against the main conclusions."
        )
        if str(detail.get("searches")) != "0"
        else _("No search for evidence against the main conclusions was run."),
        "unresolved_conflicts": _(
            "%(count)s disagreement(s) between sources remained after %(rounds)s targeted re-search round(s)."
        ),
        "web_only": _("%(count)s fact(s) rest only on web sources, the least reliable tier."),
        "instructions_in_sources": _(
            "%(sources)s source(s) contained instructions addressed to an AI; they were not used as evidence."
        ),
        "no_sources": _("No source that could be cited was found."),
        "no_web_tools": _("The web was not searched: the web tools were off for this research."),
        "no_facts": _(
            "No passage of the sources found could be verified as answering the question, so the report states no fact."
        ),
        "selection_failed": _("The AI could not choose passages from the sources found."),
        "selected_by_search_ranking": ngettext(
            "For %(sub_questions)s sub-question the AI chose no usable passage: the passages shown there, marked "
            "“selected by search ranking”, are those the search ranked best.",
            "For %(sub_questions)s sub-questions the AI chose no usable passage: the passages shown there, marked "
            "“selected by search ranking”, are those the search ranked best.",
            _count(detail.get("sub_questions")),
        )
        if "sub_questions" in detail
        else _("The AI chose no usable passage, so the passages shown are those the search ranked best."),
        "selection_not_run": _("No time or tokens were left to choose passages from the sources."),
        "interpretation_failed": _(
            "The AI's interpretation could not be written, so the report shows the facts alone."
        ),
        "action_failed": _(
            "The model's choice of the next search failed; the report rests on what was found until then."
        ),
        "searched_by_code": _(
            "The model could not choose a search, so the engine searched each sub-question itself."
        ),
        "plan_fallback": _(
            "The model could not make a research plan; the question itself was researched as one."
        ),
        "translation_failed": _(
            "The machine translation of the passages failed; they are shown in their own language."
        ),
        "query_translation_failed": _(
            "The AI could not translate the research question; the course materials were searched in their other language with the term pairs the materials themselves give."
        ),
    }


def limitation_text(limitation: Limitation) -> str:
    """A limitation in the reader's language from its code and detail; the code's label when the
    detail lacks what the sentence needs."""
    detail = dict(limitation.detail)
    if limitation.code == "limit_hit":
        limit = str(detail.get("reason") or detail.get("limit") or "")
        detail["limit"] = text(V.LIMITS, limit) if limit else text(V.LIMITATIONS, "limit_hit")
    template = _limitation_templates(detail).get(limitation.code)
    if template is None:
        return text(V.LIMITATIONS, limitation.code)
    try:
        return template % detail
    except (KeyError, TypeError, ValueError):
        label = text(V.LIMITATIONS, limitation.code)
        return label[:1].upper() + label[1:]
