"""Telling a student that their research has finished, once they have left the page: the
browser's notification is the page's job (static/js/progress.js); the e-mail, off by default and
turned on per user, is sent here by the worker that finished the research."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from research.legacy_reports import typed_report
from research.models import NotificationPreference, ResearchTask
from research.report_text import report_markdown

log = logging.getLogger(__name__)

# A cancelled research was ended by someone who knows; only these outcomes are news.
NEWS = {ResearchTask.Status.COMPLETED, ResearchTask.Status.FAILED}


def _asked(user) -> QuerySet[NotificationPreference]:
    """The user's preference row if it asks for the e-mail (`user`: the user or their id)."""
    return NotificationPreference.objects.filter(user=user, email_when_done=True)


def email_when_done(user) -> bool:
    return _asked(user).exists()


def set_email_when_done(user, on: bool) -> NotificationPreference:
    preference, _created = NotificationPreference.objects.update_or_create(
        user=user, defaults={"email_when_done": bool(on)}
    )
    return preference


def research_finished(task: ResearchTask) -> bool:
    """E-mail the owner of a finished research a link to its result, if they asked for it and
    have an address. Returns whether a message was sent; a mail server failure is logged, never
    raised (the research itself is done and stored).

    `task`: the row as finish() just stored it, its owner loaded with it. Nothing is read again
    but whether the owner asked, and only for an outcome worth telling to someone with an address:
    nearly every research ends without an e-mail."""
    if task.status not in NEWS or not task.user.email or not email_when_done(task.user_id):
        return False
    link = settings.UEDU_SITE_URL + reverse("research_result", args=[task.task_uuid])
    with translation.override(task.language or settings.LANGUAGE_CODE):
        if task.status == ResearchTask.Status.COMPLETED:
            subject = _("Your Deep Research is ready")
        else:
            subject = _("Your Deep Research stopped")
        body = _(
            "Your question:\n%(question)s\n\nThe result: %(link)s\n\nYou get this e-mail because you asked for it; "
            "turn it off under My research → Notifications."
        ) % {"question": task.user_question[:500], "link": link}
        if task.status == ResearchTask.Status.COMPLETED and task.report_json:
            # The report itself, as the page words it (the AI's words in labelled blockquotes).
            report = report_markdown(
                typed_report(task),
                question=task.user_question,
                limit_hit=task.limit_hit,
                base_url=settings.UEDU_SITE_URL,
            )
            body += "\n\n" + "=" * 40 + "\n\n" + report
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [task.user.email])
    except Exception:  # noqa: BLE001 - any mail transport error
        log.exception("could not e-mail the end of research %s", task.task_uuid)
        return False
    return True
