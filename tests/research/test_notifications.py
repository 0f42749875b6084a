"""The end of a research told to a student who left the page: the e-mail, off by default and
turned on per user, sent by the worker that finished the research, with a link to the result.
(The browser's notification: tests/e2e/test_notifications.py.)"""

from __future__ import annotations

from email.header import decode_header, make_header

import pytest
from django.core import mail

from research.models import NotificationPreference, ResearchTask
from research.services import lifecycle, notifications
from tests.conftest import sent_mail
from tests.support.factories import make_user
from tests.support.research_fixtures import stored_research
from tests.support.stack import wait_for


def subject_of(message) -> str:
    return str(make_header(decode_header(message["Subject"])))


@pytest.mark.slow
def test_the_worker_emails_the_link_to_the_result_when_the_student_asked_for_it(worker, personas):
    notifications.set_email_when_done(personas.student, True)
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
    )
    messages = wait_for(
        lambda: sent_mail(str(task.task_uuid)), timeout=60, message="the e-mail of the finished research"
    )

    assert ResearchTask.objects.get(pk=task.pk).status == "completed"
    assert len(messages) == 1
    message = messages[0]
    assert message["To"] == "s_alice@example.test"
    assert subject_of(message) == "你的深度研究已完成"  # the question was Chinese: so is the e-mail
    body = message.get_payload(decode=True).decode("utf-8")
    assert f"http://localhost:8000/deep_research/task/{task.task_uuid}" in body
    assert "比較學習分析與布魯姆分類法" in body


def test_no_email_unless_the_student_turned_it_on(db, personas):
    task = stored_research(personas.student, personas.channel)
    assert not NotificationPreference.objects.filter(user=personas.student).exists()
    assert notifications.research_finished(task) is False
    notifications.set_email_when_done(personas.student, True)
    notifications.set_email_when_done(personas.student, False)  # and off again
    assert notifications.research_finished(task) is False
    assert mail.outbox == []


def test_a_cancelled_research_or_a_user_without_an_address_gets_no_email(db, personas):
    notifications.set_email_when_done(personas.student, True)
    cancelled = stored_research(personas.student, personas.channel, status="cancelled")
    assert notifications.research_finished(cancelled) is False
    nameless = make_user("s_no_mail")
    nameless.email = ""
    nameless.save()
    notifications.set_email_when_done(nameless, True)
    assert notifications.research_finished(stored_research(nameless, personas.channel)) is False
    assert mail.outbox == []


def test_a_failed_english_research_is_reported_in_english(db, personas, settings):
    settings.UEDU_SITE_URL = "https://dr.example.test"
    notifications.set_email_when_done(personas.student, True)
    task = stored_research(
        personas.student, personas.channel, question="How do rubrics help?", status="failed", error="boom"
    )
    ResearchTask.objects.filter(pk=task.pk).update(language="en")
    task.refresh_from_db()
    assert notifications.research_finished(task) is True
    [message] = mail.outbox
    assert message.subject == "Your Deep Research stopped"
    assert f"https://dr.example.test/deep_research/task/{task.task_uuid}" in message.body
    assert message.to == [personas.student.email]


def test_the_notification_page_turns_the_email_on_for_its_user_only(client, personas):
    client.force_login(personas.student)
    page = client.get("/deep_research/notifications")
    assert page.status_code == 200
    assert 'name="email_when_done"' in page.content.decode() and "checked" not in page.content.decode()
    response = client.post("/deep_research/notifications", {"email_when_done": "on"})
    assert response.status_code == 302
    assert notifications.email_when_done(personas.student) is True
    assert notifications.email_when_done(personas.other_student) is False
    assert "checked" in client.get("/deep_research/notifications").content.decode()
    client.post("/deep_research/notifications", {})
    assert notifications.email_when_done(personas.student) is False


def test_the_notification_page_needs_a_login(client):
    response = client.get("/deep_research/notifications")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
