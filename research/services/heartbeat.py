"""One heartbeat thread per worker process for every research it runs.

Every UEDU_DR_HEARTBEAT_SECONDS it stamps `last_heartbeat_at` on each running task (so the
reaper can tell a live research from one whose worker died) and signals a `heartbeat` event to
its listeners (not stored: it carries no information worth replaying)."""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from research.models import ResearchTask

from . import events

log = logging.getLogger(__name__)


class HeartbeatMonitor:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[int, tuple[str, float]] = {}  # task id -> (uuid, last beat, monotonic)
        self._thread: threading.Thread | None = None

    def register(self, task_id: int, task_uuid) -> None:
        with self._lock:
            self._tasks[task_id] = (str(task_uuid), time.monotonic())
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="research-heartbeat", daemon=True)
                self._thread.start()

    def unregister(self, task_id: int) -> None:
        with self._lock:
            self._tasks.pop(task_id, None)

    def _due(self, interval: float) -> list[tuple[int, str]]:
        now = time.monotonic()
        due = []
        with self._lock:
            for task_id, (task_uuid, last) in self._tasks.items():
                if now - last >= interval:
                    self._tasks[task_id] = (task_uuid, now)
                    due.append((task_id, task_uuid))
        return due

    def _run(self) -> None:
        while True:
            interval = settings.UEDU_DR_HEARTBEAT_SECONDS
            due = self._due(interval)
            if due:
                try:
                    ResearchTask.objects.filter(
                        pk__in=[t for t, _ in due], status=ResearchTask.Status.RUNNING
                    ).update(last_heartbeat_at=timezone.now())
                except Exception as exc:  # the database briefly away must not kill the thread
                    log.warning("heartbeat update failed: %s", exc)
                    close_old_connections()
                for _, task_uuid in due:
                    events.signal(task_uuid, events.heartbeat_payload(task_uuid))
            time.sleep(min(1.0, interval / 4))
            if not self._tasks:
                connection.close()


monitor = HeartbeatMonitor()
