"""Reviewers' decisions on the unresolved conflicts of a research: whoever holds conflicts.decide in
the channel (its owner, its Super TAs with an NDA on file, platform admins) chooses the side that prevails
or marks the conflict as one the sources cannot settle, with a reason. Each decision is a new row
(the audit record); the newest per conflict is the one shown. The student is told by e-mail,
through the same preference as the finished-research e-mail.

A decision is a review: once every unresolved conflict of a research has one, the research leaves
the review queue (`ResearchTask.conflicts_decided_at`), as it does when a reviewer writes a note."""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from agent.engine.report_types import Conflict, Decision, Report
from channels_app.access import can
from channels_app.roles import CONFLICTS_DECIDE
from research.legacy_reports import typed_report
from research.models import ConflictDecision, ResearchTask
from research.services.notifications import email_when_done
from uedu_dr.errors import ServiceError

log = logging.getLogger(__name__)

MAX_REASON = 2000


def stored_report(task: ResearchTask) -> Report:
    """The task's stored report as the typed object (a 1.x report converted: its conflicts keep
    the keys their decisions were stored under)."""
    return typed_report(task)


def unresolved_conflicts(task: ResearchTask, report: Report | None = None) -> dict[str, Conflict]:
    """The report's unresolved conflicts by key, in report order."""
    report = report or stored_report(task)
    return {c.key: c for c in report.conflicts if c.status == "unresolved" and c.key}


def current_decisions(task: ResearchTask) -> dict[str, ConflictDecision]:
    """The newest decision per conflict key (older ones stay stored, superseded)."""
    latest: dict[str, ConflictDecision] = {}
    for row in task.conflict_decisions.select_related("decided_by").order_by("-decided_at", "-pk"):
        latest.setdefault(row.conflict_key, row)
    return latest


def decide(
    *, task: ResearchTask, user, key: str, decision: str, side: int | None, reason: str
) -> ConflictDecision:
    if not can(user, CONFLICTS_DECIDE, task.channel_id):
        raise ServiceError(
            "not_reviewer",
            _("Only the channel's teacher and Super TAs can review this research."),
            status=403,
        )
    conflict = unresolved_conflicts(task).get(key or "")
    if conflict is None:
        raise ServiceError("unknown_conflict", _("This research has no unresolved conflict with that key."))
    if decision == ConflictDecision.Decision.SIDE:
        n_sides = len(conflict.sides)
        if side is None or not 0 <= side < n_sides:
            raise ServiceError(
                "bad_side", _("Choose one of the conflict's sides (0 to %(last)d).") % {"last": n_sides - 1}
            )
    elif decision == ConflictDecision.Decision.UNSETTLEABLE:
        side = None
    else:
        raise ServiceError("bad_decision", _("The decision must be “side” or “unsettleable”."))
    reason = (reason or "").strip()
    if not reason:
        raise ServiceError("empty_reason", _("Please give a reason for the decision."))
    if len(reason) > MAX_REASON:
        raise ServiceError(
            "reason_too_long", _("The reason is too long (at most %(n)d characters).") % {"n": MAX_REASON}
        )
    with transaction.atomic():
        # Decisions on one research one at a time, so that whichever decides its last conflict
        # sees every other decision and closes the review.
        ResearchTask.objects.select_for_update().filter(pk=task.pk).values_list("pk").first()
        row = ConflictDecision.objects.create(
            task=task, conflict_key=key, decision=decision, side=side, reason=reason, decided_by=user
        )
        if set(unresolved_conflicts(task)) <= set(current_decisions(task)):
            ResearchTask.objects.filter(pk=task.pk, conflicts_decided_at__isnull=True).update(
                conflicts_decided_at=row.decided_at
            )
    # After the row: a mail failure is logged in there and cannot lose the decision.
    tell_the_student(task.pk)
    return row


def tell_the_student(task_id: int) -> bool:
    """E-mail the owner that a reviewer decided a conflict of their research, if they asked for the
    finished-research e-mail and have an address. A mail failure is logged, never raised."""
    task = ResearchTask.objects.select_related("user").get(pk=task_id)
    if not task.user.email or not email_when_done(task.user_id):
        return False
    link = settings.UEDU_SITE_URL + reverse("research_result", args=[task.task_uuid]) + "#conflicts"
    with translation.override(task.language or settings.LANGUAGE_CODE):
        subject = _("A reviewer decided a conflict in your Deep Research")
        body = _(
            "Your question:\n%(question)s\n\nA reviewer decided between the sources that disagreed: "
            "%(link)s\n\nYou get this e-mail because you asked for e-mails about your researches; "
            "turn it off under My research → Notifications."
        ) % {"question": task.user_question[:500], "link": link}
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [task.user.email])
    except Exception:  # noqa: BLE001 - any mail transport error
        log.exception("could not e-mail the conflict decision of research %s", task.task_uuid)
        return False
    return True


def decision_of(row: ConflictDecision) -> Decision:
    """The decision as the report carries it: codes, the reviewer's reason, who and when."""
    return Decision(
        decision=row.decision,
        side=row.side,
        reason=row.reason,
        decided_by=row.decided_by.username if row.decided_by else "",
        decided_at=row.decided_at.isoformat(),
    )


def decision_json(row: ConflictDecision) -> dict:
    """The decision as the API answers a new one (the same fields as in the report)."""
    return dataclasses.asdict(decision_of(row))


def report_with_decisions(task: ResearchTask) -> Report:
    """The stored report with each decided unresolved conflict carrying its current decision (the
    stored report never changes: the decision is added when it is read)."""
    report = stored_report(task)
    if report.conflicts:
        decisions = current_decisions(task)
        for conflict in report.conflicts:
            if conflict.status == "unresolved" and conflict.key in decisions:
                conflict.decision = decision_of(decisions[conflict.key])
    return report
