"""The REST API: starting, errors, visibility, quota, cancel, history, judge, schema."""

from __future__ import annotations

import pytest

from channels_app.models import ChatLog
from research.models import ResearchTask
from research.services import lifecycle
from tests.support.factories import make_channel

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def start(client, django_capture_on_commit_callbacks):
    """POST /start as `user` without reaching the broker (no worker in these tests)."""

    def call(user, **body):
        client.force_login(user)
        with django_capture_on_commit_callbacks(execute=False):
            return client.post("/api/deep_research/start", body, content_type="application/json", **JSON)

    return call


def test_start_with_json_accept_returns_the_task_at_once(db, personas, start):
    response = start(personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk)
    assert response.status_code == 201, response.content
    body = response.json()
    task = ResearchTask.objects.get(task_uuid=body["task_uuid"])
    assert task.status == "queued" and task.trigger_mode == "forced" and task.user == personas.student
    request_log = ChatLog.objects.get(pk=body["request_log_id"])
    assert (request_log.kind, request_log.type, request_log.deep_research_task) == (
        "request",
        "deep_research",
        task,
    )
    assert list(task.events.values_list("type", flat=True)) == ["task_created"]


@pytest.mark.parametrize(
    "body, code",
    [
        ({"question": "   "}, "empty_question"),
        ({"question": "x" * 2001}, "question_too_long"),
        ({"question": "ok question here", "trigger_mode": "sometimes"}, "invalid"),
        ({"channel_id": None}, "invalid"),
    ],
)
def test_bad_input_is_a_400_with_a_clear_error_and_stores_nothing(db, personas, start, body, code):
    payload = {"question": "ok question here", "channel_id": personas.channel.pk, **body}
    payload = {k: v for k, v in payload.items() if v is not None}
    response = start(personas.student, **payload)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert ResearchTask.objects.count() == 0 and ChatLog.objects.count() == 0


