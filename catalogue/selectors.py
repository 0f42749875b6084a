"""Reads of the Uedu catalogue. The research tools and the catalogue pages both call these."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Prefetch, Q, QuerySet
from django.db.models.functions import Cast

from channels_app.access import can
from channels_app.roles import CATALOGUE_READ_STAFF_DOCUMENTS
from channels_app.selectors import channels_for_user

from .models import (
    Advisor,
    AdvisorPaper,
    Course,
    CurriculumTopic,
    PlatformDocument,
    ResearchCluster,
    TeamPaper,
    University,
)
from .search import TEXT, ranked


def find_courses(query: str, *, university: str = "", limit: int = 5) -> list[Course]:
    """Courses by exact code first (case-insensitive), else by text over name, description, topics."""
    rows = Course.objects.select_related("university")
    if university:
        rows = rows.filter(
            Q(university__slug__iexact=university)
            | Q(university__name__icontains=university)
            | Q(university__name_en__icontains=university)
        )
    # One statement: rows with the exact code come first, and when there are any, only they count.
    rows = rows.annotate(topics_text=Cast("weekly_topics", TEXT))
    found = list(
        ranked(
            rows,
            query,
            ["code", "name", "name_en", "department", "description", "topics_text"],
            first=Q(code__iexact=query.strip()),
        )[:limit]
    )
    exact = [course for course in found if course.first]
    return exact or found


def curriculum_topics(
    *, subject: str = "", grade_band: str = "", query: str = "", limit: int = 10
) -> list[CurriculumTopic]:
    rows = CurriculumTopic.objects.all()
    if subject:
        rows = rows.filter(subject=subject)
    if grade_band:
        rows = rows.filter(grade_band=grade_band)
    if query.strip():
        exact = rows.filter(curriculum_code__iexact=query.strip())
        if exact.exists():
            return list(exact)
        rows = ranked(rows, query, ["curriculum_code", "topic", "learning_goals", "description"])
    return list(rows[:limit])


def team_papers(*, query: str = "", limit: int = 10) -> list[TeamPaper]:
    rows = TeamPaper.objects.all()
    if query.strip():
        rows = ranked(rows, query, ["title", "authors", "abstract", "keywords", "venue"])
    return list(rows[:limit])


def advisor_papers(
    *, query: str, advisor: str = "", year_from: int | None = None, limit: int = 10
) -> list[AdvisorPaper]:
    """Papers of Uedu advisors matching the query in the paper or in the advisor's name/interests."""
    rows = AdvisorPaper.objects.select_related("advisor", "advisor__university")
    if advisor:
        rows = rows.filter(
            Q(advisor__slug__iexact=advisor)
            | Q(advisor__name__icontains=advisor)
            | Q(advisor__name_en__icontains=advisor)
        )
    if year_from:
        rows = rows.filter(year__gte=year_from)
    if query.strip():
        rows = ranked(
            rows,
            query,
            [
                "title",
                "abstract",
                "venue",
                "authors",
                "advisor__name",
                "advisor__name_en",
                "advisor__research_interests",
            ],
        )
    return list(rows[:limit])


def research_clusters(*, query: str = "", limit: int = 20) -> list[ResearchCluster]:
    rows = ResearchCluster.objects.prefetch_related("advisors")
    if query.strip():
        rows = ranked(rows, query, ["name", "name_en", "description", "keywords"])
    return list(rows[:limit])


def cluster_by_name(cluster: str) -> ResearchCluster | None:
    """A cluster by slug, or by (English) name when that picks exactly one."""
    cluster = cluster.strip()
    advisors = Prefetch(
        "advisors", queryset=Advisor.objects.select_related("university").prefetch_related("papers")
    )
    rows = ResearchCluster.objects.prefetch_related(advisors)
    found = rows.filter(slug__iexact=cluster).first()
    if found is None:
        named = list(rows.filter(Q(name__icontains=cluster) | Q(name_en__icontains=cluster))[:2])
        found = named[0] if len(named) == 1 else None
    return found


def cluster_names() -> list[str]:
    return list(ResearchCluster.objects.values_list("slug", flat=True))


def universities(*, query: str = "", limit: int = 20) -> list[University]:
    rows = University.objects.all()
    if query.strip():
        rows = ranked(rows, query, ["slug", "name", "name_en", "city", "description"])
    return list(rows[:limit])


# --------------------------------------------------------------------------- platform documents
def documents_visible_to(user, *, channel_id: int | None = None) -> QuerySet[PlatformDocument]:
    """The platform documents this user may read.

    Public documents: every active user. Staff documents: staff and admins. Channel documents:
    members (or the owner) of that channel; with `channel_id` (a research in one channel) only
    that channel's, so a research never pulls another course's documents into its answer."""
    if user is None or not user.is_active:
        return PlatformDocument.objects.none()
    visible = Q(visibility=PlatformDocument.Visibility.PUBLIC)
    if can(user, CATALOGUE_READ_STAFF_DOCUMENTS):
        visible |= Q(visibility=PlatformDocument.Visibility.STAFF)
    member_of = channels_for_user(user)
    if channel_id is not None:
        member_of = member_of.filter(pk=channel_id)
    visible |= Q(visibility=PlatformDocument.Visibility.CHANNEL, channel__in=member_of.values("pk"))
    return PlatformDocument.objects.filter(visible).select_related("channel")


def search_documents(user, *, channel_id: int | None, query: str, limit: int = 5) -> list[PlatformDocument]:
    return list(ranked(documents_visible_to(user, channel_id=channel_id), query, ["title", "body"])[:limit])


def active_user(user_id: int):
    return get_user_model().objects.filter(pk=user_id, is_active=True).first()
