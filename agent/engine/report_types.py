"""The report of a research, as one typed object: dataclasses, and the JSON Schema generated from
them (`REPORT_SCHEMA`, published in the OpenAPI document).

Every surface renders from this object and from nothing else: the result page, the answer bubble,
the Markdown download, the print view, the charts, the terminal, the notification e-mail, the
chat's follow-ups, a replay's comparison and the evaluation's scorer.

What a field may hold is the guarantee (docs/reports.md, "The guarantee"):

- **Facts** are the sources' own words: `Span.text` is a slice of a source's stored text that code
  cut (agent/engine/spans.py) and located (`Span.location`); a `Fact` is one to three adjacent
  spans of one source, chosen by the model (by id: the model copies nothing) or, when it chose
  nothing usable, by the search ranking.
- **Values** are parsed by code from spans (`Value`: the characters it read, the number, its unit,
  scale and year) or computed by code from such values (`Computed`, labelled as computed).
- **Source metadata** (`Source`: title, url, tool, tier, locator) and **codes** (every enum below:
  statuses, reasons, limitations), which the page words in the reader's language.
- **The model's words** live only in objects whose `by` is `"model"`: the plan (sub-questions,
  hypotheses, the question in the materials' languages), the interpretation (reasoning and
  assumptions, each citing facts), translations of spans and suggested questions. Code drops an
  item that states a figure, year, name or negation that the spans it cites lack, and lists it in
  `not_shown` by kind and reason, never with its text.
- `question` is the student's own words.

Statuses that judge the evidence are computed by code: a hypothesis's status from the facts the
model tagged for and against it, the judgement's stance from those facts by tier and from the
unresolved conflicts.

Stored reports keep their version; `from_json` reads this version and `report_legacy.from_v1`
(which imports this module, never the reverse) turns a 1.x report (claims with located quotes) into this shape, so every stored report renders.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from . import vocabulary as V

SCHEMA_VERSION = "2.0"
MAX_SPANS_PER_FACT = 3


def _enum(vocab: V.Vocabulary) -> dict:
    return {"enum": vocab.values}


# --------------------------------------------------------------------------- the sources' words


@dataclass
class Location:
    """Where a span is: the page (slide, section) when the source knows it, and character offsets
    into the source's stored text (the passage the research read)."""

    page: str = ""
    start: int = -1
    end: int = -1


@dataclass
class Span:
    """A piece of a source cut by code: a sentence (English or Chinese), a table row, a list item
    or a structured field. `id` is "<source id>.<n>": the n-th span of that source (1-based), the
    same every time the same source text is cut."""

    id: str
    source: int = field(metadata={"description": "the number [N] of its source in `sources`"})
    kind: str = field(default="sentence", metadata=_enum(V.SPAN_KINDS))
    text: str = field(
        default="", metadata={"description": "verbatim: the source's stored text from start to end"}
    )
    language: str = field(default="", metadata={"enum": ["en", "zh", ""]})
    location: Location = field(default_factory=Location)


@dataclass
class Value:
    """A value code read from a span: `text` is the span's characters it read (`start`..`end`
    into the span's text), `value` the number with its scale applied (十萬 → 100000, "35.08
    billion" → 35080000000, 二〇一一 → 2011)."""

    id: int
    span: str
    kind: str = field(metadata=_enum(V.VALUE_KINDS))
    value: float = 0.0
    unit: str = field(
        default="",
        metadata={
            "description": "'%' for percent, 'pp' for percentage points, an ISO currency code, else ''"
        },
    )
    text: str = ""
    start: int = 0
    end: int = 0
    year: int | None = field(default=None, metadata={"description": "the year the span gives this value for"})


@dataclass
class Computed:
    """A value code computed from parsed values of one unit (labelled "computed" wherever shown)."""

    id: int
    kind: str = field(metadata=_enum(V.COMPUTED_KINDS))
    inputs: list[int] = field(default_factory=list, metadata={"description": "ids of `values`, in order"})
    value: float = 0.0
    unit: str = field(
        default="", metadata={"description": "the inputs' unit; '%' for growth; '' for a ratio"}
    )


@dataclass
class StanceTag:
    hypothesis: int = field(metadata={"description": "index into plan.hypotheses (0-based)"})
    stance: str = field(metadata=_enum(V.STANCES))


@dataclass
class Fact:
    """One to three adjacent spans of one source, under one sub-question."""

    id: int
    spans: list[str] = field(metadata={"minItems": 1, "maxItems": MAX_SPANS_PER_FACT})
    source: int = field(metadata={"description": "the number [N] of its source"})
    sub_question: int = field(
        default=-1,
        metadata={"description": "index into plan.sub_questions (0-based); -1: the question as a whole"},
    )
    selected_by: str = field(default="model", metadata=_enum(V.SELECTED_BY))
    tier: str = field(default="web", metadata=_enum(V.TIERS))
    found_by: str = field(default="evidence", metadata={"enum": ["evidence", "counter_search", "conflict"]})
    stances: list[StanceTag] = field(default_factory=list)
    values: list[int] = field(
        default_factory=list, metadata={"description": "ids of `values` read from its spans"}
    )
    superseded: bool = field(
        default=False,
        metadata={"description": "on the losing side of a conflict that code or a reviewer settled"},
    )


