"""Celery tasks: thin wrappers over services. Workers re-fetch by id and tolerate missing rows.

Services queue these by name (uedu_dr.jobs), never by importing this module: imports flow one
way, tasks → services."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from research.services import bloom, lifecycle, material_coverage, runner
from uedu_dr import jobs

# Celery enforces these only in the prefork pool; in the threads pool the engine's own clock
# (max_seconds + grace, with every LLM call's timeout cut to the time left) bounds a run, and
# the reaper catches a worker that died.
SOFT_LIMIT = settings.UEDU_DR_MAX_SECONDS + settings.UEDU_DR_GRACE_SECONDS + 60
HARD_LIMIT = settings.UEDU_DR_MAX_SECONDS + settings.UEDU_DR_GRACE_SECONDS + 120


@shared_task(
    name=jobs.EXECUTE_RESEARCH,
    acks_late=True,
    ignore_result=True,
    soft_time_limit=SOFT_LIMIT,
    time_limit=HARD_LIMIT,
)
def execute_research_task(task_id: int) -> None:
    runner.execute_task(task_id)


@shared_task(
    name=jobs.CONTINUE_RESEARCH,
    acks_late=True,
    ignore_result=True,
    soft_time_limit=SOFT_LIMIT,
    time_limit=HARD_LIMIT,
)
def continue_research_task(task_id: int) -> None:
    """The second part of a research with plan review (research.services.plan_review)."""
    runner.continue_task(task_id)


@shared_task(ignore_result=True)
def reap_stale_tasks() -> dict:
    return lifecycle.reap_stale_tasks()


@shared_task(name=jobs.CLASSIFY_BLOOM, ignore_result=True)
def classify_bloom(chat_log_id: int) -> None:
    bloom.classify_and_schedule(chat_log_id)


@shared_task(ignore_result=True)
def retry_failed_bloom() -> dict:
    """The periodic sweep (beat schedule "retry-failed-bloom-classifications")."""
    return dict(bloom.backfill(limit=settings.UEDU_BLOOM_SWEEP_BATCH))


@shared_task(ignore_result=True)
def record_material_coverage() -> dict:
    """The periodic sweep (beat schedule "record-material-coverage")."""
    return material_coverage.sweep(limit=settings.UEDU_COVERAGE_SWEEP_BATCH)
