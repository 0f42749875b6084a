"""What the scoring reads of a finished research: the ONE place that knows how a task stores its
answer. Everything else in the evaluation works on an Observation.

A task with a typed report (`report_json` of schema 2.x, agent/engine/report_types.Report) is read
from that object:

- **units** (what the answer asserts of its sources) are the facts the report shows, section by
  section, each with its one source: the text is the fact's spans as code cut them
  (`Report.fact_text`), `spans` their ids. A fact on the losing side of a settled conflict is not
  asserted (it is shown as superseded) and is no unit; each conflict is one unit that sets its
  sides' facts side by side, citing their sources. A value code computed (`Computed`: growth,
  ratio, difference) is a unit of kind "computed" that states its inputs' spans and the result;
  it cites its inputs' sources. Code guarantees its arithmetic, so the scoring does not ask the
  judge whether the passages entail it (no citation or claim-precision question); it backs gold
  facts for fact recall like any unit, with the value checked by code.
- **model words** (`model_words`: the plan's sub-questions, hypotheses and query translations,
  the interpretation, translations of spans and suggested questions) are the AI's, marked `by:
  "model"`. They are never a substantive claim of the sources: not units, so they neither earn
  nor cost citation recall, claim precision or fact recall, and a report with only model words
  abstained. But they are shown to the student, so they are part of what the answer asserts for
  obedience and injection: an invented figure or a planted instruction's content in the model's
  words counts (scoring.py).
- **answer** is the report as the reader meets it, as text: per section its sub-question as a
  heading and its facts with their [N]; the conflicts; the interpretation, translations and
  suggestions (readability and the code half of obedience read it).
- **sources** are the report's sources that a unit cites, with the passage the research read
  (the step's stored text of that source), title, URL, tier, tool and `flagged`.

Any other task (a 1.x report, the Markdown era) is read from `ResearchTask.final_answer`
(Markdown): every factual sentence and every data cell of every table is a unit, with the citation
numbers it carries; `citations_json` maps a number to its source and `passages_by_number` to the
passage the research read. A 1.x `report_json` adds its conflicts as units (each side by side,
with its citations) and its citations' `flagged` marks; before that, conflicts are a section of
the Markdown and the pipeline's ⚠ notes are stripped here. Results folders of every version store
the Observation itself (results.py), so they are judged again without reading a task."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.engine import verification
from agent.engine.answer import MARKER, is_factual, marker_ids, segments
from agent.engine.report_types import Report
from research.models import ResearchTask
from research.selectors import passages_by_number


@dataclass
class Unit:
    text: str  # without citation markers
    citations: list[int]
    # "sentence", "cell", "conflict" (a reported conflict, its sides side by side), "fact" (a
    # typed report's fact: its spans) or "computed" (a value code computed from facts' values)
    kind: str
    label: str = ""  # cells: the row label (with the caption, when the table has one)
    column: str = ""  # cells: the column header
    spans: list[str] = field(default_factory=list)  # facts: the ids of the spans it is made of

    @property
    def judged(self) -> bool:
        """Is the judge asked whether its passages entail it? Not for code's arithmetic."""
        return self.kind != "computed"


@dataclass
class ModelWords:
    """Words of a typed report's `by: "model"` blocks: shown as the AI's, never a claim of the
    sources, read for obedience."""

    kind: str  # sub_question, hypothesis, query, reasoning, assumption, translation, suggestion
    text: str
    facts: list[int] = field(default_factory=list)


@dataclass
class CitedSource:
    number: int
    title: str
    url: str
    tier: str
    tool: str
    passage: str
    flagged: bool = False  # the pipeline found text addressed to an AI model in it


@dataclass
class Observation:
    task_uuid: str
    status: str
    error: str = ""
    answer: str = ""
    units: list[Unit] = field(default_factory=list)
    sources: dict[int, CitedSource] = field(default_factory=dict)
    tokens: int = 0
    cost_usd: float = 0.0
    duration_seconds: float | None = None
    model: str = ""
    limitations: list[str] = field(default_factory=list)  # the report's limitation codes
    # The verified claims the answer was written from (kind, text, entity, metric, period, value),
    # when the task stores them: reproducibility compares runs on these, not on wording.
    claim_records: list[dict] = field(default_factory=list)
    # Every source the tools returned (cited or not), for the retrieval metric; None: not known.
    retrieved: list[CitedSource] | None = None
    model_words: list[ModelWords] = field(default_factory=list)  # typed reports only
    report_version: str = ""  # the stored report's schema_version ("" for none)

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def claims(self) -> list[str]:
        return [u.text for u in self.units]


_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def _plain(text: str) -> str:
    text = re.sub(r"\*\*|__|`", "", MARKER.sub("", text))
    return re.sub(r"\s+", " ", re.sub(r"[ \t]+([。．.,，！!？?；;])", r"\1", text)).strip()


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


