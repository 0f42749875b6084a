"""Queueing a Celery job by its name: how a service starts a background job.

The task modules import the services (a task is a thin wrapper over one), so a service that
queues a job names it instead of importing its task: imports then flow one way, tasks → services,
with no cycle to break by a function-level import. The names are declared here, once; each task
module declares its tasks under these same names, and tests/test_import_graph.py checks both.

The apps import their task modules when Django is ready (their AppConfig.ready), so a job sent
from any process goes through its registered task (its options, eager mode in tests); a name that
is not registered would still be sent to the broker by name."""

from __future__ import annotations

from uedu_dr.celery import app

EXECUTE_RESEARCH = "research.tasks.execute_research_task"
CONTINUE_RESEARCH = "research.tasks.continue_research_task"
CLASSIFY_BLOOM = "research.tasks.classify_bloom"
INDEX_MATERIAL = "channels_app.index_material"


def send(name: str, *args, countdown: float | None = None) -> None:
    """Queue the job `name` with `args`, `countdown` seconds from now (None: at once)."""
    app.signature(name, args=args).apply_async(countdown=countdown)
