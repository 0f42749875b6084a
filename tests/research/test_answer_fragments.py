"""The answer's feedback box, citation report and "I understand" as server-rendered fragments (the
htmx path of the page): the same services, permission and rate limit as the API's feedback and
acknowledge endpoints, and what the reader then sees, in both languages."""

from __future__ import annotations

import pytest

from research.models import AnswerFeedback, ResearchTask
from tests.support.research_fixtures import stored_research

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hant"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


@pytest.fixture
def task(personas):
    return stored_research(personas.student, personas.channel)


def box_url(task, query=""):
    return f"/deep_research/task/{task.task_uuid}/feedback_box{query}"


def test_the_not_useful_form_opens_with_its_title_and_closes_again(client, personas, task):
    client.force_login(personas.student)
    for headers, title in (
        (ZH, "抱歉沒有幫上忙。哪裡有問題？（可不填）"),
        (EN, "Sorry it did not help. What was wrong? (optional)"),
    ):
        html = client.get(box_url(task, "?form=not_useful"), **headers).content.decode()
        assert (
            title in html
            and '<form class="feedback-form"' in html
            and '<select name="reason" autofocus>' in html
        )
        assert 'aria-expanded="true"' in html
    html = client.get(box_url(task, "?form=report"), **EN).content.decode()
    assert (
        "What is the problem with this answer?" in html
        and '<input type="hidden" name="form" value="report">' in html
    )
    closed = client.get(box_url(task), **EN).content.decode()
    assert "feedback-form" not in closed and 'aria-expanded="true"' not in closed
    assert "feedback-form" not in client.get(box_url(task, "?form=bogus")).content.decode()
    assert not AnswerFeedback.objects.exists()  # opening a form records nothing


