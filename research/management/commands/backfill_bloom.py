"""`manage.py backfill_bloom`: classify the questions whose Bloom classification failed (or was
never queued), one more attempt each, oldest first — what the periodic sweep does, on demand."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from agent.llm_factory import llm_configured
from research.services import bloom


class Command(BaseCommand):
    help = "Give each question left without a Bloom level one more classification attempt."

    def add_arguments(self, parser):
        parser.add_argument(
            "--limit", type=int, default=None, help="at most this many questions (default: all waiting)"
        )
        parser.add_argument("--dry-run", action="store_true", help="only count the questions waiting")

    def handle(self, *args, limit: int | None, dry_run: bool, **options):
        if limit is not None and limit < 1:
            raise CommandError("--limit must be a positive number")
        waiting = bloom.unclassified_rows().count()
        if dry_run:
            self.stdout.write(f"{waiting} question(s) wait for a Bloom level")
            return
        if not llm_configured():
            raise CommandError(
                "No language model is configured (OPENAI_BASE_URL / OPENAI_API_KEY); nothing was classified."
            )
        outcomes = bloom.backfill(limit=limit)
        self.stdout.write(
            f"classified {outcomes['classified']}, failed {outcomes['failed']}, skipped {outcomes['skipped']} "
            f"(of {waiting} waiting)"
        )