# The pipeline's own annotations (⚠ marks, "web sources only", the notes under the answer) are
# interface words, not claims of the answer: they leave the body before it is cut into units.
# (Markdown-era pipelines keep them in verification.TEXT; the claims-first one only has the opt-in MARKS.)
_NOTES = {**getattr(verification, "TEXT", {}), **getattr(verification, "MARKS", {})}
_MARKS = sorted(
    {
        _NOTES[key][lang]
        for key in ("unverified", "uncited", "web_only")
        if key in _NOTES
        for lang in ("en", "zh")
    },
    key=len,
    reverse=True,
)
_NOTE_LINES = [
    re.compile("^>?\\s*" + ".*".join(re.escape(part) for part in _NOTES[key][lang].split("{n}")) + "\\s*$")
    for key in ("web_note", "no_counter", "unresolved_after")
    if key in _NOTES
    for lang in ("en", "zh")
]


def body(markdown: str) -> str:
    for mark in _MARKS:
        markdown = markdown.replace(mark.strip(), "")
    lines = [line for line in markdown.splitlines() if not any(p.match(line.strip()) for p in _NOTE_LINES)]
    return "\n".join(lines)


_CAPTION = re.compile(r"^(#{1,6}\s+|\*\*|(Table|表)\s*\d*\s*[:：.]?)")


def _caption(line: str) -> str:
    """The line just above a table is its caption when it is a heading, a bold line or "Table …"
    (a list item or a paragraph is not)."""
    line = line.strip()
    if not line or len(line) > 160 or not _CAPTION.match(line):
        return ""
    return _plain(re.sub(r"^#{1,6}\s+", "", line)).rstrip(":：")


def table_units(markdown: str) -> list[Unit]:
    """Each data cell of a Markdown table as a claim: "[<caption> — ]<row label> — <column header>:
    <cell>". A cell alone ("USD 44.06 billion") supports nothing; with its caption and labels the
    judge can tell which company, quarter and figure it states."""
    units, header, in_table, caption, previous = [], [], False, "", ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if not stripped.startswith("|"):
            header, in_table = [], False
            if stripped:
                previous = stripped
            continue
        if not header and not in_table:
            caption = _caption(previous)
        if _SEPARATOR.match(stripped):
            in_table = True
            continue
        cells = _cells(stripped)
        if not in_table:
            header = cells
            continue
        label = _plain(cells[0]) if cells else ""
        if caption:
            label = f"{caption} — {label}"
        for column, cell in enumerate(cells[1:], start=1):
            value = _plain(cell)
            if not value or value in {"-", "–", "—", "n/a", "N/A"}:
                continue
            head = _plain(header[column]) if column < len(header) else ""
            units.append(
                Unit(
                    text=f"{label} — {head}: {value}",
                    citations=marker_ids(cell) or marker_ids(cells[0]),
                    kind="cell",
                    label=label,
                    column=head,
                )
            )
    return units


def sentence_units(markdown: str) -> list[Unit]:
    return [
        Unit(text=_plain(s.text), citations=s.ids, kind="sentence")
        for s in segments(markdown)
        if s.sentence and is_factual(s)
    ]


def conflict_units(report: dict) -> list[Unit]:
    """Each conflict the report shows, as one unit that sets its sides side by side."""
    units = []
    for conflict in report.get("conflicts") or []:
        sides = conflict.get("sides") or []
        text = f"{conflict.get('subject', '')}: " + "; ".join(
            _plain(side.get("statement", "")) for side in sides
        )
        citations = list(dict.fromkeys(n for side in sides for n in side.get("citations", [])))
        units.append(Unit(text=text, citations=citations, kind="conflict"))
    return units


def observe(task: ResearchTask) -> Observation:
    observation = Observation(
        task_uuid=str(task.task_uuid),
        status=task.status,
        error=task.error or "",
        answer=task.final_answer or "",
        tokens=task.tokens_used,
        cost_usd=float(task.cost_usd),
        duration_seconds=task.duration_seconds,
        model=task.model_name or "",
    )
    report = getattr(task, "report_json", None) or {}
    observation.report_version = str(report.get("schema_version") or "")
    if task.status != ResearchTask.Status.COMPLETED:
        return observation
    steps = list(task.steps.exclude(result_full=None).order_by("index"))
    observation.retrieved = [
        CitedSource(
            number=source.get("id", 0),
            title=source.get("title", ""),
            url=source.get("url", ""),
            tier=source.get("tier", ""),
            tool=step.tool_name,
            passage=source.get("text") or source.get("snippet") or "",
        )
        for step in steps
        for source in (step.result_full or {}).get("sources", [])
    ]
    if observation.report_version.startswith("2."):
        text_by_source = {s.number: s.passage for s in observation.retrieved}
        return read_report(Report.from_json(report), observation, text_by_source)
    text = body(task.final_answer)
    observation.units = sentence_units(text) + table_units(text) + conflict_units(report)
    observation.limitations = [
        str(x.get("code", "")) if isinstance(x, dict) else str(x) for x in report.get("limitations") or []
    ]
    observation.claim_records = [
        c
        for c in (getattr(task, "verification_json", None) or {}).get("evidence_claims") or []
        if c.get("verdict") in ("supported", "partial") and not c.get("reason") and not c.get("flagged")
    ]
    passages = passages_by_number(task)
    flagged = {c.get("id") for c in report.get("citations", []) if c.get("flagged")}
    for c in task.citations_json or []:
        observation.sources[c["number"]] = CitedSource(
            number=c["number"],
            title=c.get("title", ""),
            url=c.get("url", ""),
            tier=c.get("tier", ""),
            tool=c.get("source_tool", ""),
            passage=passages.get(c["number"], ""),
            flagged=c["number"] in flagged,
        )
    return observation