def test_a_channel_without_deep_research_is_a_403(db, personas, start):
    personas.channel.deep_research_enabled = False
    personas.channel.save()
    response = start(personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "deep_research_disabled"


def test_an_unknown_channel_and_a_channel_you_are_not_in_get_the_same_answer(db, personas, start):
    """No existence oracle: an outsider cannot tell a real channel id from an unused one."""
    not_member = start(
        personas.outsider, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk
    )
    unknown = start(personas.outsider, question="比較學習分析與布魯姆分類法", channel_id=999999)
    assert not_member.status_code == unknown.status_code == 404
    assert not_member.json() == unknown.json()
    assert unknown.json()["error"]["code"] == "unknown_channel"
    assert ResearchTask.objects.count() == 0 and ChatLog.objects.count() == 0


def test_anonymous_requests_are_refused(client, db, personas):
    response = client.post(
        "/api/deep_research/start",
        {"question": "q", "channel_id": personas.channel.pk},
        content_type="application/json",
        **JSON,
    )
    assert response.status_code in (401, 403)
    assert response.json()["error"]["code"] == "not_authenticated"


def test_quota_exhausted_is_a_429_with_retry_after(db, personas, start, settings):
    settings.UEDU_DEEP_RESEARCH_QUOTA = {"admin": None, "teacher": None, "ta": 40, "student": 2}
    settings.UEDU_DR_MAX_ACTIVE = {**settings.UEDU_DR_MAX_ACTIVE, "student": 3}  # the quota stops the third
    for _ in range(2):
        assert (
            start(
                personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk
            ).status_code
            == 201
        )
    response = start(personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "quota_exceeded"
    assert 0 < int(response["Retry-After"]) <= 24 * 3600
    assert ResearchTask.objects.count() == 2


def test_the_rate_limit_is_a_429_not_a_403(db, personas, start, settings):
    settings.UEDU_DR_RATE_START = "2/m"
    # A new dict: the settings fixture restores what is assigned, not what is changed in place
    # (a prefix changed in place stayed for every later test of the run).
    prefix = f"rate-{personas.student.pk}-{id(settings)}"
    settings.CACHES = {**settings.CACHES, "default": {**settings.CACHES["default"], "KEY_PREFIX": prefix}}
    codes = [
        start(
            personas.teacher, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk
        ).status_code
        for _ in range(3)
    ]
    assert codes[:2] == [201, 201] and codes[2] == 429
    assert (
        int(
            start(personas.teacher, question="再一次比較學習分析", channel_id=personas.channel.pk)[
                "Retry-After"
            ]
        )
        >= 1
    )


def test_the_platform_cap_is_a_503(db, personas, start, settings):
    from decimal import Decimal

    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("1.00")
    settings.UEDU_DR_WORST_CASE_USD = Decimal("0.40")
    settings.UEDU_USER_DAILY_CAP_SHARE = Decimal("1")  # the cap is under test, not one user's share of it
    codes = [
        start(
            personas.teacher, question=f"比較學習分析與布魯姆分類法 {i}", channel_id=personas.channel.pk
        ).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 503]
    response = start(personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk)
    assert response.json()["error"]["code"] == "platform_cap_reached"
    assert int(response["Retry-After"]) >= 60


def test_quota_endpoint_reports_role_limit_use_and_window(client, db, personas, start, settings):
    settings.UEDU_DEEP_RESEARCH_QUOTA = {"admin": None, "teacher": None, "ta": 40, "student": 20}
    start(personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk)
    body = client.get("/api/deep_research/quota").json()
    assert body["role"] == "student" and body["limit"] == 20
    assert body["used"] == 1.0 and body["remaining"] == 19.0
    assert body["window_start"] and body["next_free_at"] > body["window_start"]
    assert body["platform_cap_reached"] is False
    client.force_login(personas.teacher)
    assert client.get("/api/deep_research/quota").json()["unlimited"] is True


VISIBILITY = {
    "student": 200,
    "other_student": 404,
    "teacher": 200,
    "other_teacher": 404,
    "ta": 404,
    "super_ta": 200,
    "other_super_ta": 404,
    "admin": 200,
    "outsider": 404,
}


@pytest.mark.parametrize("who, expected", VISIBILITY.items())
def test_task_and_events_visibility(client, db, personas, start, who, expected):
    uuid = start(
        personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk
    ).json()["task_uuid"]
    client.force_login(getattr(personas, who))
    detail = client.get(f"/api/deep_research/task/{uuid}")
    events = client.get(f"/api/deep_research/task/{uuid}/events?after=0")
    assert (detail.status_code, events.status_code) == (expected, expected)
    if expected == 404:
        assert detail.json()["error"]["code"] == "not_found"
    else:
        assert detail.json()["question"] == "比較學習分析與布魯姆分類法"
        assert [e["type"] for e in events.json()] == ["task_created"]


def test_anonymous_cannot_read_a_task(client, db, personas, start):
    uuid = start(
        personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk
    ).json()["task_uuid"]
    client.logout()
    assert client.get(f"/api/deep_research/task/{uuid}").status_code in (401, 403)


def test_an_unknown_task_is_a_404_like_a_hidden_one(client, db, personas):
    client.force_login(personas.student)
    response = client.get("/api/deep_research/task/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_cancel_by_owner_by_viewer_and_by_stranger(client, db, personas, start):
    uuid = start(
        personas.student, question="比較學習分析與布魯姆分類法", channel_id=personas.channel.pk
    ).json()["task_uuid"]
    client.force_login(personas.other_student)
    assert (
        client.post(
            "/api/deep_research/cancel", {"task_uuid": uuid}, content_type="application/json"
        ).status_code
        == 404
    )
    client.force_login(personas.teacher)
    assert (
        client.post(
            "/api/deep_research/cancel", {"task_uuid": uuid}, content_type="application/json"
        ).status_code
        == 403
    )
    client.force_login(personas.student)
    response = client.post("/api/deep_research/cancel", {"task_uuid": uuid}, content_type="application/json")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    again = client.post("/api/deep_research/cancel", {"task_uuid": uuid}, content_type="application/json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_finished"
    assert (
        client.post(
            "/api/deep_research/cancel", {"task_uuid": "nope"}, content_type="application/json"
        ).status_code
        == 400
    )


def test_my_tasks_lists_only_my_own_with_filters(client, db, personas, start):
    for i in range(2):
        start(personas.student, question=f"比較學習分析與布魯姆分類法 {i}", channel_id=personas.channel.pk)
    start(personas.other_student, question="別人的研究問題比較分析", channel_id=personas.channel.pk)
    first = ResearchTask.objects.filter(user=personas.student).order_by("created_at").first()
    lifecycle.task_cancel(user=personas.student, task=first)
    start(personas.student, question="比較學習分析與布魯姆分類法 2", channel_id=personas.channel.pk)

    client.force_login(personas.student)
    all_mine = client.get("/api/deep_research/my_tasks").json()
    assert len(all_mine) == 3 and all("比較學習分析" in t["question"] for t in all_mine)
    assert [t["status"] for t in client.get("/api/deep_research/my_tasks?status=cancelled").json()] == [
        "cancelled"
    ]
    assert len(client.get("/api/deep_research/my_tasks?limit=2").json()) == 2
    bad = client.get("/api/deep_research/my_tasks?limit=0")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"
    assert client.get("/api/deep_research/my_tasks?status=weird").status_code == 400


def test_the_judge_advises_and_never_starts_anything(client, db, personas, llm):
    client.force_login(personas.student)
    hard = client.post(
        "/api/deep_research/judge",
        {"question": "請比較學習分析與布魯姆分類法在課程設計中的研究證據", "channel_id": personas.channel.pk},
        content_type="application/json",
    ).json()
    easy = client.post(
        "/api/deep_research/judge",
        {"question": "what is 2+2", "channel_id": personas.channel.pk},
        content_type="application/json",
    ).json()
    assert (
        hard["worth_it"] is True and hard["confidence"] >= 0.7 and hard["suggest"] is True and hard["reasons"]
    )
    assert easy["suggest"] is False and easy["confidence"] < 0.5
    assert ResearchTask.objects.count() == 0
    judge_call = llm.calls("judge")[0]
    assert judge_call["response_format"]["json_schema"]["name"] == "deep_research_judge"


def test_the_judge_is_refused_for_another_channel(client, db, personas, llm):
    other = make_channel(slug="other-course")
    client.force_login(personas.student)
    response = client.post(
        "/api/deep_research/judge",
        {"question": "請比較學習分析的研究", "channel_id": other.pk},
        content_type="application/json",
    )
    unknown = client.post(
        "/api/deep_research/judge",
        {"question": "請比較學習分析的研究", "channel_id": 999999},
        content_type="application/json",
    )
    assert response.status_code == unknown.status_code == 404 and response.json() == unknown.json()
    assert llm.calls("judge") == []


def test_the_openapi_schema_describes_every_endpoint(client, db, personas):
    client.force_login(personas.student)
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in [
        "start",
        "cancel",
        "quota",
        "my_tasks",
        "judge",
        "task/{task_uuid}",
        "task/{task_uuid}/events",
        "task/{task_uuid}/stream",
    ]:
        assert f"/api/deep_research/{path}" in paths, path
