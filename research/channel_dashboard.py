"""Reads for a channel's dashboard (its teacher's, its Super TAs' with an NDA, the admins'): the
researches of a period (7 or 30 days, or the term) counted per day, the questions with their
Bloom level and status, the unresolved conflicts, the most-cited material pages, and what the
materials fail to answer, grouped into topics; and the CSV of the same rows.

Who may open it is decided before anything here is called (selectors.dashboard_channel: the
permission analytics.read). Who is named is the page's to say (analytics.student_names: the
channel's owner and platform admins; a Super TA with an NDA sees `student_label`'s pseudonyms).

Every read is a bounded number of statements whatever the period holds: aggregates in
PostgreSQL, one page of questions, the first rows of each list. What the materials answered is
read from the rows research.services.material_coverage records when a research completes, never
from the reports themselves. Replays (evaluation records) are left out everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Max, OuterRef, Q, QuerySet, Subquery, Sum, Window
from django.db.models.functions import Coalesce, RowNumber, TruncDate
from django.utils import timezone
from django.utils.crypto import salted_hmac

from channels_app.models import Channel, ChatLog, Material
from research.models import MaterialCoverage, MaterialGap, ResearchTask
from research.services import review

PERIODS = ("7", "30", "term")
# How many rows each list of the page shows (the CSV has every question of the period).
QUESTIONS_PER_PAGE = 50
CONFLICTS_SHOWN = 20
MATERIALS_SHOWN = 10
PAGES_PER_MATERIAL = 5
TOPICS_SHOWN = 20
EXAMPLES_PER_TOPIC = 5
# The Bloom filter's value for questions the classifier has not (yet) labelled.
UNCLASSIFIED = "none"


@dataclass(frozen=True)
class Period:
    key: str  # one of PERIODS
    first: date
    last: date  # inclusive: today

    @property
    def days(self) -> list[date]:
        return [self.first + timedelta(days=n) for n in range((self.last - self.first).days + 1)]

    @property
    def start(self) -> datetime:
        return timezone.make_aware(datetime.combine(self.first, time.min))

    @property
    def end(self) -> datetime:
        return timezone.make_aware(datetime.combine(self.last + timedelta(days=1), time.min))


def term_start(today: date, starts=None) -> date:
    """The latest day on or before `today` that a term begins (settings.UEDU_TERM_STARTS)."""
    starts = starts or settings.UEDU_TERM_STARTS
    candidates = [_day(year, month, day) for year in (today.year, today.year - 1) for month, day in starts]
    return max(d for d in candidates if d <= today)


def _day(year: int, month: int, day: int) -> date:
    # 02-29 begins the term on the 28th in a common year.
    return date(year, month, min(day, 28)) if month == 2 and day == 29 else date(year, month, day)


def period(key: str, today: date | None = None) -> Period:
    today = today or timezone.localdate()
    if key == "term":
        return Period(key, term_start(today), today)
    return Period(key, today - timedelta(days=int(key) - 1), today)


def researches(channel: Channel, p: Period) -> QuerySet[ResearchTask]:
    """The channel's researches asked in the period (replays left out)."""
    return ResearchTask.objects.filter(
        channel=channel, is_replay=False, created_at__gte=p.start, created_at__lt=p.end
    )


def _share(part: int, whole: int) -> int | None:
    """A whole percentage, or None when there is nothing to divide."""
    return round(100 * part / whole) if whole else None


# --------------------------------------------------------------------------- the figures


def figures(channel: Channel, p: Period) -> dict:
    """How many researches, how many finished, completed or reached a limit (shares of the
    finished ones), how many still run; the parts the materials answered; the cost."""
    tasks = researches(channel, p)
    finished = Q(finished_at__isnull=False)
    totals = tasks.aggregate(
        researches=Count("pk"),
        finished=Count("pk", filter=finished),
        completed=Count("pk", filter=Q(status=ResearchTask.Status.COMPLETED)),
        limit_hits=Count("pk", filter=finished & ~Q(limit_hit="")),
        running=Count("pk", filter=~Q(status__in=ResearchTask.TERMINAL)),
        cost=Sum("cost_usd"),
    )
    coverage = MaterialCoverage.objects.filter(
        channel=channel, asked_at__gte=p.start, asked_at__lt=p.end, parts__gt=0
    ).aggregate(parts=Sum("parts"), answered=Sum("answered"), researches=Count("pk"))
    parts, answered = coverage["parts"] or 0, coverage["answered"] or 0
    return {
        **totals,
        "cost": totals["cost"] or 0,
        "completed_share": _share(totals["completed"], totals["finished"]),
        "limit_share": _share(totals["limit_hits"], totals["finished"]),
        "parts": parts,
        "answered": answered,
        "answered_share": _share(answered, parts),
        "covered_researches": coverage["researches"],
        # Completed in the period but not yet looked at by material_coverage (its sweep catches up).
        "not_yet_analysed": tasks.filter(
            status=ResearchTask.Status.COMPLETED, material_coverage__isnull=True
        ).count(),
    }


