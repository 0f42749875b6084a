"""Reviewers' decisions on a research's unresolved conflicts: the channel's teacher or a Super TA
with an NDA chooses the prevailing side or marks a conflict unsettleable, with a reason, on the
result page or through the API; the student sees it (page and report JSON) and is told by e-mail.
Everyone else gets 403/404 and nothing is stored; bad input is a 400 that stores nothing."""

from __future__ import annotations

import pytest
from django.core import mail
from django.utils.timezone import localtime

from agent.engine.report_legacy import legacy_conflict_key
from channels_app.models import SuperTaNda
from research.models import ConflictDecision, ResearchTask
from research.services import notifications
from tests.support import report_examples as X

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}

KEY = "c-enrolment-2021"  # the English example's unresolved conflict (its resolved one: "c-outcomes")
SETTLED = "c-outcomes"


def conflicted(personas) -> ResearchTask:
    task = X.stored_report(personas.student, personas.channel, X.english_report())
    ResearchTask.objects.filter(pk=task.pk).update(needs_review=True)
    task.refresh_from_db()
    return task


def legacy_conflicted(personas) -> tuple[ResearchTask, str]:
    """A research stored with a 1.x report: its conflict's key is the 1.x hash."""
    data = X.v1_report()
    task = X.stored_report(personas.student, personas.channel, data, language="en")
    return task, legacy_conflict_key(data["conflicts"][0])


def page_post(client, task, **data):
    return client.post(f"/deep_research/task/{task.task_uuid}/conflicts/decide", data, **EN)


def api_post(client, task, body):
    return client.post(
        f"/api/deep_research/task/{task.task_uuid}/conflicts/decide",
        body,
        content_type="application/json",
        **EN,
    )


def test_a_1x_conflict_is_decided_under_its_stored_key_and_the_key_tells_conflicts_apart(client, personas):
    data = X.v1_report()
    key = legacy_conflict_key(data["conflicts"][0])
    assert len(key) == 64 and legacy_conflict_key(dict(data["conflicts"][0])) == key
    reversed_sides = dict(data["conflicts"][0], sides=list(reversed(data["conflicts"][0]["sides"])))
    assert legacy_conflict_key(reversed_sides) != key
    task, key = legacy_conflicted(personas)
    client.force_login(personas.teacher)
    assert page_post(client, task, conflict_key=key, choice="0", reason="The filing.").status_code == 302
    page = client.get(f"/deep_research/task/{task.task_uuid}", **EN).content.decode()
    section = page[page.index('id="conflicts"') :]
    assert "A reviewer decided that side 1 prevails." in section and "The filing." in section


def test_the_teacher_decides_on_the_page_and_the_student_sees_it_and_is_told(client, personas):
    task = conflicted(personas)
    notifications.set_email_when_done(personas.student, True)
    client.force_login(personas.teacher)
    form_page = client.get(f"/deep_research/task/{task.task_uuid}", **EN).content.decode()
    assert f'value="{KEY}"' in form_page and "Decide the conflicts" in form_page
    assert f'value="{SETTLED}"' not in form_page  # only unresolved conflicts are offered

    response = page_post(client, task, conflict_key=KEY, choice="1", reason="The survey is newer.")
    assert response.status_code == 302
    row = ConflictDecision.objects.get()
    assert (row.task_id, row.conflict_key, row.decision, row.side, row.decided_by) == (
        task.pk,
        KEY,
        "side",
        1,
        personas.teacher,
    )
    assert row.reason == "The survey is newer."
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [personas.student.email]
    assert str(task.task_uuid) in mail.outbox[0].body

    client.force_login(personas.student)
    page = client.get(f"/deep_research/task/{task.task_uuid}", **EN).content.decode()
    section = page[page.index('id="conflicts"') :]
    assert "A reviewer decided that side 2 prevails." in section and "The survey is newer." in section
    assert "t_owner" in section and localtime(row.decided_at).strftime("%Y-%m-%d %H:%M") in section
    assert "prevails (reviewer&#x27;s decision)" in section or "prevails (reviewer's decision)" in section
    assert "Decide the conflicts" not in page  # the student gets no decision form

    report = client.get(f"/api/deep_research/task/{task.task_uuid}/report").json()
    decided = next(c for c in report["conflicts"] if c["key"] == KEY)
    assert decided["decision"]["decision"] == "side" and decided["decision"]["side"] == 1
    assert (
        decided["decision"]["decided_by"] == "t_owner"
        and decided["decision"]["reason"] == "The survey is newer."
    )
    assert decided["decision"]["decided_at"].startswith(row.decided_at.strftime("%Y-%m-%d"))
    assert next(c for c in report["conflicts"] if c["key"] != KEY)["decision"] is None
    assert report["schema_version"] == "2.0"


