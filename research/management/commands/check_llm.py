"""`manage.py check_llm`: does a language model answer at the configured endpoint (GET /models)?

Prints what `make run` shows before anyone logs in; `--json` prints the status object. Exits 0
when the models the roles use are listed, 1 otherwise. `--measure` also measures the server once
(prompt and generation speed, context window, json_schema and tool calls) and prints the minutes
a research would take and, when that is past the deadline, the settings to change."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand

from agent.model_endpoint import describe, describe_measurement, measure_model, model_endpoint_status


class Command(BaseCommand):
    help = "Say whether a language model answers at OPENAI_BASE_URL / OPENAI_API_KEY, and what to set if not."

    def add_arguments(self, parser):
        parser.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for GET /models")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the status as one JSON object"
        )
        parser.add_argument(
            "--measure",
            action="store_true",
            help="also measure speed, context window, json_schema and tool calls (a few model calls)",
        )

    def handle(self, *args, timeout: float, as_json: bool, measure: bool, **options):
        status = model_endpoint_status(timeout=timeout)
        if measure and status["ok"]:
            status["measured"] = measure_model()
        lines = describe(status)
        if status.get("measured"):
            lines += describe_measurement(status["measured"], settings.UEDU_DR_MAX_SECONDS)
        self.stdout.write(json.dumps(status, ensure_ascii=False) if as_json else "\n".join(lines))
        if not status["ok"]:
            raise SystemExit(1)
