"""python manage.py deep_research_replay <uuid> --by ADMIN [--model M | --exact] [--json]

Normal mode: the model answers afresh against the recorded tool results; the comparison gives
the claim-set overlap with the original. --exact: the recorded model answers too; the command
fails (exit status 1) naming the first divergence when the engine asks something the transcript
does not hold, or when the claims, citations or body come out different."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from agent.llm_factory import llm_configured
from channels_app.roles import platform_admins_q
from research.models import ResearchTask
from research.services import replay
from uedu_dr.errors import ServiceError


class Command(BaseCommand):
    help = (
        "Re-run a task's reasoning against its recorded tool results (no new tool calls) and compare; "
        "--exact replays the recorded model answers too."
    )

    def add_arguments(self, parser):
        parser.add_argument("task_uuid")
        parser.add_argument("--model", help="use this model for every role instead of the configured ones")
        parser.add_argument(
            "--exact",
            action="store_true",
            help="replay the recorded model answers too (no model is asked) and require the same "
            "claims, citations and body",
        )
        parser.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
        parser.add_argument(
            "--by",
            required=True,
            help="username of the platform admin running the replay: it is theirs, never the student's",
        )

    def handle(self, *args, task_uuid, model, json: bool, by: str, exact: bool = False, **options):
        from django.contrib.auth import get_user_model

        run_by = get_user_model().objects.filter(platform_admins_q(), username=by).first()
        if run_by is None:
            raise CommandError(f"No active platform admin {by!r}.")
        if not exact and not llm_configured():
            raise CommandError(
                "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server)."
            )
        try:
            original = ResearchTask.objects.get(task_uuid=task_uuid)
        except (ResearchTask.DoesNotExist, ValueError):
            raise CommandError(f"No task {task_uuid}.") from None
        try:
            new = replay.replay_task(original, run_by=run_by, model=model, exact=exact)
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        except replay.ReplayDiverged as exc:
            raise CommandError(f"exact replay failed: {exc}") from None
        report = replay.compare(original, new, exact=exact)
        if json:
            self.stdout.write(_dumps(report))
        else:
            self._print(report)
        if exact and not report["reproduced"]:
            differences = ", ".join(
                f"{name} at {report[f'{name}_first_difference']}"
                for name in ("facts", "citations", "body")
                if not report[f"{name}_match"]
            )
            raise CommandError(
                f"exact replay {report['replay']} did not reproduce the original: {differences}"
            )

    def _print(self, report: dict) -> None:
        self.stdout.write(f"replay {report['replay']} of {report['original']}: {report['replay_status']}")
        for key in (
            "plan_structure_match",
            "cited_sources_match",
            "cited_sources_jaccard",
            "answer_sections_match",
            "facts_match",
            "citations_match",
            "body_match",
            "reproduced",
        ):
            if key in report:
                self.stdout.write(f"  {key:<24} {report[key]}")
        overlap = report["facts_overlap"]
        self.stdout.write(
            f"  {'facts_overlap':<24} {overlap['shared']} shared of {overlap['original']} → "
            f"{overlap['replay']} (jaccard {overlap['jaccard']})"
        )
        self.stdout.write("  metric                   original → replay")
        for name, row in report["metrics"].items():
            self.stdout.write(f"  {name:<24} {row['original']} → {row['replay']}")


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
