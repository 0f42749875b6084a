"""The words of a research's outcome, declared once: outcomes, stop reasons, limits, tiers, the
statuses and reasons of a report. Every other place derives from these tables: the report's JSON
Schema (its enums), the Django choices of the stored rows and the labels the pages translate
(`research/vocabulary_labels.py` wraps each English label in gettext).

A term is a value (what is stored and sent) and an English label (the msgid the page translates,
marked with `gettext_noop` so `makemessages` finds it). A new term is one line in its table, plus
its translation in the catalogue."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


def gettext_noop(message: str) -> str:
    """Marks a label for translation without importing Django (the page translates it)."""
    return message


@dataclass(frozen=True)
class Term:
    value: str
    label: str


class Vocabulary:
    """An ordered table of terms: iterable, `in`-testable by value, and a label by value."""

    def __init__(self, name: str, *terms: Term):
        self.name = name
        self.terms = terms
        self._by_value = {t.value: t for t in terms}
        if len(self._by_value) != len(terms):
            raise ValueError(f"{name}: a value is declared twice")

    def __iter__(self) -> Iterator[Term]:
        return iter(self.terms)

    def __contains__(self, value: object) -> bool:
        return value in self._by_value

    def __len__(self) -> int:
        return len(self.terms)

    def __getattr__(self, name: str) -> str:
        """A declared value by name (`STOP_REASONS.cancelled`), so code names a term without
        writing it as a literal: a misspelt or undeclared one fails where it is written."""
        by_value = self.__dict__.get("_by_value", {})
        if name in by_value:
            return name
        raise AttributeError(f"{name!r} is not a {self.__dict__.get('name', 'vocabulary')} value")

    @property
    def values(self) -> list[str]:
        return [t.value for t in self.terms]

    def label(self, value: str) -> str:
        """The English label of a value; an unknown value (an older row) is its own label."""
        term = self._by_value.get(value)
        return term.label if term else value

    def choices(self) -> list[tuple[str, str]]:
        """(value, English label) pairs; the Django side wraps the labels in gettext_lazy."""
        return [(t.value, t.label) for t in self.terms]

    def check(self, value: str) -> str:
        """The value, or ValueError naming the vocabulary: an engine that writes a word nobody
        declared fails where it writes it, not on the page that cannot label it."""
        if value not in self._by_value:
            raise ValueError(f"{value!r} is not a {self.name} ({', '.join(self.values)})")
        return value


_ = gettext_noop

# How a run of the engine ended. "planned": it stopped after planning, as asked (the product
# then waits for the student's review of the plan without holding a worker).
OUTCOMES = Vocabulary(
    "outcome",
    Term("completed", _("Completed")),
    Term("failed", _("Failed")),
    Term("cancelled", _("Cancelled")),
    Term("planned", _("Planned")),
)

# Why a research stopped gathering (completed researches) or ended (the others).
STOP_REASONS = Vocabulary(
    "stop reason",
    Term("sufficient", _("the evidence was judged sufficient")),
    Term("hypotheses_settled", _("every hypothesis was settled")),
    Term("model_done", _("the model had nothing more to search")),
    Term("no_new_information", _("searches stopped finding anything new")),
    Term("tool_errors", _("the tools kept failing")),
    Term("action_failed", _("the model could not choose the next search")),
    Term("limit_hit", _("a limit was reached")),
    Term("plan_review", _("waiting for the plan's review")),
    Term("cancelled", _("cancelled")),
    Term("planner_failed", _("the plan could not be made")),
    Term("llm_unavailable", _("the model server did not answer")),
    Term("internal_error", _("an internal error")),
    Term("platform_failure", _("the platform lost the research")),
)

# Which limit a research reached.
LIMITS = Vocabulary(
    "limit",
    Term("max_steps", _("the step limit")),
    Term("max_tokens", _("the token limit")),
    Term("max_seconds", _("the time limit")),
    Term("tool_budget", _("the tool-call budget")),
)

# How much a source can be trusted, highest first (agent/engine/types.py holds the ranks and weights).
TIERS = Vocabulary(
    "tier",
    Term("internal", _("Uedu internal")),
    Term("structured", _("structured data")),
    Term("scholarly", _("scholarly")),
    Term("web", _("web")),
)

# What code cut a source into (agent/engine/spans.py).
SPAN_KINDS = Vocabulary(
    "span kind",
    Term("sentence", _("sentence")),
    Term("row", _("table row")),
    Term("item", _("list item")),
    Term("field", _("field")),
)

# Who put a fact under its sub-question: the model pointed at its span, or, when the model chose
# nothing usable, the search ranking did.
SELECTED_BY = Vocabulary(
    "selection",
    Term("model", _("selected by the AI")),
    Term("search_ranking", _("selected by search ranking")),
)

# What kind of value code parsed from a span (agent/engine/values.py).
VALUE_KINDS = Vocabulary(
    "value kind",
    Term("number", _("number")),
    Term("percent", _("percent")),
    Term("percentage_points", _("percentage points")),
    Term("currency", _("amount of money")),
    Term("year", _("year")),
)

# What code computed from two parsed values of one unit.
COMPUTED_KINDS = Vocabulary(
    "computation",
    Term("difference", _("difference")),
    Term("ratio", _("ratio")),
    Term("growth", _("growth")),
)

# A fact's stance towards one of the plan's hypotheses (tagged by the model, counted by code).
STANCES = Vocabulary(
    "stance",
    Term("for", _("for")),
    Term("against", _("against")),
)

# A hypothesis's status, computed by code from the facts tagged for and against it.
HYPOTHESIS_STATUS = Vocabulary(
    "hypothesis status",
    Term("supported", _("facts for it, none against")),
    Term("refuted", _("facts against it, none for")),
    Term("contested", _("facts for and against it")),
    Term("open", _("no fact for or against it")),
)

# The judgement's stance, computed by code from the verified evidence.
JUDGEMENT_STANCES = Vocabulary(
    "judgement stance",
    Term("for", _("the evidence leans for")),
    Term("against", _("the evidence leans against")),
    Term("mixed", _("the evidence is mixed")),
    Term("insufficient", _("the evidence is insufficient")),
)

CONFLICT_STATUS = Vocabulary(
    "conflict status",
    Term("resolved", _("resolved")),
    Term("unresolved", _("unresolved")),
)

# How a conflict was found: code compared the values parsed from the spans, or the model marked
# two spans as contradicting each other.
CONFLICT_FOUND_BY = Vocabulary(
    "conflict origin",
    Term("values", _("found by comparing the figures")),
    Term("model", _("marked by the AI as contradicting")),
)

CONFLICT_RESOLUTIONS = Vocabulary(
    "conflict resolution",
    Term("higher_tier", _("the more reliable source prevails")),
    Term("reviewer", _("decided by a reviewer")),
)

# What the report lists as not shown, and why: never with model-written text, with its span where
# it has one.
NOT_SHOWN_KINDS = Vocabulary(
    "item",
    Term("span", _("Passage")),
    Term("selection", _("Selection")),
    Term("sub_question", _("Sub-question")),
    Term("hypothesis", _("Hypothesis")),
    Term("reasoning", _("Reasoning")),
    Term("assumption", _("Assumption")),
    Term("suggestion", _("Suggestion")),
    Term("translation", _("Translation")),
    Term("search_query", _("Question in another language")),
    Term("contradiction", _("Contradiction")),
)

NOT_SHOWN_REASONS = Vocabulary(
    "reason",
    Term("instruction_in_source", _("the passage addresses an AI model")),
    Term("unknown_span", _("points at a passage that does not exist")),
    Term("not_adjacent", _("joins passages that do not follow each other")),
    Term("not_a_candidate", _("points at a passage that was not offered for this sub-question")),
    Term("superseded", _("states a side that lost a settled conflict")),
    Term("novel_figure", _("states a figure its passages do not")),
    Term("novel_year", _("states a year its passages do not")),
    Term("novel_name", _("states a name its passages do not")),
    Term("novel_negation", _("adds or drops a negation")),
    Term("no_spans", _("cites no passage")),
    Term("lost_numbers", _("the translation loses or changes a number or a name")),
    Term("over_limit", _("more than the report shows")),
    Term("repeats_question", _("repeats the question or another suggestion")),
    # A report of schema 1.x listed what its writer wrote and the checks could not verify.
    Term("unverified", _("could not be verified from its sources")),
)

# The report's limitations, each worded by the page from its code and detail.
LIMITATIONS = Vocabulary(
    "limitation",
    Term("limit_hit", _("limit reached")),
    Term("tool_failed", _("a tool failed")),
    Term("no_counter_evidence", _("no counter-evidence found")),
    Term("unresolved_conflicts", _("unresolved conflicts")),
    Term("web_only", _("facts only from the web")),
    Term("instructions_in_sources", _("instructions in sources")),
    Term("no_sources", _("no sources")),
    Term("no_facts", _("nothing verified")),
    Term("no_web_tools", _("the web not searched")),
    Term("selection_failed", _("the AI's selection failed")),
    Term("selected_by_search_ranking", _("selected by search ranking")),
    Term("selection_not_run", _("no time for selection")),
    Term("interpretation_failed", _("the AI's interpretation failed")),
    Term("action_failed", _("the model's choice of search failed")),
    Term("searched_by_code", _("the engine searched")),
    Term("plan_fallback", _("no plan")),
    Term("translation_failed", _("the AI's translation failed")),
    Term("query_translation_failed", _("the AI's translation of the question failed")),
)
