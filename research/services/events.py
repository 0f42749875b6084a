"""Research events: stored with a per-task seq (the source of truth), then signalled on the
channel layer after commit. Clients that miss a signal catch up from the table."""

from __future__ import annotations

import logging
import uuid

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.utils import timezone

from research.models import ResearchEvent

log = logging.getLogger(__name__)

# Events that end a task's stream.
TERMINAL_TYPES = frozenset({"completed", "failed", "cancelled"})


class TaskGone(Exception):
    """The task row no longer exists (deleted while running)."""


def group_name(task_uuid: uuid.UUID | str) -> str:
    return f"research.task.{uuid.UUID(str(task_uuid)).hex}"


def serialize(event: ResearchEvent, task_uuid) -> dict:
    return {
        "seq": event.seq,
        "type": event.type,
        "task_uuid": str(task_uuid),
        "ts": event.created_at.isoformat(),
        "data": event.data,
    }


def record_event(task_id: int, task_uuid, type: str, data: dict) -> dict:
    """Store the event with the next seq of its task and signal it once the row is committed.

    The seq comes from an UPDATE … RETURNING on the task row: the row lock serialises writers
    across threads and processes, so seq order is commit order and replay never sees a gap
    that is later filled."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE deep_research_tasks SET event_seq = event_seq + 1 WHERE id = %s RETURNING event_seq",
                [task_id],
            )
            row = cursor.fetchone()
        if row is None:
            raise TaskGone(task_id)
        event = ResearchEvent.objects.create(task_id=task_id, seq=row[0], type=type, data=data)
        payload = serialize(event, task_uuid)
        transaction.on_commit(lambda: signal(task_uuid, payload))
    return payload


def signal(task_uuid, payload: dict) -> None:
    """Tell live listeners. Losing this is harmless: listeners re-read the table on gaps."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group_name(task_uuid), {"type": "research.event", "event": payload})
    except Exception as exc:  # Redis down must not fail a research; the DB has the event
        log.warning("could not signal event %s of %s: %s", payload.get("seq"), task_uuid, exc)


def heartbeat_payload(task_uuid) -> dict:
    return {"seq": None, "type": "heartbeat", "task_uuid": str(task_uuid), "ts": timezone.now().isoformat(), "data": {}}


def events_after(task_id: int, after_seq: int, limit: int = 1000) -> list[ResearchEvent]:
    return list(ResearchEvent.objects.filter(task_id=task_id, seq__gt=after_seq).order_by("seq")[:limit])
