"""What the answer bubble and the result page show of a task, computed once in Python.

Templates receive plain values: the sanitised answer HTML, citations with their anchors and
labels, conflicts with links to their citations, the verification counts with labels."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from research.models import ResearchTask
from research.rendering import render_markdown

VERDICT_LABELS = {
    "supported": gettext_lazy("supported"),
    "partial": gettext_lazy("partly supported"),
    "unsupported": gettext_lazy("not supported"),
    "unverified": gettext_lazy("not verified"),
    "no_citation": gettext_lazy("without a source"),
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


@dataclass
class AnswerView:
    task: ResearchTask
    html: SafeString
    anchor: str
    citations: list[CitationView] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)
    counts: list[tuple[str, int, str]] = field(default_factory=list)  # (verdict, count, label)
    verification_incomplete: bool = False
    limit_label: str = ""
    can_acknowledge: bool = False


def answer_view(task: ResearchTask, user) -> AnswerView:
    anchor = citation_anchor(task)
    citations = []
    for raw in task.citations_json or []:
        try:
            number = int(raw.get("number"))
        except (TypeError, ValueError):
            continue
        url = str(raw.get("url") or "")
        citations.append(
            CitationView(
                number=number,
                anchor=f"{anchor}-{number}",
                title=str(raw.get("title") or _("(untitled source)")),
                url=url if url.lower().startswith(("http://", "https://")) else "",
                source_tool=str(raw.get("source_tool") or ""),
                snippet=str(raw.get("snippet") or ""),
                locator=str(raw.get("locator") or ""),
                internal=raw.get("origin") == "internal",
            )
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
        for verdict, count in sorted((verification.get("counts") or {}).items(), key=lambda kv: list(VERDICT_LABELS).index(kv[0]) if kv[0] in VERDICT_LABELS else 99)
        if count
    ]
    return AnswerView(
        task=task,
        html=render_markdown(task.final_answer, citation_anchor=anchor, citation_numbers=numbers),
        anchor=anchor,
        citations=citations,
        conflicts=conflicts,
        counts=counts,
        verification_incomplete=verification.get("status") == "incomplete",
        limit_label=str(LIMIT_LABELS.get(task.limit_hit, task.limit_hit)) if task.limit_hit else "",
        can_acknowledge=user.is_authenticated and user.pk == task.user_id,
    )


def progress_limits() -> dict:
    """The engine's limits as the card shows them before the plan reports its own."""
    return {"max_steps": settings.UEDU_DR_MAX_STEPS, "max_tokens": settings.UEDU_DR_MAX_TOKENS}


def answer_markdown(task: ResearchTask, page_url: str) -> str:
    """The downloadable .md: question, answer and a numbered source list."""
    question = task.user_question.strip()
    lines = [f"# {question.splitlines()[0][:200]}", ""]
    if "\n" in question or len(question) > 200:
        lines += ["> " + line for line in question.splitlines()] + [""]
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
    lines += ["---", "", _("This answer was compiled by AI from several sources; check the citations yourself. It may not be submitted as coursework."), "", page_url, ""]
    return "\n".join(lines)
