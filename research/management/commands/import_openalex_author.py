"""python manage.py import_openalex_author <advisor-id-or-slug> <openalex-author-id>"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from agent.connectors.http import ExternalServiceError
from research.services.catalogue_import import CatalogueError, find_advisor, import_openalex_author


class Command(BaseCommand):
    help = "Import (or refresh) an advisor's papers from OpenAlex by author id. Safe to run again."

    def add_arguments(self, parser):
        parser.add_argument("advisor", help="the advisor's id or slug in the Uedu catalogue")
        parser.add_argument(
            "author_id", help="OpenAlex author id, e.g. A5023888391 or https://openalex.org/A5023888391"
        )

    def handle(self, *args, advisor: str, author_id: str, **options):
        try:
            report = import_openalex_author(advisor=find_advisor(advisor), author_id=author_id)
        except (CatalogueError, ExternalServiceError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.advisor} ← OpenAlex {report.author_id}: {report.fetched} works, "
                f"{report.created} created, {report.updated} updated, {report.unchanged} unchanged"
            )
        )
        for line in report.skipped:
            self.stderr.write(f"skipped {line}")
