"""A long chat history for paging tests and bench/channel_page.py: a student's turns in a channel,
written in bulk as the product writes them (a chat question and its reply linked by in_reply_to;
every `research_every`-th turn, counting back from the latest, a finished Deep Research: its task,
request row and response row), one second apart so the order is known."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from channels_app.models import ChatLog
from research.models import ResearchTask
from tests.support.research_fixtures import ANSWER, CITATIONS

CHAT_ANSWER = "Learning analytics uses data about learners to improve teaching. " * 6


def question_text(number: int) -> str:
    return f"question number {number:04d} about learning analytics"


def seed_history(
    user, channel, count: int, *, first: int = 0, research_every: int = 7, start: datetime | None = None
) -> list[str]:
    """Write `count` turns numbered first … first+count-1, oldest first, starting at `start` (by
    default `count` seconds ago, so the last is about now); return their question texts in order."""
    start = start or timezone.now() - timedelta(seconds=count + 1)
    numbers = range(first, first + count)
    # Counted back from the latest turn: the latest page holds the same mix however long the history.
    last = first + count - 1
    researches = [n for n in numbers if research_every and (last - n) % research_every == 0]
    tasks = dict(
        zip(
            researches,
            ResearchTask.objects.bulk_create(
                ResearchTask(
                    user=user,
                    channel=channel,
                    user_question=question_text(n),
                    trigger_mode="forced",
                    status=ResearchTask.Status.COMPLETED,
                    final_answer=ANSWER,
                    citations_json=CITATIONS,
                    verification_json={"status": "complete", "counts": {"supported": 2}, "conflicts": []},
                    tokens_used=1234,
                    duration_seconds=12.5,
                )
                for n in researches
            ),
            strict=True,
        )
    )
    requests = ChatLog.objects.bulk_create(
        ChatLog(
            channel=channel,
            user=user,
            kind=ChatLog.Kind.REQUEST,
            type=ChatLog.Type.DEEP_RESEARCH if n in tasks else ChatLog.Type.CHAT,
            content=question_text(n),
            deep_research_task=tasks.get(n),
            bloom_level="analyze",
        )
        for n in numbers
    )
    replies = ChatLog.objects.bulk_create(
        ChatLog(
            channel=channel,
            user=user,
            kind=ChatLog.Kind.RESPONSE,
            type=request.type,
            content=ANSWER if n in tasks else CHAT_ANSWER,
            in_reply_to=request,
            deep_research_task=tasks.get(n),
        )
        for n, request in zip(numbers, requests, strict=True)
    )
    # bulk_create stamps "now" (auto_now_add): set the times the history is about.
    for offset, (request, reply) in enumerate(zip(requests, replies, strict=True)):
        request.created_at = start + timedelta(seconds=offset)
        reply.created_at = request.created_at + timedelta(milliseconds=500)
    ChatLog.objects.bulk_update([*requests, *replies], ["created_at"])
    for n, task in tasks.items():
        task.created_at = task.started_at = start + timedelta(seconds=n - first)
        task.finished_at = task.created_at + timedelta(seconds=12)
    ResearchTask.objects.bulk_update(tasks.values(), ["created_at", "started_at", "finished_at"])
    return [question_text(n) for n in numbers]
