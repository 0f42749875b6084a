"""Answer feedback and the failure dataset built from it."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from channels_app.access import can
from channels_app.roles import FAILURES_MANAGE
from research.models import AnswerFeedback, FailureCase, ResearchTask
from research.selectors import can_view_task, passages_by_number
from uedu_dr.errors import ServiceError

from . import credibility
from .review import reviewer_channels_filter

MAX_NOTE = 2000


def give_feedback(
    *,
    task: ResearchTask,
    user,
    useful: bool | None = None,
    reason: str = "",
    citation_number: int | None = None,
    note: str = "",
) -> AnswerFeedback:
    """Anyone who may see an answer may say whether it was useful or report a problem with it."""
    if not can_view_task(user, task):
        raise ServiceError("not_found", "No such research task.", status=404)
    if task.status != ResearchTask.Status.COMPLETED:
        raise ServiceError("not_completed", _("This research has no answer to give feedback on."), status=409)
    reason = reason or ""
    if reason and reason not in AnswerFeedback.Reason.values:
        raise ServiceError("invalid", _("Unknown problem type."))
    if useful is None and not reason:
        raise ServiceError("invalid", _("Say whether the answer was useful, or choose a problem."))
    numbers = {c.get("number") for c in task.citations_json or []}
    if reason == AnswerFeedback.Reason.SOURCE_DOES_NOT_SAY and citation_number is None:
        raise ServiceError("invalid", _("Choose the citation that does not say this."))
    if citation_number is not None and citation_number not in numbers:
        raise ServiceError(
            "invalid", _("There is no citation [%(n)s] in this answer.") % {"n": citation_number}
        )
    note = (note or "").strip()
    if len(note) > MAX_NOTE:
        raise ServiceError("invalid", _("The note is too long (at most %(n)d characters).") % {"n": MAX_NOTE})
    # One row per reader, answer and citation: giving feedback again changes it (a flood of the
    # same report is one report). A new "does not say this" report may move the source's
    # credibility; credibility.record_report counts each reader once per source.
    feedback, _created = AnswerFeedback.objects.update_or_create(
        task=task,
        user=user,
        citation_number=citation_number,
        defaults={"useful": useful, "reason": reason, "note": note},
    )
    if not task.is_replay:  # a replay is an evaluation record: it never moves the source statistics
        credibility.record_report(feedback)
    return feedback


def feedback_for_reviewer(user) -> QuerySet[AnswerFeedback]:
    """Feedback on answers in the channels whose research the user reviews (research.review)."""
    rows = AnswerFeedback.objects.select_related("task", "task__channel", "user")
    return rows.filter(task_id__in=ResearchTask.objects.filter(reviewer_channels_filter(user)).values("pk"))


def promote_to_failure(
    *,
    task: ResearchTask,
    user,
    what_was_wrong: str,
    expected_correction: str = "",
    expected_facts: list[str] | None = None,
) -> FailureCase:
    """Platform admins turn a reported answer into an evaluation item: the question, a snapshot of
    the passages its citations pointed at (the channel fixture), what was wrong and the fix."""
    if not can(user, FAILURES_MANAGE):
        raise ServiceError("forbidden", _("Only platform admins can build the failure dataset."), status=403)
    if not (what_was_wrong or "").strip():
        raise ServiceError("invalid", _("Describe what was wrong."))
    passages = passages_by_number(task)
    documents: dict[str, list[str]] = {}
    for citation in task.citations_json or []:
        text = passages.get(citation["number"])
        if text:
            name = (citation.get("locator") or citation.get("title") or f"source-{citation['number']}")[:80]
            documents.setdefault(name, []).append(text)
    return FailureCase.objects.create(
        task=task,
        question=task.user_question,
        language=task.language,
        documents=[{"name": name, "paragraphs": paragraphs} for name, paragraphs in documents.items()],
        what_was_wrong=what_was_wrong.strip(),
        expected_correction=(expected_correction or "").strip(),
        expected_facts=[f for f in (expected_facts or []) if f.strip()]
        or ([expected_correction.strip()] if expected_correction.strip() else []),
        known_conflicts=[
            {"topic": c["topic"], "sides": [p["summary"] for p in c["positions"][:2]]}
            for c in (task.verification_json or {}).get("conflicts", [])
        ],
        created_by=user,
    )


def failure_items() -> list[dict]:
    """The failure dataset in the evaluation's JSONL shape."""
    items = []
    for case in FailureCase.objects.order_by("pk"):
        if not case.documents:
            continue  # nothing to research against
        items.append(
            {
                "id": f"failure-{case.pk}",
                "language": case.language,
                "question": case.question,
                "documents": case.documents,
                "expected_facts": case.expected_facts,
                "known_conflicts": case.known_conflicts,
                "what_was_wrong": case.what_was_wrong,
            }
        )
    return items
