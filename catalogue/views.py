"""The page of each catalogue row: where a citation of a row without an external link points.

Catalogue rows are readable by every signed-in user; platform documents only by those
`documents_visible_to` allows (anyone else gets 404, so a hidden document's existence leaks not)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _

from .models import Advisor, Course, CurriculumTopic, ResearchCluster, TeamPaper, University
from .selectors import documents_visible_to


def _page(
    request,
    row,
    *,
    heading: str,
    facts: list[tuple[str, object]],
    body: str = "",
    items=None,
    papers=(),
    links=None,
):
    """items: (url, label, note) rows; papers: AdvisorPaper rows, each with an anchor #paper-<pk>."""
    return render(
        request,
        "catalogue/detail.html",
        {
            "row": row,
            "heading": heading,
            "facts": [(label, value) for label, value in facts if value not in ("", None, [])],
            "body": body,
            "items": items or [],
            "papers": papers,
            "links": [(label, url) for label, url in (links or []) if url],
        },
    )


@login_required
def university(request, slug: str):
    row = get_object_or_404(University, slug=slug)
    courses = [(c.get_absolute_url(), str(c), "") for c in row.courses.all()]
    return _page(
        request,
        row,
        heading=f"{row.name} {row.name_en}",
        facts=[(_("City"), row.city)],
        body=row.description,
        items=courses,
        links=[(_("Website"), row.website)],
    )


@login_required
def course(request, university: str, code: str):
    row = get_object_or_404(
        Course.objects.select_related("university"), university__slug=university, code=code
    )
    weeks = [("", f"{_('Week')} {i}: {topic}", "") for i, topic in enumerate(row.weekly_topics, 1)]
    return _page(
        request,
        row,
        heading=f"{row.code} {row.name} {row.name_en}",
        facts=[
            (_("University"), row.university.name),
            (_("Department"), row.department),
            (_("Credits"), row.credits),
            (_("Level"), row.get_level_display()),
        ],
        body=row.description,
        items=weeks,
        links=[(_("Course page"), row.url)],
    )


@login_required
def curriculum(request, code: str):
    row = get_object_or_404(CurriculumTopic, curriculum_code=code)
    return _page(
        request,
        row,
        heading=f"{row.curriculum_code} {row.topic}",
        facts=[
            (_("Subject"), row.get_subject_display()),
            (_("Grade band"), row.get_grade_band_display()),
            (_("Learning goals"), row.learning_goals),
        ],
        body=row.description,
    )


@login_required
def cluster(request, slug: str):
    row = get_object_or_404(ResearchCluster, slug=slug)
    advisors = [(a.get_absolute_url(), str(a), a.research_interests) for a in row.advisors.all()]
    return _page(
        request,
        row,
        heading=f"{row.name} {row.name_en}",
        facts=[(_("Keywords"), row.keywords)],
        body=row.description,
        items=advisors,
    )


@login_required
def advisor(request, slug: str):
    row = get_object_or_404(Advisor.objects.select_related("university"), slug=slug)
    return _page(
        request,
        row,
        heading=f"{row.name} {row.name_en}",
        facts=[
            (_("Position"), row.title),
            (_("University"), row.university.name if row.university else ""),
            (_("Department"), row.department),
            (_("Research interests"), row.research_interests),
            (_("Research clusters"), ", ".join(c.name for c in row.clusters.all())),
        ],
        papers=row.papers.all(),
        links=[(_("Official profile"), row.profile_url)],
    )


@login_required
def team_paper(request, slug: str):
    row = get_object_or_404(TeamPaper, slug=slug)
    return _page(
        request,
        row,
        heading=row.title,
        facts=[
            (_("Authors"), row.authors),
            (_("Year"), row.year),
            (_("Venue"), row.venue),
            (_("DOI"), row.doi),
        ],
        body=row.abstract,
        links=[(_("Link"), row.external_link)],
    )


@login_required
def document(request, slug: str):
    row = get_object_or_404(documents_visible_to(request.user), slug=slug)
    return _page(
        request,
        row,
        heading=row.title,
        facts=[(_("Visibility"), row.get_visibility_display())],
        body=row.body,
    )
