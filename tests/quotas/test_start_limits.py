"""No one can hold the platform's daily cap with queued researches: a research's reservation counts
against its user's share of the cap, a user has at most a few researches under way, and a start
taken back before its plan is refunded but counted, so start-and-cancel cannot loop. A student
can still run, one after another, every research their quota allows."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from agent.engine.events import PlanComplete
from channels_app.models import Membership
from quotas import services as quotas
from research.models import ResearchTask
from research.services import events, lifecycle, settlement
from tests.support.factories import add_member, make_user
from uedu_dr.errors import ServiceError

JSON = {"HTTP_ACCEPT": "application/json"}
QUESTION = "比較學習分析與布魯姆分類法在課程設計中的角色"
PLAN = PlanComplete(complexity="simple", sub_questions=[], suggested_tools=[], hypotheses=[], limits={})


@pytest.fixture
def api(client, django_capture_on_commit_callbacks, settings):
    """POST to the API as `user`. The start's enqueue (after commit) is not run: every worker is
    busy, so each research started stays queued and keeps its reservation."""
    settings.UEDU_DR_RATE_START = "1000/m"  # the per-minute rate is not what is under test

    def call(user, path, body, **headers):
        client.force_login(user)
        with django_capture_on_commit_callbacks(execute=False):
            return client.post(
                f"/api/deep_research/{path}", body, content_type="application/json", **JSON, **headers
            )

    return call


def start(api, user, channel, n: int = 0):
    return api(user, "start", {"question": f"{QUESTION} #{n}", "channel_id": channel.pk})


def refused(response, code: str, status: int = 429) -> bool:
    error = response.json()["error"]
    assert error["message"], "a refusal says why"
    return response.status_code == status and error["code"] == code and int(response["Retry-After"]) >= 1


def test_two_accounts_cannot_hold_the_platform_and_a_third_student_still_starts(api, personas, settings):
    """Two accounts trying to hold the platform, at a $100 cap and the default prices ($3.54
    reserved per start)."""
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("100")
    assert settlement.worst_case_cost() == Decimal("3.54")
    channel = personas.channel
    first, second = personas.student, personas.other_student
    third = add_member(channel)

    first_codes = [start(api, first, channel, n).status_code for n in range(20)]
    second_codes = [start(api, second, channel, n).status_code for n in range(9)]
    assert first_codes.count(201) <= 2 and second_codes.count(201) <= 2
    assert set(first_codes[2:]) == set(second_codes[2:]) == {429}
    day = quotas.platform_day()
    for user in (first, second):  # what each holds is within its share (5 % of the cap)
        assert quotas.user_committed_cost(user, day) <= quotas.user_share_usd()

    # The third student is not refused by the platform's cap.
    response = start(api, third, channel)
    assert response.status_code == 201, response.json()

    # Start, cancel and start again: the refunds are kept, the loop is not.
    statuses = []
    for n in range(12):
        for task in ResearchTask.objects.filter(user=first, status="queued"):
            assert api(first, "cancel", {"task_uuid": str(task.task_uuid)}).status_code == 200
        response = start(api, first, channel, 100 + n)
        statuses.append(response.status_code)
        if response.status_code != 201:
            break
    assert refused(response, "cancel_throttled")
    assert statuses.count(201) <= 5  # the default UEDU_DR_CANCEL_RATE, 5 an hour
    assert quotas.quota_status(first).used == 0  # every cancelled start was refunded
    assert quotas.cost_status().committed <= 3 * settlement.worst_case_cost()
    assert start(api, personas.ta, channel).status_code == 201  # and the platform is still open


def test_a_student_has_at_most_two_researches_under_way_and_is_told_so(api, personas):
    student, channel = personas.student, personas.channel
    assert [start(api, student, channel, n).status_code for n in range(2)] == [201, 201]
    response = start(api, student, channel, 2)
    assert refused(response, "too_many_active")
    # The chat page shows the API's own words (chat.js), in the reader's language.
    assert (
        response.json()["error"]["message"]
        == "您已有 2 項研究正在進行。請等其中一項完成或取消一項，再啟動新的研究。"
    )
    english = api(
        student, "start", {"question": QUESTION, "channel_id": channel.pk}, HTTP_ACCEPT_LANGUAGE="en"
    )
    assert english.json()["error"]["message"].startswith("You already have 2 researches under way.")
    assert ResearchTask.objects.filter(user=student).count() == 2  # nothing kept of the refused start
    assert quotas.quota_status(student).used == 2
    # A research awaiting its plan review is under way too; one that ended frees a place.
    waiting, running = ResearchTask.objects.filter(user=student)
    ResearchTask.objects.filter(pk=waiting.pk).update(status="running", plan_review_deadline=timezone.now())
    assert refused(start(api, student, channel, 3), "too_many_active")
    assert api(student, "cancel", {"task_uuid": str(running.task_uuid)}).status_code == 200
    assert start(api, student, channel, 4).status_code == 201


def test_staff_may_have_more_under_way_and_admins_have_no_limit(api, personas, settings):
    channel = personas.channel
    ta_codes = [start(api, personas.ta, channel, n).status_code for n in range(5)]
    teacher_codes = [start(api, personas.teacher, channel, n).status_code for n in range(7)]
    assert ta_codes == [201] * 4 + [429] and teacher_codes == [201] * 6 + [429]
    assert [start(api, personas.admin, channel, n).status_code for n in range(8)] == [201] * 8
    settings.UEDU_DR_MAX_ACTIVE = {**settings.UEDU_DR_MAX_ACTIVE, "ta": 5}  # a setting, by role
    assert start(api, personas.ta, channel, 9).status_code == 201


def finish_at_worst_case(task: ResearchTask) -> None:
    """What a research that spent its whole reservation leaves behind: completed, settled at it."""
    now = timezone.now()
    ResearchTask.objects.filter(pk=task.pk).update(
        status="completed", started_at=now, finished_at=now, cost_usd=settlement.worst_case_cost()
    )
    task.refresh_from_db()
    settlement.settle(task)


def test_a_student_can_run_the_whole_quota_one_after_another_even_at_the_worst_case(personas):
    """The defaults: 20 researches of $3.54 each fit the student's share (5 % of $1,500)."""
    for n in range(20):
        task, _ = lifecycle.task_start(
            queue=False, user=personas.student, channel=personas.channel, question=f"{QUESTION} #{n}"
        )
        finish_at_worst_case(task)
    with pytest.raises(ServiceError) as stopped:
        lifecycle.task_start(queue=False, user=personas.student, channel=personas.channel, question=QUESTION)
    assert stopped.value.code == "quota_exceeded"  # the quota stops them, not the share