@dataclass
class Section:
    """The facts about one sub-question, in the order the model chose (or the search ranked)."""

    sub_question: int = field(
        metadata={"description": "index into plan.sub_questions; -1: the question as a whole"}
    )
    facts: list[int] = field(default_factory=list)


# --------------------------------------------------------------------------- what code weighed


@dataclass
class ConflictSubject:
    """What a conflict is about, as data the page words: the kind, unit and year of the values
    that disagree (found by comparing them), or a span that states the subject."""

    value_kind: str = field(default="", metadata={"enum": [*V.VALUE_KINDS.values, ""]})
    unit: str = ""
    year: int | None = None
    span: str = field(default="", metadata={"description": "a span id, or ''"})


@dataclass
class ConflictSide:
    facts: list[int] = field(metadata={"minItems": 1})
    tier: str = field(metadata=_enum(V.TIERS))
    values: list[int] = field(default_factory=list)


@dataclass
class ReSearch:
    rounds: int = 0
    new_sources: int = 0
    new_facts: list[int] = field(default_factory=list)


@dataclass
class Decision:
    """A reviewer's decision on an unresolved conflict, added when the report is read (the stored
    report never changes; research/services/conflict_decisions.py)."""

    decision: str = field(metadata={"enum": ["side", "unsettleable"]})
    side: int | None = None
    reason: str = field(default="", metadata={"description": "the reviewer's own words"})
    decided_by: str = ""
    decided_at: str = ""


@dataclass
class Conflict:
    key: str = field(metadata={"description": "stable id of the conflict (its sides' facts' spans)"})
    found_by: str = field(metadata=_enum(V.CONFLICT_FOUND_BY))
    subject: ConflictSubject = field(default_factory=ConflictSubject)
    sides: list[ConflictSide] = field(default_factory=list, metadata={"minItems": 2})
    status: str = field(default="unresolved", metadata=_enum(V.CONFLICT_STATUS))
    resolution: str = field(default="", metadata={"enum": [*V.CONFLICT_RESOLUTIONS.values, ""]})
    prevailing_side: int | None = None
    re_search: ReSearch = field(default_factory=ReSearch)
    decision: Decision | None = None


@dataclass
class HypothesisStatus:
    """The status code computes for one of the plan's hypotheses (its text is the model's, in
    `plan.hypotheses`)."""

    index: int
    status: str = field(metadata=_enum(V.HYPOTHESIS_STATUS))
    for_facts: list[int] = field(default_factory=list)
    against_facts: list[int] = field(default_factory=list)


@dataclass
class Judgement:
    """Present when the question asks for a judgement: its stance computed by code from the facts
    for and against (independent sources by tier) and the unresolved conflicts. The model's
    reasoning about it is in `interpretation`."""

    stance: str = field(metadata=_enum(V.JUDGEMENT_STANCES))
    hypothesis: int | None = None
    for_by_tier: dict[str, int] = field(default_factory=dict)
    against_by_tier: dict[str, int] = field(default_factory=dict)
    unresolved_conflicts: int = 0
    facts: list[int] = field(default_factory=list)


@dataclass
class CounterEvidence:
    searched: bool = False
    searches: int = 0
    facts: list[int] = field(
        default_factory=list,
        metadata={"description": "facts against the hypotheses or found by the counter-search"},
    )
    support_by_tier: dict[str, int] = field(default_factory=dict)
    against_by_tier: dict[str, int] = field(default_factory=dict)


# --------------------------------------------------------------------------- the model's words


@dataclass
class QueryTranslation:
    language: str = field(metadata={"enum": ["en", "zh"]})
    question: str = ""
    sub_questions: list[str] = field(default_factory=list)


@dataclass
class PlanBlock:
    """The model's plan, shown as the AI's. A sub-question or hypothesis that states a figure,
    year, name or negation that the student's question lacks is shown as "" (and listed in
    `not_shown`); its facts still stand, under its number."""

    by: Literal["model"] = "model"
    sub_questions: list[str] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    search_queries: list[QueryTranslation] = field(
        default_factory=list,
        metadata={"description": "the question and sub-questions in the materials' languages"},
    )


@dataclass
class InterpretationItem:
    kind: str = field(metadata={"enum": ["reasoning", "assumption"]})
    text: str = ""
    facts: list[int] = field(default_factory=list, metadata={"minItems": 1})


