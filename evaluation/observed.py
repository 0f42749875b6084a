"""What the scoring reads of a finished research: the ONE place that knows how a task stores its
answer. Everything else in the evaluation works on an Observation.

The body is `ResearchTask.final_answer` (Markdown): every factual sentence and every data cell of
every table is a unit, with the citation numbers it carries; `citations_json` maps a number to
its source and `passages_by_number` to the passage the research read. A task that also stores a
structured report (`report_json`, the claims-first pipeline) adds its conflicts as units (each
side by side, with its citations) and its citations' `flagged` marks; before that, conflicts are
a section of the Markdown and the pipeline's ⚠ notes are stripped here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.engine import verification
from agent.engine.answer import MARKER, is_factual, marker_ids, segments
from research.models import ResearchTask
from research.selectors import passages_by_number


@dataclass
class Unit:
    text: str  # without citation markers
    citations: list[int]
    kind: str  # "sentence", "cell" or "conflict" (a reported conflict, its sides side by side)
    label: str = ""  # cells: the row label (with the caption, when the table has one)
    column: str = ""  # cells: the column header


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
    if task.status != ResearchTask.Status.COMPLETED:
        return observation
    text = body(task.final_answer)
    report = getattr(task, "report_json", None) or {}
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
    observation.retrieved = [
        CitedSource(
            number=source.get("id", 0),
            title=source.get("title", ""),
            url=source.get("url", ""),
            tier=source.get("tier", ""),
            tool=step.tool_name,
            passage=source.get("text") or source.get("snippet") or "",
        )
        for step in task.steps.exclude(result_full=None).order_by("index")
        for source in (step.result_full or {}).get("sources", [])
    ]
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
