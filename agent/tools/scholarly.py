"""search_external_papers: OpenAlex works by authors at East-Asian institutions (tier "scholarly").

These are outside papers. Their titles and snippets say "External" and never call an author a
Uedu advisor, so the synthesizer has no wording to confuse them with Uedu's own advisors
(search_advisor_papers)."""

from __future__ import annotations

import re

from django.conf import settings

from agent.connectors import openalex
from agent.connectors.http import ExternalServiceError
from agent.engine.boundaries import narrowed_countries
from agent.engine.types import Source, ToolResult

from . import REGISTRY
from .registry import ToolContext
from .snippets import TEXT_CHARS, clip

COUNTRY = re.compile(r"^[a-z]{2}$")
MAX_LIMIT = 25


def _authors(names: list[str], keep: int = 3) -> str:
    if not names:
        return "unknown authors"
    return ", ".join(names[:keep]) + (" et al." if len(names) > keep else "")


def _source(work: openalex.Work) -> Source:
    year = work.year or "n.d."
    head = f"External publication indexed by OpenAlex (not a Uedu record). {_authors(work.authors)} ({year})."
    details = (f" {work.venue}." if work.venue else "") + f" Cited by {work.cited_by_count}."
    text = (
        f"{work.title}\n{head}\nAuthors: {', '.join(work.authors) or 'unknown'}"
        + (f"\nInstitutions: {'; '.join(work.institutions)}" if work.institutions else "")
        + (f"\nVenue: {work.venue}" if work.venue else "")
        + f"\nYear: {year} · Cited by: {work.cited_by_count}"
        + (f"\nDOI: {work.doi}" if work.doi else "")
        + (f"\nAbstract: {work.abstract}" if work.abstract else "\nAbstract: not available")
    )
    return Source(
        title=work.title,
        snippet=clip(head + details + (f" {work.abstract}" if work.abstract else "")),
        text=text[:TEXT_CHARS],
        tier="scholarly",
        url=work.url,
        locator=f"DOI {work.doi}" if work.doi else f"OpenAlex {work.openalex_id}",
        meta={
            "external": True,
            "provider": "openalex",
            "openalex_id": work.openalex_id,
            "doi": work.doi,
            "year": work.year,
            "authors": work.authors,
            "institutions": work.institutions,
            "countries": work.countries,
            "cited_by_count": work.cited_by_count,
            "venue": work.venue,
        },
    )


@REGISTRY.tool(tier="scholarly", search=True, exact_figures=False)
def search_external_papers(
    ctx: ToolContext,
    query: str,
    year_from: int | None = None,
    year_to: int | None = None,
    countries: list[str] | None = None,
    limit: int = 10,
) -> ToolResult:
    """Search external scholarly papers on OpenAlex by authors at institutions in Taiwan, Singapore,
    Japan, Korea and China (by default). Results are outside literature, not Uedu advisors' work.

    Args:
        query: search words (title, abstract and full text are searched)
        year_from: optional earliest publication year
        year_to: optional latest publication year
        countries: optional two-letter country codes of the authors' institutions (default tw, sg, jp, kr, cn)
        limit: how many papers to return (1-25)
    """
    if not query.strip():
        return ToolResult(error="give search words")
    for name, year in (("year_from", year_from), ("year_to", year_to)):
        if year is not None and not 1800 <= year <= 2100:
            return ToolResult(error=f"{name} must be a year between 1800 and 2100, got {year}")
    if year_from and year_to and year_from > year_to:
        return ToolResult(error=f"year_from ({year_from}) is after year_to ({year_to})")
    bad = [c for c in countries or () if not COUNTRY.match(str(c).strip().lower())]
    if bad:
        return ToolResult(error=f"countries must be two-letter codes like tw or jp, got {bad}")
    permitted = ctx.scholarly_countries or tuple(c.lower() for c in settings.OPENALEX_COUNTRY_CODES)
    codes, refused = narrowed_countries(countries, permitted)
    if refused:
        # Narrowing is the model's to choose; widening is the teacher's (a channel setting).
        return ToolResult(
            error=f"countries {refused} are outside this course's countries {list(permitted)}; "
            "choose among those or leave countries out"
        )
    try:
        works = openalex.search_works(
            query=query.strip(),
            countries=codes,
            year_from=year_from,
            year_to=year_to,
            limit=max(1, min(MAX_LIMIT, limit)),
        )
    except ExternalServiceError as exc:
        return ToolResult(error=str(exc))
    return ToolResult(
        sources=[_source(w) for w in works],
        data={
            "external": True,
            "filters": {"countries": codes, "year_from": year_from, "year_to": year_to},
            "results": [
                {
                    "title": w.title,
                    "authors": w.authors[:10],
                    "year": w.year,
                    "doi": w.doi,
                    "cited_by_count": w.cited_by_count,
                    "url": w.url,
                }
                for w in works
            ],
        },
    )