def test_a_research_counts_against_the_share_so_even_an_unlimited_quota_is_bounded(personas):
    teacher, share, worst = personas.teacher, quotas.user_share_usd(), settlement.worst_case_cost()
    started = 0
    with pytest.raises(ServiceError) as stopped:
        while True:
            task, _ = lifecycle.task_start(
                queue=False, user=teacher, channel=personas.channel, question=f"{QUESTION} #{started}"
            )
            started += 1
            finish_at_worst_case(task)
    assert (stopped.value.code, stopped.value.status) == ("user_budget_exceeded", 429)
    assert started == int(share // worst)  # 21 at the defaults
    assert quotas.user_committed_cost(teacher, quotas.platform_day()) <= share
    # Admins set the cap and have no share; nor has the evaluation's account, which cannot log in.
    evaluation = make_user("evaluation")
    evaluation.set_unusable_password()
    evaluation.save()
    add_member(personas.channel, evaluation, Membership.Role.TEACHER)
    for exempt in (personas.admin, evaluation):
        for n in range(25):
            task, _ = lifecycle.task_start(
                queue=False, user=exempt, channel=personas.channel, question=f"{QUESTION} #{n}"
            )
            finish_at_worst_case(task)


def test_cancels_after_the_plan_and_finished_researches_are_not_counted_by_the_throttle(personas, settings):
    settings.UEDU_DR_CANCEL_RATE = "2/h"
    student, channel = personas.student, personas.channel
    for n in range(4):  # finished ones: nothing to throttle
        task, _ = lifecycle.task_start(
            queue=False, user=student, channel=channel, question=f"{QUESTION} #{n}"
        )
        finish_at_worst_case(task)
    planned, _ = lifecycle.task_start(queue=False, user=student, channel=channel, question=f"{QUESTION} p")
    events.record_event(planned.pk, planned.task_uuid, PLAN)
    lifecycle.task_cancel(user=student, task=planned)  # half refunded: paid for, not throttled
    for n in range(2):
        task, _ = lifecycle.task_start(
            queue=False, user=student, channel=channel, question=f"{QUESTION} c{n}"
        )
        lifecycle.task_cancel(user=student, task=task)
    with pytest.raises(ServiceError) as throttled:
        lifecycle.task_start(queue=False, user=student, channel=channel, question=QUESTION)
    assert throttled.value.code == "cancel_throttled" and 1 <= throttled.value.retry_after <= 3601
