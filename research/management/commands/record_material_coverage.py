"""`manage.py record_material_coverage`: record what the channel's materials answered in every
completed research that has no record yet (the teacher's dashboard reads them) — what the
periodic sweep does in batches, all at once."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from research.services import material_coverage


class Command(BaseCommand):
    help = "Record the material coverage of completed researches that have none yet."

    def add_arguments(self, parser):
        parser.add_argument(
            "--limit", type=int, default=None, help="at most this many researches (default: all waiting)"
        )

    def handle(self, *args, limit: int | None, **options):
        if limit is not None and limit < 1:
            raise CommandError("--limit must be a positive number")
        outcome = material_coverage.sweep(limit=limit)
        self.stdout.write(f"{outcome['recorded']} recorded, {outcome['failed']} failed")
        if outcome["failed"]:
            raise CommandError("some researches could not be recorded; the log says why")