@dataclass
class Interpretation:
    by: Literal["model"] = "model"
    items: list[InterpretationItem] = field(default_factory=list)


@dataclass
class Translation:
    """A machine translation of a span into the reader's language, shown beside the original."""

    span: str
    language: str = field(metadata={"enum": ["en", "zh"]})
    text: str = ""


@dataclass
class Translations:
    by: Literal["model"] = "model"
    items: list[Translation] = field(default_factory=list)


@dataclass
class Suggestions:
    """Narrower questions the model suggests (offered when little or nothing was verified)."""

    by: Literal["model"] = "model"
    items: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- the rest


@dataclass
class NotShown:
    """Something that is not in the report, by kind and reason: never with model-written text."""

    kind: str = field(metadata=_enum(V.NOT_SHOWN_KINDS))
    reason: str = field(metadata=_enum(V.NOT_SHOWN_REASONS))
    span: str = field(default="", metadata={"description": "the span concerned, when there is one"})
    index: int | None = field(
        default=None, metadata={"description": "which sub-question, hypothesis or item"}
    )


@dataclass
class Limitation:
    code: str = field(metadata=_enum(V.LIMITATIONS))
    detail: dict[str, str | int] = field(default_factory=dict)


@dataclass
class Source:
    """A source the research consulted: metadata only. `number` is the [N] shown; `cited` says
    whether a fact of the report rests on it."""

    number: int
    source_id: int = field(metadata={"description": "the engine's source-registry id (the span ids' prefix)"})
    title: str = ""
    url: str = ""
    tool: str = ""
    tier: str = field(default="web", metadata=_enum(V.TIERS))
    origin: str = field(default="external", metadata={"enum": ["internal", "external"]})
    locator: str = ""
    flagged: bool = field(default=False, metadata={"description": "holds passages addressed to an AI model"})
    cited: bool = False


@dataclass
class Report:
    schema_version: str = SCHEMA_VERSION
    question: str = ""
    language: str = field(default="zh", metadata={"enum": ["en", "zh"]})
    plan: PlanBlock = field(default_factory=PlanBlock)
    sections: list[Section] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list, metadata={"description": "every span a fact uses"})
    values: list[Value] = field(default_factory=list)
    computed: list[Computed] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    hypotheses: list[HypothesisStatus] = field(default_factory=list)
    judgement: Judgement | None = None
    counter_evidence: CounterEvidence = field(default_factory=CounterEvidence)
    interpretation: Interpretation = field(default_factory=Interpretation)
    translations: Translations = field(default_factory=Translations)
    suggestions: Suggestions = field(default_factory=Suggestions)
    limitations: list[Limitation] = field(default_factory=list)
    not_shown: list[NotShown] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)

    # ------------------------------------------------------------------ lookups

    def span(self, span_id: str) -> Span | None:
        return next((s for s in self.spans if s.id == span_id), None)

    def fact(self, fact_id: int) -> Fact | None:
        return next((f for f in self.facts if f.id == fact_id), None)

    def value(self, value_id: int) -> Value | None:
        return next((v for v in self.values if v.id == value_id), None)

    def source(self, number: int) -> Source | None:
        return next((s for s in self.sources if s.number == number), None)

    def fact_spans(self, fact: Fact) -> list[Span]:
        return [s for s in (self.span(i) for i in fact.spans) if s is not None]

    def fact_text(self, fact: Fact) -> str:
        """A fact's words as one string (its spans joined by a space, Chinese spans without)."""
        out = ""
        for span in self.fact_spans(fact):
            text = " ".join(span.text.split())
            out += ("" if not out or span.language == "zh" else " ") + text
        return out

    def shown_facts(self) -> list[Fact]:
        """The facts in the order the report shows them (section by section)."""
        seen: list[Fact] = []
        for section in self.sections:
            seen += [f for f in (self.fact(i) for i in section.facts) if f is not None and f not in seen]
        return seen

    # ------------------------------------------------------------------ (de)serialisation

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Report:
        """A stored report of this version (2.x). A 1.x report is converted by
        `report_legacy.from_v1` (research/legacy_reports.typed_report reads either)."""
        version = str((data or {}).get("schema_version") or "")
        if not version.startswith("2."):
            raise ValueError(
                f"report schema {version or '(none)'} is not 2.x: convert it with report_legacy.from_v1"
            )
        return _build(cls, data)


# --------------------------------------------------------------------------- typed (de)serialisation


