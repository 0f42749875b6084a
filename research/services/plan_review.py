"""Plan review: after `plan_complete` the student may edit the sub-questions (channel setting:
off / optional / required). The run waits — heartbeats continue — until the student continues
or the time limit passes, then researches the plan as it then stands. Edits are stored."""

from __future__ import annotations

import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from research.models import ResearchTask
from uedu_dr.errors import ServiceError

POLL_SECONDS = 0.5
MAX_SUB_QUESTIONS = 6
MAX_CHARS = 500


def wait_seconds(mode: str) -> int:
    return {"optional": settings.UEDU_DR_PLAN_REVIEW_OPTIONAL_SECONDS, "required": settings.UEDU_DR_PLAN_REVIEW_SECONDS}.get(mode, 0)


def hook(task: ResearchTask, sink):
    """The engine's review_plan callback for this task, or None when the channel has it off."""
    if task.plan_review_mode not in ("optional", "required"):
        return None

    def review(plan: dict) -> dict:
        # The proposed plan is stored now, so the student's edits can be compared with it.
        ResearchTask.objects.filter(pk=task.pk).update(plan_json=plan)
        deadline = timezone.now() + timedelta(seconds=wait_seconds(task.plan_review_mode))
        sink.emit("status_change", {"from": "running", "to": "awaiting_plan_review", "mode": task.plan_review_mode,
                                    "deadline": deadline.isoformat(), "sub_questions": [sq["question"] for sq in plan["sub_questions"]]})
        confirmed = None
        while timezone.now() < deadline:
            row = ResearchTask.objects.filter(pk=task.pk).values("plan_confirmed_at", "cancel_requested", "plan_edits_json").first()
            if row is None or row["cancel_requested"]:
                return plan  # the engine's next check ends the run
            if row["plan_confirmed_at"]:
                confirmed = row
                break
            time.sleep(POLL_SECONDS)
        edited = _apply(plan, (confirmed or {}).get("plan_edits_json") or {})
        changed = edited["sub_questions"] != plan["sub_questions"]
        if confirmed is None:
            # Nobody answered: proceed with the plan as it is, and record that it timed out.
            ResearchTask.objects.filter(pk=task.pk, plan_confirmed_at__isnull=True).update(
                plan_edits_json={"timed_out": True}, plan_confirmed_at=timezone.now()
            )
        sink.emit("status_change", {"from": "awaiting_plan_review", "to": "running", "plan_edited": changed,
                                    "timed_out": confirmed is None, "sub_questions": [sq["question"] for sq in edited["sub_questions"]]})
        return edited

    return review


def _apply(plan: dict, edits: dict) -> dict:
    questions = edits.get("sub_questions")
    if not questions:
        return plan
    tools = {sq["question"]: sq["suggested_tools"] for sq in plan["sub_questions"]}
    return dict(plan, sub_questions=[{"question": q, "suggested_tools": tools.get(q, [])} for q in questions])


def submit(*, task: ResearchTask, user, sub_questions: list[str] | None) -> ResearchTask:
    """The owner continues the run, with edited sub-questions or (None) the plan as proposed."""
    if task.user_id != user.pk:
        raise ServiceError("not_owner", _("Only the person who started this research can review its plan."), status=403)
    edits = {}
    if sub_questions is not None:
        cleaned = [q.strip() for q in sub_questions if isinstance(q, str) and q.strip()]
        if not 1 <= len(cleaned) <= MAX_SUB_QUESTIONS:
            raise ServiceError("invalid_plan", _("A plan needs between 1 and %(n)d sub-questions.") % {"n": MAX_SUB_QUESTIONS})
        if any(len(q) > MAX_CHARS for q in cleaned):
            raise ServiceError("invalid_plan", _("Each sub-question may have at most %(n)d characters.") % {"n": MAX_CHARS})
        original = [sq["question"] for sq in (task.plan_json or {}).get("sub_questions", [])]
        edits = {"sub_questions": cleaned, "original": original, "by": user.username, "at": timezone.now().isoformat()}
    with transaction.atomic():
        updated = ResearchTask.objects.filter(
            pk=task.pk, status=ResearchTask.Status.RUNNING, plan_review_mode__in=["optional", "required"], plan_confirmed_at__isnull=True
        ).update(plan_edits_json=edits, plan_confirmed_at=timezone.now())
    if not updated:
        raise ServiceError("not_awaiting_review", _("This research is not waiting for a plan review."), status=409)
    task.refresh_from_db()
    return task