# --------------------------------------------------------------------------- typed reports (2.x)


def _number(value: float) -> str:
    return f"{value:.6g}"


def _computed_text(report: Report, computed) -> tuple[str, list[int]]:
    """A computed value as a statement: its inputs (each with the span it was read from) and the
    result, and the sources of those spans."""
    inputs, cited = [], []
    for value_id in computed.inputs:
        value = report.value(value_id)
        span = report.span(value.span) if value else None
        if value is None:
            continue
        inputs.append(f"{value.text} ({' '.join(span.text.split())})" if span else value.text)
        if span and span.source not in cited:
            cited.append(span.source)
    unit = "%" if computed.unit == "%" else (f" {computed.unit}" if computed.unit else "")
    return f"{computed.kind} computed from {' and '.join(inputs)}: {_number(computed.value)}{unit}", cited


def report_units(report: Report) -> list[Unit]:
    """What a typed report asserts of its sources: its shown facts (not the superseded ones), its
    conflicts (sides side by side), and the values code computed from them."""
    units = [
        Unit(text=report.fact_text(f), citations=[f.source], kind="fact", spans=list(f.spans))
        for f in report.shown_facts()
        if not f.superseded
    ]
    for conflict in report.conflicts:
        sides, cited = [], []
        for side in conflict.sides:
            facts = [f for f in (report.fact(i) for i in side.facts) if f is not None]
            sides.append(" ".join(report.fact_text(f) for f in facts))
            cited += [f.source for f in facts if f.source not in cited]
        units.append(Unit(text="; ".join(sides), citations=cited, kind="conflict"))
    for computed in report.computed:
        text, cited = _computed_text(report, computed)
        units.append(Unit(text=text, citations=cited, kind="computed"))
    return units


def model_words(report: Report) -> list[ModelWords]:
    words = [ModelWords("sub_question", q) for q in report.plan.sub_questions if q.strip()]
    words += [ModelWords("hypothesis", h) for h in report.plan.hypotheses if h.strip()]
    for query in report.plan.search_queries:
        words += [ModelWords("query", q) for q in [query.question, *query.sub_questions] if q.strip()]
    words += [
        ModelWords(i.kind, i.text, list(i.facts)) for i in report.interpretation.items if i.text.strip()
    ]
    words += [ModelWords("translation", t.text) for t in report.translations.items if t.text.strip()]
    words += [ModelWords("suggestion", s) for s in report.suggestions.items if s.strip()]
    return words


def report_text(report: Report) -> str:
    """The report as the reader meets it, as Markdown-like text: interface words (labels, section
    titles the page adds) are not part of it, only what the report holds."""
    lines: list[str] = []
    questions = report.plan.sub_questions
    for section in report.sections:
        facts = [f for f in (report.fact(i) for i in section.facts) if f is not None and not f.superseded]
        if not facts:
            continue
        if 0 <= section.sub_question < len(questions) and questions[section.sub_question].strip():
            lines += ["", f"## {questions[section.sub_question]}", ""]
        lines += [f"- {report.fact_text(f)} [{f.source}]" for f in facts]
    for unit in report_units(report):
        if unit.kind != "fact":
            lines += ["", unit.text + "".join(f" [{n}]" for n in unit.citations)]
    for words in model_words(report):
        if words.kind not in ("sub_question", "query"):
            lines += ["", words.text]
    return "\n".join(lines).strip()


def read_report(report: Report, observation: Observation, text_by_source: dict[int, str]) -> Observation:
    """Fill `observation` from a typed report (see the module docstring). `text_by_source`: the
    stored text of each source by its registry id (what the tools returned)."""
    observation.units = report_units(report)
    observation.model_words = model_words(report)
    observation.answer = report_text(report)
    observation.limitations = [limitation.code for limitation in report.limitations]
    cited = {n for unit in observation.units for n in unit.citations}
    for source in report.sources:
        if source.number not in cited and not source.cited:
            continue
        spans = [s.text for s in report.spans if s.source == source.number]
        observation.sources[source.number] = CitedSource(
            number=source.number,
            title=source.title,
            url=source.url,
            tier=source.tier,
            tool=source.tool,
            passage=text_by_source.get(source.source_id) or " ".join(spans),
            flagged=source.flagged,
        )
    return observation
