"""Catalogue tools: Uedu's own data (tier "internal"). Thin: the reads are in
catalogue.selectors; this module only turns rows into citable Sources.

Every Source links somewhere a student can open: the row's external link when it has one (an
advisor's official profile, a paper's DOI), otherwise the row's page in this app. `locator`
carries the row's stable `uedu://catalogue/…` identifier. Demo rows say [DEMO] in the title and
snippet and carry meta.is_demo, so invented sample data can never pass for real Uedu data."""

from __future__ import annotations

from typing import Literal

from agent.engine.types import Source, ToolResult
from catalogue import selectors
from catalogue.models import Advisor, AdvisorPaper, Course, ResearchCluster, TeamPaper, University
from catalogue.search import search_terms

from . import REGISTRY
from .registry import ToolContext
from .snippets import TEXT_CHARS, clip, excerpt

MAX_LIMIT = 20


def _limit(value: int, default: int) -> int:
    return max(1, min(MAX_LIMIT, value or default))


def _source(row, *, kind: str, title: str, body: str, url: str = "", snippet: str = "", **meta) -> Source:
    demo = "[DEMO] " if row.is_demo else ""
    return Source(
        title=f"{demo}{title}",
        snippet=demo + (snippet or clip(body)),
        text=(demo + body)[:TEXT_CHARS],
        tier="internal",
        url=url or row.get_absolute_url(),
        locator=row.catalogue_uri,
        meta={"origin": "uedu", "kind": kind, "is_demo": row.is_demo, **meta},
    )


def _none_found(what: str, query: str) -> ToolResult:
    return ToolResult(data={"results": [], "note": f"no {what} in the Uedu catalogue matches {query!r}"})


def _university_label(university: University | None) -> str:
    if university is None:
        return ""
    return f"{university.name} ({university.name_en})" if university.name_en else university.name


# --------------------------------------------------------------------------- courses, curriculum
def _course_source(course: Course) -> Source:
    weeks = "\n".join(f"Week {i}: {topic}" for i, topic in enumerate(course.weekly_topics, 1))
    body = (
        f"{course.code} {course.name} {course.name_en}".strip()
        + f"\nUniversity: {_university_label(course.university)}"
        + (f"\nDepartment: {course.department}" if course.department else "")
        + f"\nCredits: {course.credits} · Level: {course.get_level_display()}"
        + (f"\nDescription: {course.description}" if course.description else "")
        + (f"\nWeekly topics:\n{weeks}" if weeks else "")
    )
    summary = f"{course.description} Weekly topics: " + "; ".join(course.weekly_topics)
    return _source(
        course,
        kind="course",
        title=f"{course.code} {course.name}" + (f" {course.name_en}" if course.name_en else ""),
        body=body,
        snippet=clip(f"{course.university.name} · {course.credits} credits · {summary}"),
        url=course.url,
        code=course.code,
        university=course.university.slug,
    )


@REGISTRY.tool(tier="internal", search=False, exact_figures=False)
def get_course_overview(ctx: ToolContext, course: str, university: str | None = None) -> ToolResult:
    """Overview of a university course in the Uedu catalogue: description, weekly syllabus topics,
    credits, level, department and university. Use it to compare courses or plan a learning path.

    Args:
        course: a course code (e.g. EDS101) or words from the course name or its topics
        university: optional university to narrow the search (slug or part of its name)
    """
    if not course.strip():
        return ToolResult(error="give a course code or words from the course name")
    rows = selectors.find_courses(course, university=(university or "").strip())
    if not rows:
        return _none_found("course", course)
    return ToolResult(
        sources=[_course_source(c) for c in rows],
        data={
            "results": [
                {
                    "code": c.code,
                    "name": c.name,
                    "name_en": c.name_en,
                    "university": c.university.name,
                    "department": c.department,
                    "credits": c.credits,
                    "level": c.level,
                    "weekly_topics": c.weekly_topics,
                    "is_demo": c.is_demo,
                }
                for c in rows
            ]
        },
    )