def test_not_useful_with_a_reason_is_recorded_and_the_box_thanks_and_locks_the_rating(client, personas, task):
    client.force_login(personas.student)
    response = client.post(
        box_url(task), {"form": "not_useful", "reason": "wrong_fact", "note": "年份不對。"}, **ZH
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "謝謝你的回饋。" in html and "feedback-form" not in html
    assert 'class="secondary small chosen" aria-expanded="false"' in html  # "not useful" chosen
    assert html.count(" disabled>") == 2  # both rating buttons; a report is still possible
    assert list(AnswerFeedback.objects.values_list("user", "useful", "reason", "note")) == [
        (personas.student.pk, False, "wrong_fact", "年份不對。")
    ]


def test_useful_and_a_report_are_recorded_as_the_api_records_them(client, personas, task):
    client.force_login(personas.student)
    html = client.post(box_url(task), {"useful": "true"}, **EN).content.decode()
    assert "Thank you for your feedback." in html and 'class="secondary small chosen" name="useful"' in html
    assert list(AnswerFeedback.objects.values_list("useful", "reason")) == [(True, "")]
    html = client.post(box_url(task), {"form": "report", "reason": "too_long"}, **EN).content.decode()
    assert "Thank you for your feedback." in html
    assert (
        f'hx-get="/deep_research/task/{task.task_uuid}/feedback_box?form=report" disabled>' in html
    )  # one report per reader
    # One row per reader and answer (the service's rule): the report took the rating's place.
    assert list(AnswerFeedback.objects.values_list("useful", "reason")) == [(None, "too_long")]


def test_a_refused_report_keeps_the_form_open_with_what_was_typed_and_says_why(client, personas, task):
    client.force_login(personas.student)
    response = client.post(box_url(task), {"form": "report", "reason": "", "note": "something is off"}, **EN)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Say whether the answer was useful, or choose a problem." in html
    assert "<textarea" in html and ">something is off</textarea>" in html and 'value="report"' in html
    response = client.post(box_url(task), {"form": "report", "reason": "nonsense"}, **ZH)
    assert response.status_code == 400 and "不認得的問題類型。" in response.content.decode()
    assert not AnswerFeedback.objects.exists()


def test_a_research_without_an_answer_takes_no_feedback(client, personas):
    running = stored_research(
        personas.student, personas.channel, status=ResearchTask.Status.FAILED, error="boom"
    )
    client.force_login(personas.student)
    response = client.post(box_url(running), {"useful": "true"}, **EN)
    assert (
        response.status_code == 409
        and "This research has no answer to give feedback on." in response.content.decode()
    )


def test_the_citation_report_marks_the_citation_or_says_why_not(client, personas, task):
    client.force_login(personas.student)
    url = f"/deep_research/task/{task.task_uuid}/citation_report"
    response = client.post(url, {"citation_number": "2"}, **ZH)
    assert response.status_code == 200
    assert '<span class="small reported" role="status">已回報，謝謝。</span>' in response.content.decode()
    assert "Reported. Thank you." in client.post(url, {"citation_number": "2"}, **EN).content.decode()
    refused = client.post(url, {"citation_number": "99"}, **EN)
    assert refused.status_code == 400
    html = refused.content.decode()
    assert (
        "There is no citation [99] in this answer." in html and 'name="citation_number" value="99"' in html
    )  # the button is back
    assert client.post(url, {"citation_number": "x"}, **EN).status_code == 400
    assert list(AnswerFeedback.objects.values_list("reason", "citation_number")) == [
        ("source_does_not_say", 2)
    ]


def test_the_owner_acknowledges_and_anyone_else_is_refused(client, personas, task):
    url = f"/deep_research/task/{task.task_uuid}/acknowledge"
    client.force_login(personas.teacher)  # may see the research, may not acknowledge for the student
    refused = client.post(url, **ZH)
    assert refused.status_code == 403
    assert 'title="只有提問者本人可以確認這份答案的免責聲明。"' in refused.content.decode()
    client.force_login(personas.student)
    response = client.post(url, **ZH)
    assert (
        response.status_code == 200
        and response.content.decode().strip() == '<span class="ack-done small">你已確認此聲明。</span>'
    )
    assert ResearchTask.objects.get(pk=task.pk).disclaimer_acknowledged_at is not None
    assert "You have acknowledged this." in client.post(url, **EN).content.decode()


@pytest.mark.parametrize("who", ["other_student", "outsider", "other_teacher"])
def test_whoever_may_not_see_the_research_gets_404_from_every_fragment(client, personas, task, who):
    client.force_login(getattr(personas, who))
    base = f"/deep_research/task/{task.task_uuid}"
    assert client.get(box_url(task, "?form=report")).status_code == 404
    assert client.post(box_url(task), {"useful": "true"}).status_code == 404
    assert client.post(f"{base}/citation_report", {"citation_number": "1"}).status_code == 404
    assert client.post(f"{base}/acknowledge").status_code == 404
    assert not AnswerFeedback.objects.exists()
    assert ResearchTask.objects.get(pk=task.pk).disclaimer_acknowledged_at is None


def test_the_fragments_need_a_log_in_and_the_right_method(client, personas, task):
    base = f"/deep_research/task/{task.task_uuid}"
    assert client.post(box_url(task), {"useful": "true"}).status_code == 302
    client.force_login(personas.student)
    assert client.get(f"{base}/citation_report").status_code == 405
    assert client.get(f"{base}/acknowledge").status_code == 405


def test_feedback_through_the_fragments_is_rate_limited_like_the_api(client, personas, task, settings):
    settings.UEDU_DR_RATE_FEEDBACK = "2/m"
    client.force_login(personas.student)
    for _ in range(2):
        assert client.post(box_url(task), {"useful": "true"}).status_code == 200
    limited = client.post(box_url(task), {"useful": "true"}, **EN)
    assert limited.status_code == 429 and "feedback-status" in limited.content.decode()


def test_the_answer_renders_the_box_in_the_readers_state(client, personas, task):
    AnswerFeedback.objects.create(task=task, user=personas.student, useful=True)
    AnswerFeedback.objects.create(
        task=task, user=personas.student, reason="source_does_not_say", citation_number=1
    )
    client.force_login(personas.student)
    page = client.get(f"/channels/{personas.channel.slug}/", **EN).content.decode()
    assert (
        "Thank you for your feedback." in page
        and '<span class="small reported" role="status">Reported. Thank you.</span>' in page
    )
    assert (
        f'hx-post="/deep_research/task/{task.task_uuid}/citation_report"' in page
    )  # the other citations may still be reported
    client.force_login(personas.teacher)  # another reader of the same answer starts afresh
    page = client.get(f"/deep_research/task/{task.task_uuid}", **EN).content.decode()
    assert "Thank you for your feedback." not in page and "Reported. Thank you." not in page
