"""OpenAlex (https://openalex.org) works: search, an author's works, and abstract rebuilding."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

from catalogue.models import normalise_doi

from .http import ExternalServiceError, get_json

SERVICE = "OpenAlex"
# Only the fields we use: OpenAlex responses are large otherwise.
WORK_FIELDS = ",".join(
    [
        "id",
        "doi",
        "display_name",
        "publication_year",
        "cited_by_count",
        "authorships",
        "primary_location",
        "abstract_inverted_index",
        "type",
    ]
)
AUTHOR_ID = re.compile(r"^(?:https?://openalex\.org/)?(A\d+)$", re.I)
MAX_AUTHOR_WORKS = 2000  # an import is bounded even for the most prolific author


@dataclass
class Work:
    openalex_id: str  # "W2741809807"
    title: str
    year: int | None
    doi: str  # normalised, "" when none
    url: str  # best link for a reader: DOI, else the landing page, else the OpenAlex page
    venue: str
    authors: list[str]
    institutions: list[str]
    countries: list[str]
    cited_by_count: int
    abstract: str
    type: str = ""


def rebuild_abstract(inverted_index: dict | None) -> str:
    """OpenAlex ships abstracts as {word: [positions]}; put each word back at its positions."""
    if not inverted_index or not isinstance(inverted_index, dict):
        return ""
    positions: dict[int, str] = {}
    for word, places in inverted_index.items():
        for place in places or []:
            if isinstance(place, int):
                positions[place] = word
    return " ".join(positions[i] for i in sorted(positions))


def _parse_work(item: dict) -> Work:
    if not isinstance(item, dict) or not item.get("id"):
        raise ExternalServiceError(f"{SERVICE} sent a work without an id")
    raw_id = str(item["id"])
    work_id = raw_id.rsplit("/", 1)[-1]
    doi = normalise_doi(item.get("doi") or "")
    location = item.get("primary_location") or {}
    source = location.get("source") or {}
    authors, institutions, countries = [], [], []
    for authorship in item.get("authorships") or []:
        name = ((authorship or {}).get("author") or {}).get("display_name")
        if name:
            authors.append(name)
        for inst in (authorship or {}).get("institutions") or []:
            if inst.get("display_name") and inst["display_name"] not in institutions:
                institutions.append(inst["display_name"])
            code = (inst.get("country_code") or "").lower()
            if code and code not in countries:
                countries.append(code)
    url = f"https://doi.org/{doi}" if doi else (location.get("landing_page_url") or raw_id)
    year = item.get("publication_year")
    return Work(
        openalex_id=work_id,
        title=(item.get("display_name") or item.get("title") or "(untitled)").strip(),
        year=year if isinstance(year, int) else None,
        doi=doi,
        url=url,
        venue=source.get("display_name") or "",
        authors=authors,
        institutions=institutions,
        countries=countries,
        cited_by_count=int(item.get("cited_by_count") or 0),
        abstract=rebuild_abstract(item.get("abstract_inverted_index")),
        type=item.get("type") or "",
    )


def _credentials() -> tuple[dict, dict]:
    """(params that shape the answer, secret params): the key never enters a cache key or a log."""
    public = {"mailto": settings.OPENALEX_MAILTO} if settings.OPENALEX_MAILTO else {}
    secret = {"api_key": settings.OPENALEX_API_KEY} if settings.OPENALEX_API_KEY else {}
    return public, secret


def _results(data) -> list[dict]:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ExternalServiceError(f"{SERVICE} sent an unexpected response (no results list)")
    return data["results"]


def search_works(
    *, query: str, countries: list[str], year_from: int | None, year_to: int | None, limit: int
) -> list[Work]:
    """Works matching `query` with at least one author at an institution in `countries`."""
    filters = []
    if countries:
        filters.append("institutions.country_code:" + "|".join(countries))
    if year_from:
        filters.append(f"from_publication_date:{year_from}-01-01")
    if year_to:
        filters.append(f"to_publication_date:{year_to}-12-31")
    public, secret = _credentials()
    params = {"search": query, "per-page": limit, "select": WORK_FIELDS, **public}
    if filters:
        params["filter"] = ",".join(filters)
    data = get_json(
        service=SERVICE, url=f"{settings.OPENALEX_BASE_URL}/works", params=params, secret_params=secret
    )
    return [_parse_work(item) for item in _results(data)]


def parse_author_id(value: str) -> str:
    match = AUTHOR_ID.match((value or "").strip())
    if not match:
        raise ValueError(
            f"{value!r} is not an OpenAlex author id (like A5023888391 or https://openalex.org/A5023888391)"
        )
    return match.group(1).upper()


def author_works(author_id: str, *, max_works: int = MAX_AUTHOR_WORKS) -> list[Work]:
    """Every work of one author (cursor paging), never cached: an import wants today's data."""
    author_id = parse_author_id(author_id)
    public, secret = _credentials()
    works: list[Work] = []
    cursor = "*"
    while cursor and len(works) < max_works:
        params = {
            "filter": f"author.id:{author_id}",
            "per-page": 200,
            "cursor": cursor,
            "select": WORK_FIELDS,
            **public,
        }
        data = get_json(
            service=SERVICE,
            url=f"{settings.OPENALEX_BASE_URL}/works",
            params=params,
            secret_params=secret,
            cache_seconds=0,
        )
        page = _results(data)
        works += [_parse_work(item) for item in page]
        next_cursor = (data.get("meta") or {}).get("next_cursor")
        cursor = next_cursor if page and next_cursor != cursor else None
    return works[:max_works]