@REGISTRY.tool(tier="internal", search=False, exact_figures=False)
def get_hs_curriculum(
    ctx: ToolContext,
    subject: Literal["math", "science", "information_technology"] | None = None,
    grade_band: Literal["7-9", "10-12"] | None = None,
    query: str | None = None,
    limit: int = 10,
) -> ToolResult:
    """Topics of Taiwan's 12-year basic education curriculum (junior and senior high school) with
    their learning goals and curriculum codes. Use it to see what students learned before university
    or to plan a teaching sequence.

    Args:
        subject: math, science or information_technology; omit for all subjects
        grade_band: 7-9 (junior high) or 10-12 (senior high); omit for both
        query: optional words or a curriculum code to search for
        limit: how many topics to return (1-20)
    """
    rows = selectors.curriculum_topics(
        subject=subject or "", grade_band=grade_band or "", query=query or "", limit=_limit(limit, 10)
    )
    if not rows:
        return _none_found("curriculum topic", query or f"{subject or ''} {grade_band or ''}".strip())
    sources = []
    for topic in rows:
        body = (
            f"{topic.curriculum_code} {topic.topic}\nSubject: {topic.get_subject_display()} · "
            f"Grades {topic.grade_band}\nLearning goals: {topic.learning_goals}"
            + (f"\n{topic.description}" if topic.description else "")
        )
        sources.append(
            _source(
                topic,
                kind="curriculum_topic",
                title=f"{topic.curriculum_code} {topic.topic}",
                body=body,
                snippet=clip(
                    f"{topic.get_subject_display()}, grades {topic.grade_band}. Learning goals: {topic.learning_goals}"
                ),
                subject=topic.subject,
                grade_band=topic.grade_band,
            )
        )
    return ToolResult(
        sources=sources,
        data={
            "results": [
                {
                    "code": t.curriculum_code,
                    "subject": t.subject,
                    "grade_band": t.grade_band,
                    "topic": t.topic,
                    "is_demo": t.is_demo,
                }
                for t in rows
            ]
        },
    )


# --------------------------------------------------------------------------- papers
def _paper_body(paper: AdvisorPaper | TeamPaper, byline: str) -> str:
    return (
        f"{paper.title}\n{byline}"
        + (f"\nAuthors: {paper.authors}" if paper.authors else "")
        + (f"\nYear: {paper.year}" if paper.year else "")
        + (f"\nVenue: {paper.venue}" if paper.venue else "")
        + (f"\nDOI: {paper.doi}" if paper.doi else "")
        + (f"\nAbstract: {paper.abstract}" if paper.abstract else "")
    )


@REGISTRY.tool(tier="internal", search=False, exact_figures=False)
def list_uedu_team_papers(ctx: ToolContext, query: str | None = None, limit: int = 10) -> ToolResult:
    """Papers written by the Uedu team itself (about the platform, learning analytics, AI in
    education), newest first.

    Args:
        query: optional words to search titles, abstracts and keywords
        limit: how many papers to return (1-20)
    """
    rows = selectors.team_papers(query=query or "", limit=_limit(limit, 10))
    if not rows:
        return _none_found("Uedu team paper", query or "")
    sources = [
        _source(
            p,
            kind="team_paper",
            title=p.title,
            body=_paper_body(p, "Uedu team paper"),
            snippet=clip(f"Uedu team paper · {p.authors} ({p.year or 'n.d.'}). {p.venue}. {p.abstract}"),
            url=p.external_link,
            doi=p.doi,
            year=p.year,
        )
        for p in rows
    ]
    return ToolResult(
        sources=sources,
        data={
            "results": [
                {"title": p.title, "authors": p.authors, "year": p.year, "doi": p.doi, "is_demo": p.is_demo}
                for p in rows
            ]
        },
    )


