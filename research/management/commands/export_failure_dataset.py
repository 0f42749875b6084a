import json

from django.core.management.base import BaseCommand

from research.services.feedback import failure_items


class Command(BaseCommand):
    help = "Write the failure dataset (promoted reported answers) as evaluation JSONL."

    def add_arguments(self, parser):
        parser.add_argument("out", help="the .jsonl file to write")

    def handle(self, *args, out, **options):
        items = failure_items()
        with open(out, "w", encoding="utf-8") as handle:
            for item in items:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
        self.stdout.write(
            f"{len(items)} failure cases written to {out} (run them: manage.py deep_research_eval {out})"
        )
