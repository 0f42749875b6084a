"""`manage.py check_llm`: does a language model answer at the configured endpoint (GET /models)?

Prints what `make run` shows before anyone logs in; `--json` prints the status object. Exits 0
when the models the roles use are listed, 1 otherwise."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from agent.model_endpoint import describe, model_endpoint_status


class Command(BaseCommand):
    help = "Say whether a language model answers at OPENAI_BASE_URL / OPENAI_API_KEY, and what to set if not."

    def add_arguments(self, parser):
        parser.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for GET /models")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the status as one JSON object"
        )

    def handle(self, *args, timeout: float, as_json: bool, **options):
        status = model_endpoint_status(timeout=timeout)
        self.stdout.write(json.dumps(status, ensure_ascii=False) if as_json else "\n".join(describe(status)))
        if not status["ok"]:
            raise SystemExit(1)