@REGISTRY.tool(tier="internal", search=True, exact_figures=False)
def search_advisor_papers(
    ctx: ToolContext, query: str, advisor: str | None = None, year_from: int | None = None, limit: int = 10
) -> ToolResult:
    """Search the papers of Uedu advisors (faculty who supervise Uedu research), with each advisor's
    profile link. These are Uedu's own advisors, unlike search_external_papers.

    Args:
        query: topic words to search paper titles and abstracts and advisors' research interests
        advisor: optional advisor to restrict to (slug or part of the name)
        year_from: optional earliest publication year
        limit: how many papers to return (1-20)
    """
    if not query.strip() and not advisor:
        return ToolResult(error="give topic words or an advisor")
    rows = selectors.advisor_papers(
        query=query, advisor=(advisor or "").strip(), year_from=year_from, limit=_limit(limit, 10)
    )
    if not rows:
        return _none_found("advisor paper", query)
    sources = []
    for p in rows:
        who: Advisor = p.advisor
        byline = f"Uedu advisor: {who.name} {who.name_en}".strip() + (
            f", {who.university.name}" if who.university else ""
        )
        body = (
            _paper_body(p, byline)
            + f"\nAdvisor profile: {who.link}"
            + (f"\nCited by: {p.cited_by_count}" if p.cited_by_count is not None else "")
        )
        sources.append(
            _source(
                p,
                kind="advisor_paper",
                title=p.title,
                body=body,
                snippet=clip(f"{byline} · {p.year or 'n.d.'} · {p.venue}. {p.abstract}"),
                url=p.external_link,
                advisor=who.slug,
                advisor_name=who.name,
                advisor_profile_url=who.link,
                doi=p.doi,
                year=p.year,
            )
        )
    return ToolResult(
        sources=sources,
        data={
            "results": [
                {
                    "title": p.title,
                    "advisor": p.advisor.name,
                    "advisor_profile_url": p.advisor.link,
                    "year": p.year,
                    "doi": p.doi,
                    "is_demo": p.is_demo,
                }
                for p in rows
            ]
        },
    )


# --------------------------------------------------------------------------- clusters, advisors, universities
def _advisor_source(advisor: Advisor, cluster: ResearchCluster) -> Source:
    papers = list(advisor.papers.all())[:5]
    titles = "\n".join(f"- {p.title} ({p.year or 'n.d.'})" for p in papers)
    body = (
        f"{advisor.name} {advisor.name_en}".strip()
        + (f", {advisor.title}" if advisor.title else "")
        + (f"\nUniversity: {_university_label(advisor.university)}" if advisor.university else "")
        + (f"\nDepartment: {advisor.department}" if advisor.department else "")
        + f"\nResearch cluster: {cluster.name}"
        + (f"\nResearch interests: {advisor.research_interests}" if advisor.research_interests else "")
        + f"\nProfile: {advisor.link}"
        + (f"\nRecent papers:\n{titles}" if titles else "")
    )
    place = advisor.university.name if advisor.university else ""
    return _source(
        advisor,
        kind="advisor",
        title=f"{advisor.name} {advisor.name_en}".strip() + (f" — {place}" if place else ""),
        body=body,
        snippet=clip(
            f"Uedu advisor, {advisor.title} {place} {advisor.department}. Research interests: {advisor.research_interests}"
        ),
        url=advisor.link,
        advisor=advisor.slug,
        cluster=cluster.slug,
    )


@REGISTRY.tool(tier="internal", search=False, exact_figures=False)
def list_research_clusters(ctx: ToolContext, query: str | None = None) -> ToolResult:
    """The Uedu research clusters (groups of advisors working on one field), with their advisors.

    Args:
        query: optional words to find matching clusters; omit to list all
    """
    rows = selectors.research_clusters(query=query or "")
    if not rows:
        return _none_found("research cluster", query or "")
    sources = []
    for cluster in rows:
        advisors = ", ".join(a.name for a in cluster.advisors.all())
        body = (
            f"{cluster.name} {cluster.name_en}".strip()
            + (f"\n{cluster.description}" if cluster.description else "")
            + (f"\nKeywords: {cluster.keywords}" if cluster.keywords else "")
            + (f"\nAdvisors: {advisors}" if advisors else "")
        )
        sources.append(
            _source(
                cluster,
                kind="research_cluster",
                title=f"{cluster.name} {cluster.name_en}".strip(),
                body=body,
                cluster=cluster.slug,
            )
        )
    return ToolResult(
        sources=sources,
        data={
            "results": [
                {
                    "slug": c.slug,
                    "name": c.name,
                    "name_en": c.name_en,
                    "advisors": [a.name for a in c.advisors.all()],
                    "is_demo": c.is_demo,
                }
                for c in rows
            ]
        },
    )


