"""Re-embed every indexed material with the configured embedding backend (run after changing
UEDU_EMBEDDING_BACKEND, UEDU_EMBEDDING_MODEL or UEDU_EMBEDDING_DIMENSIONS)."""

from django.core.management.base import BaseCommand, CommandError

from channels_app.materials import reembed_materials


class Command(BaseCommand):
    help = (
        "Re-embed the chunks of every ready material with the configured backend and index the new dimension."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--all",
            dest="redo_all",
            action="store_true",
            help="also re-embed chunks already embedded by the configured model",
        )

    def handle(self, *args, redo_all: bool = False, **options):
        report = reembed_materials(force=redo_all, log_line=lambda line: self.stdout.write(f"  {line}"))
        self.stdout.write(
            f"{report['model']} ({report['dimension']} dimensions): {report['reembedded']} re-embedded, "
            f"{report['skipped']} already current, {len(report['failed'])} failed"
        )
        if report["index_created"]:
            self.stdout.write(f"created the HNSW index for {report['dimension']} dimensions")
        if report["indexes_dropped"]:
            self.stdout.write(f"dropped unused HNSW indexes for dimensions {report['indexes_dropped']}")
        if report["failed"]:
            raise CommandError(
                f"{len(report['failed'])} materials kept their previous vectors; fix the backend and run again"
            )
