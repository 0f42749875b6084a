"""Consent periods follow the Deep Research switch wherever a channel is saved."""

from datetime import timedelta

import time_machine
from django.utils import timezone

from governance import consent
from governance.models import ChannelConsent, ConsentWithdrawal
from tests.support.factories import make_channel


def test_switching_deep_research_on_opens_a_consent_period_under_the_framework_in_force(db, settings):
    settings.UEDU_RESEARCH_CONSENT_FRAMEWORK = "NTU-REC 202507EM058"
    channel = make_channel(deep_research=False)
    assert not ChannelConsent.objects.filter(channel=channel).exists()

    channel.deep_research_enabled = True
    channel.save()
    channel.save()  # saving again changes nothing

    [period] = ChannelConsent.objects.filter(channel=channel)
    assert period.framework == "NTU-REC 202507EM058" and period.ended_at is None


def test_switching_it_off_closes_the_period_and_on_again_opens_another(db):
    channel = make_channel(deep_research=True)
    with time_machine.travel(timezone.now() + timedelta(days=1)):
        channel.deep_research_enabled = False
        channel.save()
    with time_machine.travel(timezone.now() + timedelta(days=2)):
        channel.deep_research_enabled = True
        channel.save()
    first, second = ChannelConsent.objects.filter(channel=channel).order_by("started_at")
    assert first.ended_at is not None and second.ended_at is None and second.started_at > first.ended_at


def test_a_new_framework_replaces_the_old_one(db, settings):
    channel = make_channel(deep_research=True)
    settings.UEDU_RESEARCH_CONSENT_FRAMEWORK = "NTU-REC 202901EM001"
    channel.save()
    assert list(
        ChannelConsent.objects.filter(channel=channel, ended_at__isnull=True).values_list(
            "framework", flat=True
        )
    ) == ["NTU-REC 202901EM001"]
    assert ChannelConsent.objects.filter(channel=channel, ended_at__isnull=False).count() == 1


def test_the_teacher_switching_it_on_in_the_admin_records_consent(client, db):
    channel = make_channel(deep_research=False)
    channel.owner.is_staff = True
    channel.owner.save()
    client.force_login(channel.owner)
    response = client.post(
        f"/admin/channels_app/channel/{channel.pk}/change/",
        {
            "deep_research_enabled": "on",
            "auto_suggest_threshold": "0.7",
            "plan_review": "off",
            "description": "",
            "syllabus": "",
            "system_prompt": "",
            "memberships-TOTAL_FORMS": 0,
            "memberships-INITIAL_FORMS": 0,
            "memberships-MIN_NUM_FORMS": 0,
            "memberships-MAX_NUM_FORMS": 1000,
        },
    )
    assert response.status_code == 302
    assert ChannelConsent.objects.filter(channel=channel, ended_at__isnull=True).exists()


def test_a_withdrawal_is_recorded_once(db, personas):
    first = consent.withdraw_consent(
        student=personas.student, channel=personas.channel, recorded_by=personas.admin
    )
    again = consent.withdraw_consent(student=personas.student, channel=personas.channel)
    everywhere = consent.withdraw_consent(student=personas.other_student, channel=None)
    assert first.pk == again.pk and ConsentWithdrawal.objects.count() == 2
    assert consent.withdrawn_user_ids([personas.channel.pk]) == {
        personas.student.pk,
        personas.other_student.pk,
    }
    assert consent.withdrawn_user_ids([]) == {everywhere.user_id}
