"""Writes to the catalogue that carry business rules: importing an advisor's papers from OpenAlex."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Q

from agent.connectors import openalex
from catalogue.models import Advisor, AdvisorPaper


class CatalogueError(Exception):
    """A catalogue operation that cannot be done as asked; the message says why."""


@dataclass
class ImportReport:
    advisor: str
    author_id: str
    fetched: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)


def find_advisor(key: str) -> Advisor:
    """An advisor by primary key (digits) or slug."""
    key = key.strip()
    advisor = (
        Advisor.objects.filter(pk=int(key)).first()
        if key.isdigit()
        else Advisor.objects.filter(slug=key).first()
    )
    if advisor is None:
        raise CatalogueError(f"no advisor with id or slug {key!r}")
    return advisor


def _paper_fields(work: openalex.Work, advisor: Advisor) -> dict:
    return {
        "title": work.title[:500],
        "authors": "; ".join(work.authors)[:10_000],
        "year": work.year,
        "venue": work.venue[:300],
        "doi": work.doi[:200],
        "url": work.url[:500],
        "abstract": work.abstract,
        "openalex_id": work.openalex_id,
        "cited_by_count": work.cited_by_count,
        # A paper attached to a demo advisor is demo data too, however real the paper is.
        "is_demo": advisor.is_demo,
    }


def import_openalex_author(*, advisor: Advisor, author_id: str) -> ImportReport:
    """Create or update the advisor's papers from their OpenAlex works.

    Idempotent: a work is matched to an existing paper by OpenAlex work id, else by DOI, and
    updated in place; running it twice changes nothing the second time. Everything is fetched
    before anything is written, and written in one transaction: a failing OpenAlex leaves the
    stored papers exactly as they were."""
    author_id = openalex.parse_author_id(author_id)
    if advisor.openalex_id and advisor.openalex_id != author_id:
        raise CatalogueError(
            f"advisor {advisor.slug} is linked to OpenAlex author {advisor.openalex_id}, not {author_id}; "
            "correct the advisor's OpenAlex id in the admin first"
        )
    works = openalex.author_works(author_id)  # ExternalServiceError propagates: nothing written yet
    report = ImportReport(advisor=advisor.slug, author_id=author_id, fetched=len(works))
    seen: set[str] = set()
    with transaction.atomic():
        advisor = Advisor.objects.select_for_update().get(pk=advisor.pk)
        if not advisor.openalex_id:
            advisor.openalex_id = author_id
            advisor.save(update_fields=["openalex_id", "updated_at"])
        for work in works:
            if work.openalex_id in seen:
                continue
            seen.add(work.openalex_id)
            fields = _paper_fields(work, advisor)
            match = Q(openalex_id=work.openalex_id)
            if work.doi:
                match |= Q(doi=work.doi)
            existing = list(advisor.papers.filter(match).order_by("pk")[:2])
            if len(existing) > 1:
                # One row has the work id and another the DOI: merging them is a human decision.
                report.skipped.append(
                    f"{work.openalex_id}: matches papers {existing[0].pk} and {existing[1].pk}"
                )
                continue
            if not existing:
                AdvisorPaper.objects.create(advisor=advisor, **fields)
                report.created += 1
                continue
            paper = existing[0]
            changed = [name for name, value in fields.items() if getattr(paper, name) != value]
            if changed:
                for name in changed:
                    setattr(paper, name, fields[name])
                paper.save()
                report.updated += 1
            else:
                report.unchanged += 1
    return report
