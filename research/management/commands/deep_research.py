"""Run one research from the terminal through the same service and Celery path as the web.

python manage.py deep_research "問題" --channel demo-course --user student1 [--json]
"""

from __future__ import annotations

import json
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import translation

from agent.engine.events import EVENTS, short
from agent.llm_factory import llm_configured
from channels_app.models import Channel
from research.models import ResearchTask
from research.presentation import task_markdown
from research.services import events, lifecycle
from research.views import task_url
from uedu_dr.celery import app as celery_app
from uedu_dr.errors import ServiceError


class Command(BaseCommand):
    help = "Run a Deep Research from the terminal (a Celery worker must be running) and print its report."

    def add_arguments(self, parser):
        parser.add_argument("question")
        parser.add_argument("--channel", required=True, help="channel slug")
        parser.add_argument("--user", required=True, help="username of a member of the channel")
        parser.add_argument(
            "--json", action="store_true", help="print one JSON object instead of the live stream"
        )
        parser.add_argument(
            "--timeout", type=float, default=900.0, help="seconds to wait for the end (default 900)"
        )

    def handle(self, *args, question, channel, user, json: bool, timeout: float, **options):
        if not llm_configured():
            raise CommandError(
                "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server)."
            )
        try:
            channel_obj = Channel.objects.get(slug=channel)
        except Channel.DoesNotExist:
            raise CommandError(f"No channel with slug {channel!r}.") from None
        try:
            user_obj = get_user_model().objects.get(username=user)
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user {user!r}.") from None
        if not celery_app.control.ping(timeout=2.0):
            raise CommandError(
                "No Celery worker answered. Start one (make run, or: celery -A uedu_dr worker --pool threads) and try again."
            )
        try:
            task, _ = lifecycle.task_start(
                user=user_obj, channel=channel_obj, question=question, trigger_mode="forced"
            )
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        seen = self._follow(task, timeout, live=not json)
        task.refresh_from_db()
        if json:
            self.stdout.write(_dump(task, seen))
        else:
            self._report(task)
        if task.status != ResearchTask.Status.COMPLETED:
            raise CommandError(f"research {task.status}: {task.error or task.stop_reason}")

    def _follow(self, task: ResearchTask, timeout: float, *, live: bool) -> list[str]:
        deadline = time.monotonic() + timeout
        last, types = 0, []
        while time.monotonic() < deadline:
            for event in events.events_after(task.pk, last):
                last = event.seq
                types.append(event.type)
                if live:
                    self.stdout.write(f"[{event.seq:>3}] {event.type:<18} {_summary(event.type, event.data)}")
                if event.type in events.TERMINAL_TYPES:
                    return types
            time.sleep(0.3)
        raise CommandError(
            f"Gave up waiting after {timeout:.0f} s; the research {task.task_uuid} may still be running."
        )

    def _report(self, task: ResearchTask) -> None:
        """The report as the page's Markdown in the research's language (research/report_text.py):
        facts quoted with their [N], the AI's words in labelled blockquotes, the sources listed;
        when nothing was verified, why, the sources consulted and the AI's suggested questions."""
        self.stdout.write("\n" + "=" * 72)
        if task.status == ResearchTask.Status.COMPLETED:
            with translation.override(task.language or settings.LANGUAGE_CODE):
                self.stdout.write(task_markdown(task, page_url=settings.UEDU_SITE_URL + task_url(task)))
        else:
            self.stdout.write(f"({task.status}: {task.error})")
        self.stdout.write(
            f"\nstatus={task.status} stop={task.stop_reason} tokens={task.tokens_used} cost=${task.cost_usd} "
            f"time={task.duration_seconds}s task={task.task_uuid}"
        )


def _summary(type: str, data: dict) -> str:
    """An event's line: its declaration's summary (agent.engine.events), or its data cut short for
    a type this version does not declare (an older stored row)."""
    declared = EVENTS.get(type)
    return declared.summary(data) if declared else short(data)


def _dump(task: ResearchTask, event_types: list[str]) -> str:
    return json.dumps(
        {
            "task_uuid": str(task.task_uuid),
            "status": task.status,
            "stop_reason": task.stop_reason,
            "answer": task.final_answer,
            "report": task.report_json,
            "citations": task.citations_json,
            "verification": task.verification_json,
            "tokens": task.tokens_used,
            "cost_usd": float(task.cost_usd),
            "event_types": event_types,
        },
        ensure_ascii=False,
    )
