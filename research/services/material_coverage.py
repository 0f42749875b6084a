"""What the channel's own materials answered in each completed research, and what they did not:
the rows behind the teacher's dashboard ("what the materials fail to answer", "most-cited pages").

A research is asked in parts: the plan's sub-questions, or the question as a whole when the plan
has none (every report stored before the span design: `legacy_reports.typed_report` turns a 1.x report into
one section for the whole question). A part is **answered by the materials** when its section of
the report holds at least one fact whose source is a channel material (`Source.tool` is the
materials tool) and that no settled conflict superseded. Every fact of a report is a span of its
source, so "a fact" is what the research verified; a part without one is a **gap**, whether the
research found nothing at all or found it only on the web or in papers.

Each gap is stored with its text (a sub-question is the AI's words, marked so wherever shown), its
embedding and the **topic** it belongs to: the gap is compared with the first gap of each topic of
the channel (research.topics: embeddings where the model understands the language, weighted
wording otherwise) and joins the closest one above the threshold, or starts a topic. The
channel's topics are read and extended under a transaction-level advisory lock on the channel, so
two researches finishing together cannot start the same topic twice.

When: right after a research completes, in the worker that finished it, after its commit
(`record_after_commit`, called by ending.end_task), so a failure here (the embedding service down)
never touches the research; `sweep` (the beat schedule, and `manage.py record_material_coverage`
for all at once) records every completed research that has no row yet, oldest first, which also
fills the rows of researches that completed before this existed. A research whose report is
empty (finished before reports were stored) gets a row with no parts: nothing to count."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.urls import Resolver404, resolve

from agent.engine.report_types import Report
from agent.tools.materials import search_channel_materials
from materials import embeddings
from research.legacy_reports import typed_report
from research.models import MaterialCoverage, MaterialGap, ResearchTask
from research.topics import Text, TopicIndex, language_of

log = logging.getLogger(__name__)

# The tool whose sources are the channel's own materials (its registered name is its function's).
MATERIALS_TOOL = search_channel_materials.__name__
# An arbitrary constant that keys this module's advisory locks (with the channel's id).
_LOCK_CLASS = 45_001


@dataclass(frozen=True)
class Part:
    index: int  # into plan.sub_questions; -1: the question as a whole
    text: str
    by_model: bool  # the text is the AI's sub-question (else the student's own question)
    answered: bool  # a fact from a channel material rests in its section


def parts_of(report: Report) -> list[Part]:
    """The parts a report was asked in, each with whether the channel's materials answered it."""
    materials = {s.number for s in report.sources if s.tool == MATERIALS_TOOL}
    facts = {f.id: f for f in report.facts}
    answered = {
        section.sub_question
        for section in report.sections
        if any(
            (fact := facts.get(i)) is not None and fact.source in materials and not fact.superseded
            for i in section.facts
        )
    }
    subs = report.plan.sub_questions
    if not subs:
        return [Part(-1, report.question, by_model=False, answered=-1 in answered)]
    # A sub-question the report does not show (it stated something the question lacks) is "":
    # the gap is then worded by the student's question.
    return [
        Part(i, text or report.question, by_model=bool(text), answered=i in answered)
        for i, text in enumerate(subs)
    ]


def cited_pages(report: Report, channel_slug: str) -> list[list]:
    """[material id, page] of each channel material page a fact of the report rests on, once each,
    in the report's order. The page is read from the source's link (the materials tool links
    `/channels/<slug>/materials/<id>#p<page>`), through the URL configuration."""
    cited = {f.source for f in report.facts}
    pages: list[list] = []
    for source in report.sources:
        if source.tool != MATERIALS_TOOL or source.number not in cited:
            continue
        parts = urlsplit(source.url)
        try:
            match = resolve(parts.path)
        except Resolver404:
            continue
        if match.url_name != "material_detail" or match.kwargs.get("slug") != channel_slug:
            continue
        page = [int(match.kwargs["pk"]), parts.fragment.removeprefix("p")]
        if page not in pages:
            pages.append(page)
    return pages