def trend(channel: Channel, p: Period) -> list[dict]:
    """Per day of the period (every day, none left out): researches asked, completed, and
    finished at a limit."""
    rows = {
        row["day"]: row
        for row in researches(channel, p)
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(
            researches=Count("pk"),
            completed=Count("pk", filter=Q(status=ResearchTask.Status.COMPLETED)),
            limit_hits=Count("pk", filter=Q(finished_at__isnull=False) & ~Q(limit_hit="")),
        )
        .order_by("day")
    }
    empty = {"researches": 0, "completed": 0, "limit_hits": 0}
    return [{**empty, **rows.get(day, {}), "day": day} for day in p.days]


def _bloom_of_question() -> Subquery:
    return Subquery(
        ChatLog.objects.filter(deep_research_task=OuterRef("pk"), kind=ChatLog.Kind.REQUEST)
        .order_by("pk")
        .values("bloom_level")[:1]
    )


def bloom_counts(channel: Channel, p: Period) -> list[dict]:
    """Every Bloom level in its order with its number of questions, then the unclassified ones."""
    counts = dict(
        researches(channel, p)
        .annotate(level=_bloom_of_question())
        .values("level")
        .annotate(n=Count("pk"))
        .values_list("level", "n")
        .order_by()
    )
    rows = [
        {"level": level, "label": label, "count": counts.get(level, 0)}
        for level, label in ChatLog.Bloom.choices
    ]
    rows.append({"level": UNCLASSIFIED, "label": None, "count": counts.get("", 0) + counts.get(None, 0)})
    return rows


# --------------------------------------------------------------------------- the questions


def student_label(channel: Channel, user_id: int) -> str:
    """A student's pseudonym in this channel's dashboard: stable (the same student is the same
    label in every period and in the CSV), unlinkable across channels, and not reversible without
    the site's secret key."""
    return salted_hmac("research.channel_dashboard.student", f"{channel.pk}:{user_id}").hexdigest()[:8]


def questions(channel: Channel, p: Period, *, bloom: str = "") -> QuerySet[ResearchTask]:
    """The period's questions, newest first, with their Bloom level and what the materials
    answered (`parts`/`answered` are None until the research is recorded, or if it did not
    complete); `bloom` keeps one level (UNCLASSIFIED: those without)."""
    rows = (
        researches(channel, p)
        .annotate(
            bloom=_bloom_of_question(),
            parts=F("material_coverage__parts"),
            answered=F("material_coverage__answered"),
            username=F("user__username"),
        )
        .only("pk", "task_uuid", "user_id", "user_question", "status", "limit_hit", "created_at")
        .order_by("-created_at", "-pk")
    )
    if bloom == UNCLASSIFIED:
        rows = rows.filter(Q(bloom__isnull=True) | Q(bloom=""))
    elif bloom:
        rows = rows.filter(bloom=bloom)
    return rows


# --------------------------------------------------------------------------- conflicts, materials


def unresolved_conflicts(channel: Channel, p: Period) -> tuple[list[ResearchTask], int]:
    """The period's researches whose conflicts nobody has reviewed yet (the review queue's rule),
    newest first: the first CONFLICTS_SHOWN and how many there are."""
    tasks = researches(channel, p).filter(review.awaiting_review_q())
    shown = list(
        tasks.only("pk", "task_uuid", "user_question", "created_at", "verification_json").order_by(
            "-created_at", "-pk"
        )[:CONFLICTS_SHOWN]
    )
    return shown, tasks.count()


@dataclass
class CitedMaterial:
    material_id: int
    name: str
    unit: str  # how its pages are called (Material.unit_label)
    researches: int  # researches whose facts rest on it
    pages: list[tuple[str, int]] = field(default_factory=list)  # (page, researches), most cited first


_CITED_PAGES = """
    SELECT (page ->> 0)::int AS material, page ->> 1 AS page, count(*) AS researches
      FROM deep_research_material_coverage c, jsonb_array_elements(c.cited_pages) AS page
     WHERE c.channel_id = %s AND c.asked_at >= %s AND c.asked_at < %s
     GROUP BY 1, 2
"""


def cited_materials(channel: Channel, p: Period) -> list[CitedMaterial]:
    """The materials whose pages the period's facts rest on most, each with its most-cited pages
    (a material no longer in the channel is left out)."""
    with connection.cursor() as cursor:
        cursor.execute(_CITED_PAGES, [channel.pk, p.start, p.end])
        rows = cursor.fetchall()
    by_material: dict[int, list[tuple[str, int]]] = {}
    for material, page, n in rows:
        by_material.setdefault(material, []).append((page, n))
    # A research counts once per material, however many of its pages it cites.
    researches_by_material = _researches_per_material(channel, p)
    names = {
        m.pk: m
        for m in Material.objects.filter(channel=channel, pk__in=list(by_material)).only(
            "pk", "original_name", "kind"
        )
    }
    ranked = sorted(
        (m for m in by_material if m in names),
        key=lambda m: (-researches_by_material.get(m, 0), names[m].original_name),
    )
    return [
        CitedMaterial(
            material_id=m,
            name=names[m].original_name,
            unit=names[m].unit_label,
            researches=researches_by_material.get(m, 0),
            pages=sorted(by_material[m], key=lambda row: (-row[1], _page_order(row[0])))[:PAGES_PER_MATERIAL],
        )
        for m in ranked[:MATERIALS_SHOWN]
    ]


