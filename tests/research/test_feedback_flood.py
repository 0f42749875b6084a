"""Answer feedback cannot be flooded: one row per reader, answer and citation (a database
constraint), only distinct readers move a source's credibility, a per-user rate limit, and a
bounded note."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from research.models import AnswerFeedback, SourceStat
from tests.support.research_fixtures import stored_research

REPORT = {"reason": "source_does_not_say", "citation_number": 2}


def url(task) -> str:
    return f"/api/deep_research/task/{task.task_uuid}/feedback"


def reports(kind: str, key: str) -> int:
    stat = SourceStat.objects.filter(kind=kind, key=key).first()
    return stat.reports if stat else 0


def test_five_hundred_identical_reports_count_once(client, db, personas, settings):
    settings.UEDU_DR_RATE_FEEDBACK = "1000/m"
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    statuses = {
        client.post(url(task), REPORT, content_type="application/json").status_code for _ in range(500)
    }

    assert statuses == {201}
    assert AnswerFeedback.objects.filter(task=task).count() == 1
    assert reports("domain", "papers.example") == 1
    assert reports("tool", "search_external_papers") == 1


def test_only_distinct_readers_move_a_source(client, db, personas, settings):
    settings.UEDU_DR_RATE_FEEDBACK = "1000/m"
    first = stored_research(personas.student, personas.channel, question="first question")
    second = stored_research(
        personas.student, personas.channel, question="second question"
    )  # cites the same sources
    client.force_login(personas.student)
    for task in (first, second):
        assert client.post(url(task), REPORT, content_type="application/json").status_code == 201
    assert reports("domain", "papers.example") == 1  # the same reader, two answers: one reader

    client.force_login(personas.teacher)  # the channel's teacher may see and report the answer too
    assert client.post(url(first), REPORT, content_type="application/json").status_code == 201
    assert reports("domain", "papers.example") == 2


def test_giving_feedback_again_changes_it(client, db, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    client.post(url(task), {"useful": True}, content_type="application/json")
    client.post(
        url(task),
        {"useful": False, "reason": "too_long", "note": "shorter please"},
        content_type="application/json",
    )
    [row] = AnswerFeedback.objects.filter(task=task)
    assert (row.useful, row.reason, row.note, row.citation_number) == (
        False,
        "too_long",
        "shorter please",
        None,
    )


def test_the_database_refuses_a_second_row_for_the_same_reader_answer_and_citation(db, personas):
    task = stored_research(personas.student, personas.channel)
    AnswerFeedback.objects.create(task=task, user=personas.student, useful=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        AnswerFeedback.objects.create(task=task, user=personas.student, useful=False)  # no citation twice
    with pytest.raises(IntegrityError), transaction.atomic():
        AnswerFeedback.objects.create(task=task, user=personas.student, note="x" * 2001)


def test_feedback_is_rate_limited(client, db, personas, settings):
    settings.UEDU_DR_RATE_FEEDBACK = "3/m"
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    statuses = [
        client.post(url(task), {"useful": True}, content_type="application/json").status_code
        for _ in range(5)
    ]
    assert statuses == [201, 201, 201, 429, 429]


def test_a_long_note_is_refused_with_a_clear_message(client, db, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    response = client.post(url(task), {"useful": False, "note": "x" * 2001}, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"
    assert AnswerFeedback.objects.count() == 0
