"""Research tasks for page tests: stored as the runner stores them, or run for real in this process.

`stored_research` writes the rows a finished research leaves behind (task, request and response
chat rows) with a given answer, for tests about rendering and permissions. `start_here` starts a
research through the real start service and runs it with the real runner in a thread of the test
process, with a tool registry of the test's choosing (a known corpus gives known citations); only
the hop through the broker to the Celery worker is replaced."""

from __future__ import annotations

import threading

from django.db import connection
from django.utils import timezone

from agent.engine.events import TERMINAL
from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolRegistry
from channels_app.models import ChatLog
from research.models import ResearchTask
from research.services import events, lifecycle, replies, runner
from tests.support.corpus_tools import DOCS

CITATIONS = [
    {
        "number": 1,
        "source_id": 1,
        "title": "Learning analytics overview",
        "url": "https://docs.example/la",
        "source_tool": "search_channel_materials",
        "snippet": "Learning analytics measures and analyses data about learners.",
        "tier": "internal",
        "origin": "internal",
        "locator": "week1.pdf p. 3",
    },
    {
        "number": 2,
        "source_id": 2,
        "title": "Retrieval-augmented generation",
        "url": "https://papers.example/rag",
        "source_tool": "search_external_papers",
        "snippet": "RAG grounds language model answers in retrieved passages.",
        "tier": "scholarly",
        "origin": "external",
        "locator": "",
    },
]
ANSWER = (
    "## Answer\n\nLearning analytics studies learner data [1]. Retrieval grounds answers in sources [2].\n"
)


def stored_research(
    user,
    channel,
    *,
    question="比較學習分析與布魯姆分類法",
    answer=ANSWER,
    citations=CITATIONS,
    status=ResearchTask.Status.COMPLETED,
    verification=None,
    error="",
    limit_hit="",
) -> ResearchTask:
    now = timezone.now()
    task = ResearchTask.objects.create(
        user=user,
        channel=channel,
        user_question=question,
        trigger_mode="forced",
        status=status,
        final_answer=answer if status == ResearchTask.Status.COMPLETED else "",
        citations_json=citations,
        verification_json=verification
        if verification is not None
        else {"status": "complete", "counts": {"supported": 2}, "conflicts": []},
        plan_json={
            "complexity": "moderate",
            "sub_questions": [
                {"question": "What is learning analytics?", "suggested_tools": ["search_channel_materials"]}
            ],
            "hypotheses": [],
        },
        tokens_used=1234,
        started_at=now,
        finished_at=now,
        duration_seconds=12.5,
        error=error,
        limit_hit=limit_hit,
    )
    ChatLog.objects.create(
        channel=channel,
        user=user,
        kind=ChatLog.Kind.REQUEST,
        type=ChatLog.Type.DEEP_RESEARCH,
        content=question,
        deep_research_task=task,
    )
    replies.write_response_log(task)
    events.record_event(task.pk, task.task_uuid, TERMINAL[status](response_log_id=None, stop_reason="test"))
    return task


class HereRunner:
    """Replaces only lifecycle.enqueue: queued tasks run in threads here, with `registry`."""

    def __init__(self, registry):
        self.registry = registry
        self.threads: list[threading.Thread] = []

    def __call__(self, task_id: int) -> None:
        thread = threading.Thread(target=self._run, args=(task_id,), daemon=True, name=f"research-{task_id}")
        self.threads.append(thread)
        thread.start()

    def _run(self, task_id: int) -> None:
        try:
            runner.execute_task(task_id, registry=self.registry)
        finally:
            connection.close()

    def join(self, timeout: float = 60) -> None:
        for thread in self.threads:
            thread.join(timeout)
            assert not thread.is_alive(), "an in-process research did not finish"


def start_here(
    monkeypatch, registry, *, user, channel, question, trigger_mode="forced"
) -> tuple[ResearchTask, HereRunner]:
    here = HereRunner(registry)
    monkeypatch.setattr(lifecycle, "enqueue", here)
    task, _ = lifecycle.task_start(user=user, channel=channel, question=question, trigger_mode=trigger_mode)
    return task, here


def gated_registry(gate: threading.Event, *, timeout: float = 60):
    """The test corpus's tools, each waiting for `gate` before answering: a test can look at a
    research while its tool calls are still running, then let them finish."""
    registry = ToolRegistry()

    @registry.tool(tier="internal", search=True, exact_figures=False)
    def search_channel_materials(ctx: ToolContext, query: str) -> ToolResult:
        """Search the course channel's materials.

        Args:
            query: what to look for
        """
        gate.wait(timeout)
        sources = [
            Source(title=t, url=u, snippet=s, text=s, tier=tier, locator=f"{t} p. 1")
            for t, u, s, tier in DOCS[:2]
        ]
        return ToolResult(sources=sources)

    @registry.tool(tier="scholarly", search=True, exact_figures=False)
    def search_external_papers(ctx: ToolContext, query: str) -> ToolResult:
        """Search external scholarly papers.

        Args:
            query: search terms
        """
        gate.wait(timeout)
        title, url, snippet, tier = DOCS[2]
        return ToolResult(sources=[Source(title=title, url=url, snippet=snippet, text=snippet, tier=tier)])

    return registry