_RESEARCHES_PER_MATERIAL = """
    SELECT material, count(*) FROM (
        SELECT DISTINCT c.task_id, (page ->> 0)::int AS material
          FROM deep_research_material_coverage c, jsonb_array_elements(c.cited_pages) AS page
         WHERE c.channel_id = %s AND c.asked_at >= %s AND c.asked_at < %s
    ) AS cited GROUP BY material
"""


def _researches_per_material(channel: Channel, p: Period) -> dict[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(_RESEARCHES_PER_MATERIAL, [channel.pk, p.start, p.end])
        return dict(cursor.fetchall())


def _page_order(page: str):
    return (0, int(page)) if page.isdigit() else (1, page)


# --------------------------------------------------------------------------- what the materials miss


@dataclass
class GapExample:
    text: str
    by_model: bool
    task_uuid: str
    question: str


@dataclass
class Topic:
    key: int
    text: str  # its first gap's words (which may be older than the period)
    by_model: bool
    researches: int  # researches of the period with a gap in this topic
    gaps: int
    examples: list[GapExample] = field(default_factory=list)  # the period's latest, one per research


def gap_topics(channel: Channel, p: Period) -> tuple[list[Topic], int]:
    """The topics of the period's gaps, those met by the most researches first: the first
    TOPICS_SHOWN with their latest examples, and how many topics there are."""
    gaps = MaterialGap.objects.filter(channel=channel, asked_at__gte=p.start, asked_at__lt=p.end).annotate(
        topic_key=Coalesce("topic_id", "pk")
    )
    ranked = list(
        gaps.values("topic_key")
        .annotate(researches=Count("coverage_id", distinct=True), gaps=Count("pk"), latest=Max("asked_at"))
        .order_by("-researches", "-latest", "topic_key")
    )
    top = ranked[:TOPICS_SHOWN]
    keys = [row["topic_key"] for row in top]
    firsts = {g.pk: g for g in MaterialGap.objects.filter(pk__in=keys).only("pk", "text", "by_model")}
    topics = {
        row["topic_key"]: Topic(
            key=row["topic_key"],
            text=firsts[row["topic_key"]].text,
            by_model=firsts[row["topic_key"]].by_model,
            researches=row["researches"],
            gaps=row["gaps"],
        )
        for row in top
        if row["topic_key"] in firsts
    }
    examples = (
        gaps.filter(topic_key__in=keys)
        .annotate(
            n=Window(
                RowNumber(), partition_by=[F("topic_key")], order_by=[F("asked_at").desc(), F("pk").desc()]
            )
        )
        .filter(n__lte=EXAMPLES_PER_TOPIC)
        .values_list(
            "topic_key", "text", "by_model", "coverage__task__task_uuid", "coverage__task__user_question"
        )
        .order_by("topic_key", "n")
    )
    for key, text, by_model, task_uuid, question in examples:
        if key in topics:
            topics[key].examples.append(GapExample(text, by_model, str(task_uuid), question))
    return [topics[k] for k in keys if k in topics], len(ranked)


# --------------------------------------------------------------------------- the CSV


def csv_question_rows(channel: Channel, p: Period, *, bloom: str) -> Iterator[tuple]:
    """Every question of the period the page lists (same filter), oldest first, for the CSV:
    (asked at, user id, username, question, Bloom level, status, limit hit, parts, answered,
    task uuid). Plain tuples: a term's thousands of rows need no model instances."""
    rows = (
        questions(channel, p, bloom=bloom)
        .order_by("created_at", "pk")
        .values_list(
            "created_at",
            "user_id",
            "username",
            "user_question",
            "bloom",
            "status",
            "limit_hit",
            "parts",
            "answered",
            "task_uuid",
        )
    )
    return rows.iterator(chunk_size=1000)


def csv_gap_rows(channel: Channel, p: Period) -> Iterator[tuple]:
    """Every gap of the period with its topic's first words, topic by topic, oldest first:
    (topic, its first words, the gap's words, written by the AI, asked at, task uuid)."""
    gaps = (
        MaterialGap.objects.filter(channel=channel, asked_at__gte=p.start, asked_at__lt=p.end)
        .annotate(topic_key=Coalesce("topic_id", "pk"), topic_text=Coalesce("topic__text", "text"))
        .values_list("topic_key", "topic_text", "text", "by_model", "asked_at", "coverage__task__task_uuid")
        .order_by("topic_key", "asked_at", "pk")
    )
    return gaps.iterator(chunk_size=1000)