@REGISTRY.tool(tier="internal", search=False, exact_figures=False)
def get_cluster_advisors(ctx: ToolContext, cluster: str) -> ToolResult:
    """The Uedu advisors of one research cluster: position, university, research interests, profile
    link and recent papers.

    Args:
        cluster: the cluster's slug (from list_research_clusters) or its name
    """
    found = selectors.cluster_by_name(cluster)
    if found is None:
        return ToolResult(
            error=f"no single research cluster matches {cluster!r}; known clusters: {', '.join(selectors.cluster_names()) or 'none'}"
        )
    advisors = list(found.advisors.all())
    return ToolResult(
        sources=[_advisor_source(a, found) for a in advisors],
        data={
            "cluster": found.slug,
            "is_demo": found.is_demo,
            "advisors": [
                {"slug": a.slug, "name": a.name, "profile_url": a.link, "is_demo": a.is_demo}
                for a in advisors
            ],
        },
    )


@REGISTRY.tool(tier="internal", search=False, exact_figures=False)
def list_uedu_universities(ctx: ToolContext, query: str | None = None) -> ToolResult:
    """The universities in the Uedu network, with city, website and how many catalogue courses and
    advisors each has.

    Args:
        query: optional words to find matching universities; omit to list all
    """
    rows = selectors.universities(query=query or "")
    if not rows:
        return _none_found("university", query or "")
    sources = []
    for u in rows:
        courses, advisors = u.courses.count(), u.advisors.count()
        body = (
            _university_label(u)
            + (f"\nCity: {u.city}" if u.city else "")
            + (f"\nWebsite: {u.website}" if u.website else "")
            + f"\nCourses in the Uedu catalogue: {courses} · Uedu advisors: {advisors}"
            + (f"\n{u.description}" if u.description else "")
        )
        sources.append(
            _source(
                u, kind="university", title=_university_label(u), body=body, url=u.website, university=u.slug
            )
        )
    return ToolResult(
        sources=sources,
        data={
            "results": [
                {"slug": u.slug, "name": u.name, "name_en": u.name_en, "city": u.city, "is_demo": u.is_demo}
                for u in rows
            ]
        },
    )


# --------------------------------------------------------------------------- internal platform documents
@REGISTRY.tool(tier="internal", search=False, exact_figures=False)
def get_internal_docs(ctx: ToolContext, query: str, limit: int = 5) -> ToolResult:
    """Search Uedu's internal platform documents (guides, policies, course rules) that the asking
    student may read: public documents, this channel's documents and, for staff, staff documents.

    Args:
        query: words to search document titles and text
        limit: how many documents to return (1-20)
    """
    if not query.strip():
        return ToolResult(error="give words to search for")
    user = selectors.active_user(ctx.user_id)
    if user is None:
        return ToolResult(error="the asking user no longer exists or is inactive")
    docs = selectors.search_documents(user, channel_id=ctx.channel_id, query=query, limit=_limit(limit, 5))
    if not docs:
        return _none_found("platform document you may read", query)
    terms, _ = search_terms(query)
    sources = [
        _source(
            d,
            kind="platform_document",
            title=d.title,
            body=f"{d.title}\n{d.body}",
            snippet=excerpt(d.body, terms),
            visibility=d.visibility,
        )
        for d in docs
    ]
    return ToolResult(
        sources=sources,
        data={
            "results": [
                {
                    "title": d.title,
                    "visibility": d.visibility,
                    "url": d.get_absolute_url(),
                    "is_demo": d.is_demo,
                }
                for d in docs
            ]
        },
    )