def _embed(texts: list[str]) -> tuple[list | None, str]:
    """The texts' vectors and the model's name, or (None, "") when the service fails: the gaps
    are then grouped by their wording alone."""
    if not texts:
        return None, ""
    try:
        return embeddings.embed_texts(texts), embeddings.model_name()
    except Exception as exc:  # noqa: BLE001 - any backend failure leaves the grouping to the wording
        log.warning("could not embed %d material gaps: %s", len(texts), exc)
        return None, ""


def _lock_channel(channel_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_CLASS, channel_id])


def _topic_index(channel_id: int) -> TopicIndex:
    firsts = MaterialGap.objects.filter(channel_id=channel_id, topic_id=F("pk")).values_list(
        "pk", "text", "embedding", "embedding_model"
    )
    return TopicIndex(
        [Text(pk, text, vector, model) for pk, text, vector, model in firsts.order_by("pk")],
        local_model=settings.UEDU_EMBEDDING_BACKEND == "local",
    )


def record(task_id: int) -> MaterialCoverage | None:
    """Record the coverage of one completed research (none for another status or a replay, an
    evaluation record). Idempotent: a research already recorded is left as it is."""
    task = (
        ResearchTask.objects.select_related("channel")
        .filter(pk=task_id, status=ResearchTask.Status.COMPLETED, is_replay=False)
        .only("pk", "created_at", "report_json", "verification_json", "channel", "channel__slug")
        .first()
    )
    if task is None or MaterialCoverage.objects.filter(task_id=task_id).exists():
        return None
    report = typed_report(task) if task.report_json else None
    parts = parts_of(report) if report else []
    gaps = [p for p in parts if not p.answered]
    vectors, model = _embed([g.text for g in gaps])
    with transaction.atomic():
        _lock_channel(task.channel_id)
        if MaterialCoverage.objects.filter(task_id=task_id).exists():
            return None  # recorded meanwhile (the sweep and the finishing worker at once)
        coverage = MaterialCoverage.objects.create(
            task=task,
            channel_id=task.channel_id,
            asked_at=task.created_at,
            parts=len(parts),
            answered=len(parts) - len(gaps),
            cited_pages=cited_pages(report, task.channel.slug) if report else [],
        )
        index = _topic_index(task.channel_id) if gaps else None
        for n, gap in enumerate(gaps):
            vector = vectors[n] if vectors else None
            row = MaterialGap.objects.create(
                coverage=coverage,
                channel_id=task.channel_id,
                asked_at=task.created_at,
                part=gap.index,
                text=gap.text,
                by_model=gap.by_model,
                language=language_of(gap.text),
                embedding=vector,
                embedding_model=model if vector is not None else "",
            )
            text = Text(row.pk, row.text, vector, row.embedding_model)
            topic = index.match(text)
            if topic is None:
                index.add(text)
                topic = row.pk
            MaterialGap.objects.filter(pk=row.pk).update(topic_id=topic)
    return coverage


def record_after_commit(task: ResearchTask) -> None:
    """Record a research that just completed, once its transaction commits, without letting a
    failure reach the caller (the sweep records it later)."""
    if task.status == ResearchTask.Status.COMPLETED and not task.is_replay:
        task_id = task.pk
        transaction.on_commit(lambda: record(task_id), robust=True)


def missing(limit: int | None = None):
    """Completed researches (not replays) without a coverage row, oldest first."""
    tasks = ResearchTask.objects.filter(
        status=ResearchTask.Status.COMPLETED, is_replay=False, material_coverage__isnull=True
    ).order_by("created_at", "pk")
    return tasks.values_list("pk", flat=True)[:limit]


def sweep(*, limit: int | None = None) -> dict:
    """Record the completed researches that have no coverage row yet (at most `limit`)."""
    done = failed = 0
    for task_id in list(missing(limit)):
        try:
            record(task_id)
            done += 1
        except Exception:  # one bad report must not stop the others
            log.exception("could not record the material coverage of research task %s", task_id)
            failed += 1
    return {"recorded": done, "failed": failed}
