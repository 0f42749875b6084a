"""Admission control: a start the platform cannot take now is refused at once, with a 503
`server_busy` and a Retry-After, instead of being queued for minutes behind a burst or failing
with a 500 when the process's database connections run out. Two limits, checked in this order by
`admitted()`, the one call of the start path (research.services.lifecycle.task_start):

1. **This web process's starts in progress.** A start's transaction ends under the platform's
   cost-cap lock (quotas), which serialises every start of every process: under a burst, starts
   queue for it, each holding a database connection, until the pool's other users (a log-in, a
   socket's handshake) wait out the pool's timeout. At most UEDU_DR_STARTS_IN_PROGRESS starts run
   at once per process; one more waits up to START_SLOT_SECONDS for its turn, then is refused.
2. **The workers' queue.**

   A research waits in the queue (status queued) until a worker thread claims it. The workers'
threads (UEDU_WORKER_CONCURRENCY per process, sized to what the cores can run at once:
docs/capacity.md) bound how many run; the rest queue. The wait a new start would meet is
estimated from the database, by Little's law:

    expected wait = queued tasks / claims per second over the last CLAIM_WINDOW seconds

and, when no claim happened in that window while tasks are queued (no worker, or every worker
stuck), the age of the oldest queued task. A start is refused when that is above
UEDU_DR_MAX_QUEUE_WAIT_SECONDS; the Retry-After is the time until the queue would be short
enough again (at least MIN_RETRY_AFTER seconds).

Nothing is written before the check, so a refusal charges no quota and reserves nothing. The
figures are two indexed reads per start (the status index, the started_at index); starts that
arrive together may pass the threshold together, which a wait (not a hard count) tolerates."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Count, Min
from django.utils import timezone
from django.utils.translation import gettext as _

from research.models import ResearchTask
from uedu_dr.errors import ServiceError

CLAIM_WINDOW = 30  # seconds of claims the drain rate is counted over
MIN_RETRY_AFTER = 5
MAX_RETRY_AFTER = 600
START_SLOT_SECONDS = 5.0  # under the WebSocket handshake's limit: a refusal, not a timeout


@contextmanager
def admitted() -> Iterator[None]:
    """Hold one of this process's start slots while the start is written, after checking that
    the workers can take it within the set queue wait; raises ServiceError 503 otherwise."""
    slots = _slots()
    if not connection.in_atomic_block:
        connection.close()  # back to the pool while this start waits for its turn
    if not slots.acquire(timeout=START_SLOT_SECONDS):
        raise _busy(MIN_RETRY_AFTER)
    try:
        check_capacity()
        yield
    finally:
        slots.release()


_slot_lock = threading.Lock()
_slot_pool: tuple[int, threading.BoundedSemaphore] | None = None


def _slots() -> threading.BoundedSemaphore:
    """The process's start slots (made again when the setting changes, as in tests)."""
    global _slot_pool
    size = settings.UEDU_DR_STARTS_IN_PROGRESS
    with _slot_lock:
        if _slot_pool is None or _slot_pool[0] != size:
            _slot_pool = (size, threading.BoundedSemaphore(size))
        return _slot_pool[1]


@dataclass(frozen=True)
class QueueLoad:
    queued: int
    claims: int  # tasks claimed by a worker within the last CLAIM_WINDOW seconds
    oldest_queued_seconds: float

    def expected_wait(self) -> float:
        """Seconds a start queued now would wait for a worker."""
        if not self.queued:
            return 0.0
        if not self.claims:
            return self.oldest_queued_seconds
        return self.queued / (self.claims / CLAIM_WINDOW)


def queue_load() -> QueueLoad:
    now = timezone.now()
    queued = ResearchTask.objects.filter(ResearchTask.in_phase(ResearchTask.Phase.QUEUED)).aggregate(
        n=Count("pk"), oldest=Min("created_at")
    )
    claims = ResearchTask.objects.filter(started_at__gte=now - timedelta(seconds=CLAIM_WINDOW)).count()
    oldest = (now - queued["oldest"]).total_seconds() if queued["oldest"] else 0.0
    return QueueLoad(queued=queued["n"], claims=claims, oldest_queued_seconds=max(0.0, oldest))


def check_capacity() -> None:
    """Refuse a start (ServiceError 503 `server_busy`, with Retry-After) that would wait longer
    than UEDU_DR_MAX_QUEUE_WAIT_SECONDS for a worker."""
    limit = settings.UEDU_DR_MAX_QUEUE_WAIT_SECONDS
    load = queue_load()
    wait = load.expected_wait()
    if wait <= limit:
        return
    raise _busy(min(MAX_RETRY_AFTER, max(MIN_RETRY_AFTER, math.ceil(wait - limit))))


def _busy(retry_after: int) -> ServiceError:
    return ServiceError(
        "server_busy",
        _(
            "Too many researches are waiting to start right now. Nothing was started or charged; "
            "please try again in about %(seconds)d seconds."
        )
        % {"seconds": retry_after},
        status=503,
        retry_after=retry_after,
    )
