"""Consent you can see: the teacher reads beside the switch which framework applies, the student
is told before their first research, withdraws and re-joins from their history page; a
withdrawal is audited and removes their rows from every later export."""

from __future__ import annotations

import csv
from datetime import timedelta

from django.utils import timezone
from django.utils.html import escape

from channels_app.models import ChatLog
from governance import consent
from governance.models import ConsentWithdrawal, ExportAudit
from research.models import ResearchTask
from tests.governance.test_export import _export, study  # noqa: F401  (fixture)


def _seen(page: str, text: str) -> bool:
    return escape(text) in page or text in page


def test_the_settings_page_states_the_framework_beside_the_switch(client, personas, settings):
    settings.UEDU_RESEARCH_CONSENT_FRAMEWORK = "NTU-REC 202507EM058"
    client.force_login(personas.teacher)
    page = client.get(f"/channels/{personas.channel.slug}/settings/").content.decode()
    switch = page.index('name="deep_research_enabled"')
    note = page.index('id="consent-note"')
    assert 0 < note - switch < 600  # right beside it
    assert "NTU-REC 202507EM058" in page[note : note + 800] and _seen(page, consent.teacher_switch_note())


def test_the_chat_page_tells_a_student_before_their_first_research_only(client, personas):
    client.force_login(personas.student)
    url = f"/channels/{personas.channel.slug}/"
    page = client.get(url).content.decode()
    assert (
        'id="consent-notice"' in page
        and _seen(page, consent.consent_summary())
        and "/deep_research/my#consent" in page
    )
    ResearchTask.objects.create(
        user=personas.student, channel=personas.channel, user_question="q", trigger_mode="forced"
    )
    assert 'id="consent-notice"' not in client.get(url).content.decode()
    # The teacher is not a research participant: no notice for them.
    client.force_login(personas.teacher)
    assert 'id="consent-notice"' not in client.get(url).content.decode()


def test_a_student_withdraws_and_rejoins_from_their_history_page_and_each_step_is_audited(client, personas):
    client.force_login(personas.student)
    history = client.get("/deep_research/my").content.decode()
    assert (
        'id="consent"' in history
        and personas.channel.name in history
        and _seen(history, consent.consent_summary())
    )

    response = client.post(
        "/deep_research/my/consent", {"choice": "withdraw", "channel": personas.channel.slug}
    )
    assert response.status_code == 302 and response["Location"].endswith("/deep_research/my#consent")
    withdrawal = ConsentWithdrawal.objects.get(user=personas.student)
    assert (
        withdrawal.channel == personas.channel
        and withdrawal.rejoined_at is None
        and withdrawal.recorded_by == personas.student
    )
    assert consent.is_withdrawn(personas.student, personas.channel)
    # The chat page says so.
    assert "consent-notice" in client.get(f"/channels/{personas.channel.slug}/").content.decode()

    client.post("/deep_research/my/consent", {"choice": "rejoin", "channel": personas.channel.slug})
    assert ConsentWithdrawal.objects.get(user=personas.student).rejoined_at is not None
    assert not consent.is_withdrawn(personas.student, personas.channel)
    trail = list(ExportAudit.objects.order_by("pk").values_list("action", "requested_by", "channel"))
    assert trail == [
        ("consent_withdrawn", personas.student.pk, personas.channel.pk),
        ("consent_rejoined", personas.student.pk, personas.channel.pk),
    ]
    # Nobody withdraws for someone else, nor from a channel that is not theirs.
    client.force_login(personas.outsider)
    assert (
        client.post(
            "/deep_research/my/consent", {"choice": "withdraw", "channel": personas.channel.slug}
        ).status_code
        == 404
    )
    assert client.post("/deep_research/my/consent", {"choice": "maybe"}).status_code == 400
    assert client.get("/deep_research/my/consent").status_code == 405


def test_a_withdrawal_takes_the_students_rows_out_of_every_later_export_and_a_rejoin_counts_from_then(
    client, study, tmp_path
):
    p = study
    client.force_login(p.student)
    client.post("/deep_research/my/consent", {"choice": "withdraw", "channel": p.channel.slug})
    out = _export(p, tmp_path / "1", fmt="csv")
    people = {row["person"] for row in csv.DictReader(open(out / "chat_logs.csv", encoding="utf-8-sig"))}
    questions = " ".join(
        row["question"] for row in csv.DictReader(open(out / "tasks.csv", encoding="utf-8-sig"))
    )
    assert len(people) == 1 and "比較學習分析" not in questions and "BOB-ONLY" in questions

    # Re-joining: what she wrote before stays out; a research after the re-join is exported.
    client.post("/deep_research/my/consent", {"choice": "rejoin", "channel": p.channel.slug})
    later = ResearchTask.objects.create(
        user=p.student,
        channel=p.channel,
        user_question="AFTER-REJOIN 問題",
        trigger_mode="forced",
        status="completed",
        final_answer="a",
        finished_at=timezone.now() + timedelta(seconds=1),
    )
    ChatLog.objects.create(
        channel=p.channel,
        user=p.student,
        kind="request",
        type="deep_research",
        content="AFTER-REJOIN 問題",
        deep_research_task=later,
    )
    out = _export(p, tmp_path / "2", fmt="csv")
    questions = " ".join(
        row["question"] for row in csv.DictReader(open(out / "tasks.csv", encoding="utf-8-sig"))
    )
    assert "AFTER-REJOIN" in questions and "比較學習分析" not in questions
