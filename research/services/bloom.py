"""Bloom classification of the questions in the chat log (Cognomics).

Every request row (a Deep Research question or an ordinary chat question) is classified once, in
the background, by a light structured LLM call, and has one trigger: a job queued when the row is
committed (research.receivers), so the worker always finds the row and a rolled-back row queues
nothing. A failure leaves the level empty and is retried with doubling delays, a bounded number
of times (settings.UEDU_BLOOM_MAX_ATTEMPTS): each attempt is claimed by a conditional UPDATE of
bloom_attempts, so duplicate deliveries and retries together can never run more attempts than the
bound, and a row already classified is never classified again.

The periodic sweep (`backfill`, on the beat schedule, and `manage.py backfill_bloom`) is only a
recovery: it looks at rows older than UEDU_BLOOM_SWEEP_AFTER_MINUTES that still have no level,
because their job was never queued (the broker was down) or used up its attempts (the model was
down for a while). Each sweep grants such a row one more attempt, oldest rows first, at most
UEDU_BLOOM_SWEEP_BATCH rows per sweep and UEDU_BLOOM_MAX_TOTAL_ATTEMPTS attempts per row in all:
the model calls it can cause are bounded."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agent.engine import prompts, schemas
from agent.engine.llm import LLMError
from agent.llm_factory import ask_about_question, llm_configured
from channels_app.models import ChatLog
from uedu_dr import jobs
from uedu_dr.errors import ServiceError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BloomOutcome:
    status: str  # classified | retry | gave_up | skipped
    attempts: int = 0
    row_id: int | None = None  # the request row attempted (None when none was claimed)

    @property
    def retry_in(self) -> int:
        """Seconds before the next attempt: the base delay, doubled after each failure."""
        return settings.UEDU_BLOOM_RETRY_SECONDS * 2 ** max(0, self.attempts - 1)


def needs_classification(chat_log: ChatLog) -> bool:
    return chat_log.kind == ChatLog.Kind.REQUEST and not chat_log.bloom_level


def classify(chat_log_id: int, *, max_attempts: int | None = None) -> BloomOutcome:
    """One attempt, claimed only while the row has fewer than `max_attempts` (default
    UEDU_BLOOM_MAX_ATTEMPTS) attempts behind it."""
    if not llm_configured():
        log.warning("Bloom classification of chat log %s skipped: no LLM is configured", chat_log_id)
        return BloomOutcome("skipped")
    limit = max_attempts or settings.UEDU_BLOOM_MAX_ATTEMPTS
    claimed = ChatLog.objects.filter(
        pk=chat_log_id, kind=ChatLog.Kind.REQUEST, bloom_level="", bloom_attempts__lt=limit
    ).update(bloom_attempts=F("bloom_attempts") + 1)
    if not claimed:  # gone, classified already, or out of attempts
        return BloomOutcome("skipped")
    row = (
        ChatLog.objects.filter(pk=chat_log_id)
        .select_related("user")
        .only("content", "bloom_attempts", "user")
        .first()
    )
    if row is None:
        return BloomOutcome("skipped")
    attempts = row.bloom_attempts
    try:
        verdict = ask_about_question(
            "bloom", prompts.BLOOM, row.content, schemas.BLOOM, "bloom_level", user=row.user, max_tokens=500
        )
    except (LLMError, ServiceError) as exc:  # ServiceError: the daily cost cap refused the call
        log.warning(
            "Bloom classification of chat log %s failed (attempt %s/%s): %s",
            chat_log_id,
            attempts,
            limit,
            exc,
        )
        return BloomOutcome("retry" if attempts < limit else "gave_up", attempts, row.pk)
    ChatLog.objects.filter(pk=row.pk, bloom_level="").update(
        bloom_level=verdict["level"],
        bloom_confidence=min(1.0, max(0.0, float(verdict["confidence"]))),
        bloom_rationale=verdict["rationale"][:1000],
    )
    return BloomOutcome("classified", attempts, row.pk)


def unclassified_rows(*, limit: int | None = None):
    """Request rows without a level that the first round of attempts is done with: older than
    UEDU_BLOOM_SWEEP_AFTER_MINUTES (rows still in their retry chain are left to it) and below the
    total bound of attempts. Oldest first."""
    cutoff = timezone.now() - timedelta(minutes=settings.UEDU_BLOOM_SWEEP_AFTER_MINUTES)
    rows = ChatLog.objects.filter(
        kind=ChatLog.Kind.REQUEST,
        bloom_level="",
        created_at__lt=cutoff,
        bloom_attempts__lt=settings.UEDU_BLOOM_MAX_TOTAL_ATTEMPTS,
    ).order_by("created_at", "id")
    return rows[:limit] if limit else rows


def backfill(*, limit: int | None = None) -> Counter:
    """Give each unclassified row one more attempt (see the module's note); returns the count of
    outcomes by status. An attempt is claimed by the same conditional UPDATE as every other one,
    so a sweep and a command running together never attempt a row twice."""
    outcomes: Counter = Counter()
    if not llm_configured():
        return outcomes
    for row_id, attempts in unclassified_rows(limit=limit).values_list("id", "bloom_attempts"):
        outcome = classify(row_id, max_attempts=attempts + 1)
        outcomes["failed" if outcome.status in ("retry", "gave_up") else outcome.status] += 1
    return outcomes


def enqueue(chat_log_id: int) -> None:
    """Queue the classification; never let a broker failure break the write that asked for it
    (the level just stays empty, which is what a failed classification looks like anyway)."""
    try:
        jobs.send(jobs.CLASSIFY_BLOOM, chat_log_id)
    except Exception as exc:
        log.error("could not queue the Bloom classification of chat log %s: %s", chat_log_id, exc)


def enqueue_on_commit(chat_log: ChatLog) -> None:
    """Queue the job of a new request row once it is committed."""
    if needs_classification(chat_log):
        chat_log_id = chat_log.pk
        transaction.on_commit(lambda: enqueue(chat_log_id), robust=True)


def classify_and_schedule(chat_log_id: int) -> BloomOutcome:
    """One attempt; a failure that may be retried queues the next one after its delay."""
    outcome = classify(chat_log_id)
    if outcome.status == "retry":
        jobs.send(jobs.CLASSIFY_BLOOM, outcome.row_id, countdown=outcome.retry_in)
    return outcome
