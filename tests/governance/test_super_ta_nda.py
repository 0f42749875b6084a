"""A Super TA reads students' research only while a signed NDA for that channel is on file;
without it they are an ordinary TA — on every page, API endpoint, stream and admin screen
(the rule lives in channels_app.access)."""

from __future__ import annotations

from datetime import date

import pytest
from django.urls import reverse
from django.utils.html import escape

from channels_app.admin import SUPER_TA_NDA_RULE
from channels_app.models import SuperTaNda
from research.models import AnswerFeedback, ResearchStep, ResearchTask
from research.selectors import visible_tasks
from research.services import review
from tests.support.factories import add_member, make_user

QUESTION = "NDA-QUESTION 學習動機與成績的關係"


@pytest.fixture
def world(personas):
    p = personas
    p.sta = add_member(p.channel, make_user("sta_pending", staff=True), "super_ta")
    p.task = ResearchTask.objects.create(
        user=p.student,
        channel=p.channel,
        user_question=QUESTION,
        final_answer="ANSWER-NDA",
        trigger_mode="forced",
        status="completed",
        needs_review=True,
    )
    ResearchStep.objects.create(
        task=p.task, index=1, phase="action", tool_name="search_channel_materials", args={"query": "x"}
    )
    AnswerFeedback.objects.create(task=p.task, user=p.student, useful=False, note="FEEDBACK-NDA")
    return p


def _pages(p):
    t = p.task.task_uuid
    return {
        "result page": f"/deep_research/task/{t}",
        "answer download": f"/deep_research/task/{t}/answer.md",
        "review queue": "/deep_research/review",
        "feedback page": "/deep_research/feedback",
        "API task": f"/api/deep_research/task/{t}",
        "API events": f"/api/deep_research/task/{t}/events",
        "API stream": f"/api/deep_research/task/{t}/stream",
    }


def _contents(client, p):
    """Status of each page, and whether the student's content shows on the lists."""
    client.force_login(p.sta)
    statuses = {name: client.get(url).status_code for name, url in _pages(p).items()}
    api_queue = client.get("/api/deep_research/review_queue").content.decode()
    api_feedback = client.get("/api/deep_research/feedback").content.decode()
    return statuses, str(p.task.task_uuid) in api_queue, "FEEDBACK-NDA" in api_feedback


def test_without_an_nda_a_super_ta_sees_no_student_content(client, world):
    statuses, in_queue, in_feedback = _contents(client, world)
    assert set(statuses.values()) == {404}, statuses
    assert not in_queue and not in_feedback
    assert not visible_tasks(world.sta).exists()  # the WebSocket consumer's check too
    assert not review.can_review(world.sta, world.task)
    response = client.post(
        f"/api/deep_research/task/{world.task.task_uuid}/review",
        {"note": "x"},
        content_type="application/json",
    )
    assert response.status_code == 404


def test_with_an_nda_for_the_channel_the_super_ta_reads_and_reviews(client, world):
    SuperTaNda.objects.create(user=world.sta, channel=world.channel, signed_on=date(2025, 9, 1))
    statuses, in_queue, in_feedback = _contents(client, world)
    assert set(statuses.values()) == {200}, statuses
    assert in_queue and in_feedback
    assert visible_tasks(world.sta).filter(pk=world.task.pk).exists()
    assert QUESTION in client.get(f"/deep_research/task/{world.task.task_uuid}").content.decode()


def test_an_nda_for_another_channel_opens_nothing_here(client, world, personas):
    from channels_app.models import Channel

    SuperTaNda.objects.create(
        user=world.sta, channel=Channel.objects.get(slug="course-b"), signed_on=date(2025, 9, 1)
    )
    statuses, in_queue, _ = _contents(client, world)
    assert set(statuses.values()) == {404} and not in_queue


def test_in_the_admin_a_super_ta_without_an_nda_is_an_ordinary_ta(client, world):
    client.force_login(world.sta)
    change = client.get(reverse("admin:research_researchtask_change", args=[world.task.pk]))
    assert (
        change.status_code == 200
        and QUESTION not in change.content.decode()
        and "ANSWER-NDA" not in change.content.decode()
    )
    assert client.get(reverse("admin:research_researchstep_changelist")).status_code == 403
    assert client.get(reverse("admin:research_answerfeedback_changelist")).status_code == 403

    SuperTaNda.objects.create(user=world.sta, channel=world.channel, signed_on=date(2025, 9, 1))
    change = client.get(reverse("admin:research_researchtask_change", args=[world.task.pk]))
    assert QUESTION in change.content.decode()
    assert client.get(reverse("admin:research_researchstep_changelist")).status_code == 200

    SuperTaNda.objects.filter(user=world.sta).delete()  # the NDA is withdrawn: so is the access
    assert (
        QUESTION
        not in client.get(
            reverse("admin:research_researchtask_change", args=[world.task.pk])
        ).content.decode()
    )


def test_the_appointment_form_states_the_nda_rule_and_only_admins_record_ndas(client, world):
    world.teacher.is_staff = True
    world.teacher.save(update_fields=["is_staff"])
    client.force_login(world.teacher)
    rule = str(SUPER_TA_NDA_RULE)
    rule_tail = rule.split("'")[-1]  # after any apostrophe, which pages escape differently
    for url in (
        reverse("admin:channels_app_channel_change", args=[world.channel.pk]),
        reverse("admin:channels_app_membership_add"),
    ):
        page = client.get(url).content.decode()
        assert escape(rule_tail) in page or rule_tail in page, url
    # A teacher cannot record an NDA (appointing someone opens nothing by itself).
    assert client.get(reverse("admin:channels_app_supertanda_add")).status_code == 403
    client.force_login(world.admin)
    response = client.post(
        reverse("admin:channels_app_supertanda_add"),
        {"user": world.sta.pk, "channel": world.channel.pk, "signed_on": "2025-09-01"},
    )
    assert response.status_code == 302
    nda = SuperTaNda.objects.get(user=world.sta)
    assert nda.channel == world.channel and nda.recorded_by == world.admin
