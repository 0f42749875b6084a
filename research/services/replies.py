"""The reply a research leaves in the chat log: its report as Markdown, or what happened to it,
in the student's language. Written once per task, when it ends (research.services.ending)."""

from __future__ import annotations

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_lazy

from channels_app.models import ChatLog
from research.legacy_reports import typed_report
from research.models import ResearchTask
from research.report_text import report_markdown
from research.selectors import request_log_id

STATUS_MESSAGES = {
    ResearchTask.Status.CANCELLED: gettext_lazy("Research cancelled."),
    ResearchTask.Status.FAILED: gettext_lazy("Research failed: %(error)s"),
}


def answer_text(task: ResearchTask, report_json: dict | None, verification_json: dict | None = None) -> str:
    """The answer a research stores and leaves in the chat log: its report as Markdown in the
    research's language (research/report_text.py), the AI's words in labelled blocks; '' for a
    research without a report."""
    if not report_json:
        return ""
    report = typed_report(task, report_json, verification_json or {})
    with translation.override(task.language or settings.LANGUAGE_CODE):
        return report_markdown(report, question=task.user_question, base_url=settings.UEDU_SITE_URL)


def write_response_log(task: ResearchTask) -> ChatLog:
    """The answer (or what happened) joins the conversation, so a reload shows what was seen live."""
    if task.status == ResearchTask.Status.COMPLETED:
        content = task.final_answer
    else:
        with translation.override(task.language):  # the student's language, not the worker's
            content = str(STATUS_MESSAGES[task.status]) % {"error": task.error or "unknown error"}
    return ChatLog.objects.create(
        channel_id=task.channel_id,
        user_id=task.user_id,
        kind=ChatLog.Kind.RESPONSE,
        type=ChatLog.Type.DEEP_RESEARCH,
        content=content,
        in_reply_to_id=request_log_id(task.pk),
        deep_research_task=task,
    )