def test_the_page_is_in_the_readers_language(client, personas):
    task = conflicted(personas)
    client.force_login(personas.teacher)
    page_post(client, task, conflict_key=KEY, choice="unsettleable", reason="Both surveys are sound.")
    client.force_login(personas.student)
    page = client.get(
        f"/deep_research/task/{task.task_uuid}", HTTP_ACCEPT_LANGUAGE="zh-hant"
    ).content.decode()
    assert "審閱者判斷" in page and "Both surveys are sound." in page


def test_a_super_ta_with_an_nda_decides_through_the_api_and_a_newer_decision_supersedes(client, personas):
    task = conflicted(personas)
    client.force_login(personas.teacher)
    assert page_post(client, task, conflict_key=KEY, choice="0", reason="First look.").status_code == 302
    client.force_login(personas.super_ta)
    response = api_post(
        client, task, {"conflict_key": KEY, "decision": "unsettleable", "reason": "Both are sound."}
    )
    assert response.status_code == 201, response.content
    assert response.json()["decision"] == "unsettleable" and response.json()["decided_by"] == "sta_a"
    assert ConflictDecision.objects.filter(task=task).count() == 2  # both kept: the audit record
    client.force_login(personas.student)
    page = client.get(f"/deep_research/task/{task.task_uuid}", **EN).content.decode()
    section = page[page.index('id="conflicts"') :]
    assert "cannot settle this conflict" in section and "Both are sound." in section
    assert "First look." not in section and "side 1 prevails" not in section
    report = client.get(f"/api/deep_research/task/{task.task_uuid}/report").json()
    decided = next(c for c in report["conflicts"] if c["key"] == KEY)["decision"]
    assert (
        decided["decision"] == "unsettleable" and decided["side"] is None and decided["decided_by"] == "sta_a"
    )


@pytest.mark.parametrize("who", ["student", "other_teacher", "super_ta_without_nda", "anonymous"])
def test_the_wrong_people_are_refused_and_nothing_is_stored(client, personas, who):
    task = conflicted(personas)
    if who == "super_ta_without_nda":
        SuperTaNda.objects.filter(user=personas.super_ta).delete()
        client.force_login(personas.super_ta)
    elif who != "anonymous":
        client.force_login(getattr(personas, who))
    page = page_post(client, task, conflict_key=KEY, choice="0", reason="Mine.")
    api = api_post(client, task, {"conflict_key": KEY, "decision": "side", "side": 0, "reason": "Mine."})
    if who == "anonymous":
        assert page.status_code == 302 and "/login" in page["Location"]
        assert api.status_code in (401, 403)
    else:
        assert page.status_code in (403, 404)
        assert api.status_code in (403, 404)
        assert api.json()["error"]["code"] in ("not_reviewer", "not_found")
    assert not ConflictDecision.objects.exists()
    assert not mail.outbox


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"conflict_key": "0" * 64, "decision": "side", "side": 0, "reason": "x"}, "unknown_conflict"),
        (
            {"conflict_key": SETTLED, "decision": "side", "side": 0, "reason": "x"},
            "unknown_conflict",
        ),
        ({"conflict_key": KEY, "decision": "side", "side": 2, "reason": "x"}, "bad_side"),
        ({"conflict_key": KEY, "decision": "side", "reason": "x"}, "bad_side"),
        ({"conflict_key": KEY, "decision": "unsettleable", "reason": "  "}, "empty_reason"),
        ({"conflict_key": KEY, "decision": "settled", "reason": "x"}, "invalid"),
    ],
)
def test_bad_input_is_a_clear_400_and_stores_nothing(client, personas, body, code):
    task = conflicted(personas)
    notifications.set_email_when_done(personas.student, True)
    client.force_login(personas.teacher)
    response = api_post(client, task, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"]
    if code != "invalid":
        assert error["code"] == code
    assert not ConflictDecision.objects.exists() and not mail.outbox


def test_bad_input_on_the_page_returns_to_the_result_page_with_the_reason(client, personas):
    """tests/web/test_review_closing.py shows where the page says it."""
    task = conflicted(personas)
    client.force_login(personas.teacher)
    response = page_post(client, task, conflict_key=KEY, choice="7", reason="x")
    assert response.status_code == 302 and response["Location"].startswith(
        f"/deep_research/task/{task.task_uuid}#"
    )
    assert "Choose one of the conflict" in client.get(response["Location"], **EN).content.decode()
    response = page_post(client, task, conflict_key="nope", choice="0", reason="x")
    page = client.get(response["Location"], **EN).content.decode()
    assert "The decision was not saved:" in page and "no unresolved conflict with that key" in page
    assert not ConflictDecision.objects.exists()