def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(tp, data):
    """Build an instance of `tp` (a dataclass, list, dict, optional or scalar) from JSON data;
    unknown keys are ignored, missing ones take their defaults."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            data = {}
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = _build(hints[f.name], data[f.name])
        return tp(**kwargs)
    if origin in (list, tuple):
        (item,) = typing.get_args(tp)[:1]
        return [_build(item, x) for x in (data or [])]
    if origin is dict:
        _, item = typing.get_args(tp)
        return {str(k): _build(item, v) for k, v in (data or {}).items()}
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None:
            return None
        for arg in args:
            if dataclasses.is_dataclass(arg):
                return _build(arg, data)
        return data
    if origin is Literal:
        return data
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def _schema_of(tp) -> dict:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        props = {}
        for f in dataclasses.fields(tp):
            prop = _schema_of(hints[f.name])
            meta = dict(f.metadata)
            if "enum" in meta and prop.get("type") == "array":
                prop["items"] = {**prop["items"], "enum": meta.pop("enum")}
            prop.update(meta)
            props[f.name] = prop
        out = {
            "type": "object",
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        }
        if tp.__doc__ and not tp.__doc__.startswith(tp.__name__ + "("):
            out["description"] = " ".join(tp.__doc__.split())
        return out
    if origin in (list, tuple):
        return {"type": "array", "items": _schema_of(typing.get_args(tp)[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema_of(typing.get_args(tp)[1])}
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        options = [_schema_of(a) for a in args if a is not type(None)]
        if type(None) in args:
            options.append({"type": "null"})
        return {"anyOf": options} if len(options) > 1 else options[0]
    if origin is Literal:
        return {"enum": list(typing.get_args(tp))}
    return {
        str: {"type": "string"},
        int: {"type": "integer"},
        float: {"type": "number"},
        bool: {"type": "boolean"},
    }[tp]


def _schema() -> dict:
    schema = _schema_of(Report)
    schema["properties"]["schema_version"]["const"] = SCHEMA_VERSION
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://uedu.example/schemas/deep-research-report/{SCHEMA_VERSION}",
        "title": "DeepResearchReport",
        **schema,
    }


# The published shape of GET /api/deep_research/task/<uuid>/report, generated from the classes.
REPORT_SCHEMA = _schema()


def validate(report: dict) -> None:
    """Raise ValueError when `report` is not a valid 2.x report."""
    import jsonschema_rs

    try:
        _VALIDATOR.validate(report)
    except jsonschema_rs.ValidationError as exc:
        raise ValueError(f"report does not match its schema: {exc}") from None


def _validator():
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(REPORT_SCHEMA)


_VALIDATOR = _validator()


def integrity_problems(report: Report) -> list[str]:
    """What a report says that its own parts do not back: a fact whose spans are missing, not
    adjacent or of two sources; a value, section, conflict or interpretation item pointing at
    nothing. The engine asserts none before it returns a report; the tests check every report."""
    problems: list[str] = []
    spans = {s.id: s for s in report.spans}
    facts = {f.id: f for f in report.facts}
    values = {v.id for v in report.values}
    numbers = {s.number for s in report.sources}
    for span in report.spans:
        if span.source not in numbers:
            problems.append(f"span {span.id}: source [{span.source}] is not listed")
    for fact in report.facts:
        parts = [spans.get(i) for i in fact.spans]
        if not parts or any(p is None for p in parts):
            problems.append(f"fact {fact.id}: a span is missing")
            continue
        if len(parts) > MAX_SPANS_PER_FACT:
            problems.append(f"fact {fact.id}: more than {MAX_SPANS_PER_FACT} spans")
        if {p.source for p in parts} != {fact.source}:
            problems.append(f"fact {fact.id}: its spans are not all of source [{fact.source}]")
        ns = [int(p.id.rsplit(".", 1)[1]) for p in parts]
        if ns != list(range(ns[0], ns[0] + len(ns))):
            problems.append(f"fact {fact.id}: its spans are not adjacent")
        problems += [f"fact {fact.id}: value {v} is missing" for v in fact.values if v not in values]
    for value in report.values:
        if value.span not in spans:
            problems.append(f"value {value.id}: span {value.span} is missing")
        elif spans[value.span].text[value.start : value.end] != value.text:
            problems.append(
                f"value {value.id}: its text is not the span's characters {value.start}..{value.end}"
            )
    for computed in report.computed:
        problems += [
            f"computed {computed.id}: input {i} is missing" for i in computed.inputs if i not in values
        ]
    for section in report.sections:
        problems += [
            f"section {section.sub_question}: fact {i} is missing" for i in section.facts if i not in facts
        ]
    for conflict in report.conflicts:
        for side in conflict.sides:
            problems += [
                f"conflict {conflict.key}: fact {i} is missing" for i in side.facts if i not in facts
            ]
    for item in report.interpretation.items:
        if not item.facts or any(i not in facts for i in item.facts):
            problems.append("interpretation item: cites no fact of the report")
    for translation in report.translations.items:
        if translation.span not in spans:
            problems.append(f"translation: span {translation.span} is missing")
    return problems
