"""The "retry with the web on" action: a research that verified nothing and ran without the web tools
starts again, with the same question and context, once its channel allows the web.

Offered (`offered`) and allowed (`retry_with_web`) by the same rule, checked on the server: the
research is the user's own, completed, verified nothing, is not a replay and ran without the web
(ResearchTask.web_tools is False); its channel allows the web tools now; and the user may start a
research there (lifecycle.check_can_research). The new research goes through the one start
service, so the quota, the per-user limits, admission control and the cost reservation hold."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from research.legacy_reports import typed_report
from research.models import ResearchTask
from uedu_dr.errors import ServiceError

from . import lifecycle


def _nothing_verified(task: ResearchTask) -> bool:
    """The report states no fact (what the page calls "nothing could be verified")."""
    if not task.report_json:
        return False
    report = typed_report(task)
    return not any(report.fact(i) for section in report.sections for i in section.facts)


def _refusal(user, task: ResearchTask) -> ServiceError | None:
    if task.user_id != getattr(user, "pk", None) or task.is_replay:
        return ServiceError(
            "not_yours", _("Only the student who asked this question can retry it."), status=403
        )
    try:
        lifecycle.check_can_research(user, task.channel)
    except ServiceError as exc:
        return exc
    if task.status != ResearchTask.Status.COMPLETED or not _nothing_verified(task):
        return ServiceError(
            "not_retryable", _("Only a finished research that verified nothing can be retried with the web.")
        )
    if task.web_tools is not False:
        return ServiceError("ran_with_web", _("This research could already use the web."))
    if not task.channel.web_tools_enabled:
        return ServiceError("web_off", _("The teacher has not allowed web sources in this channel."))
    return None


def offered(user, task: ResearchTask) -> bool:
    """Whether the page shows the action to this user (the same rule the POST checks; the cheap
    parts first, as the chat asks it of every nothing-verified answer it shows)."""
    if task.web_tools is not False or not task.channel.web_tools_enabled:
        return False
    return _refusal(user, task) is None


def retry_with_web(*, user, task: ResearchTask) -> ResearchTask:
    """Start the new research (queued like any other) or raise the refusal's ServiceError."""
    refusal = _refusal(user, task)
    if refusal is not None:
        raise refusal
    new, _log = lifecycle.task_start(
        user=user,
        channel=task.channel,
        question=task.user_question,
        context=task.context_json or None,
        follow_up_of=task.follow_up_of,
    )
    return new
