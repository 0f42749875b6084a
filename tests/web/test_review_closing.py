"""A decision is a review: once every unresolved conflict of a research has a reviewer's decision,
the research leaves the review queue, as it does with a reviewer note; the queue shows who decided."""

from __future__ import annotations

import pytest

from research.models import ResearchTask
from research.services import conflict_decisions, review
from tests.support.research_fixtures import stored_research


def _conflict(subject: str, first: int, second: int) -> dict:
    return {
        "subject": subject,
        "found_by": "engine",
        "status": "unresolved",
        "sides": [
            {"statement": f"{subject}: side A", "claim_ids": [first], "citations": [first], "tier": "web"},
            {"statement": f"{subject}: side B", "claim_ids": [second], "citations": [second], "tier": "web"},
        ],
    }


def _citation(number: int, quote: str) -> dict:
    return {
        "id": number,
        "number": number,
        "source_id": number,
        "title": f"Source {number}",
        "url": f"https://example.org/{number}",
        "source_tool": "web_search",
        "tier": "web",
        "origin": "external",
        "snippet": quote,
        "quote": quote,
        "location": {"start": 0, "end": len(quote)},
    }


QUOTES = [
    "Students study 12 hours a week.",
    "Students study 4 hours a week.",
    "The course enrols 120 students.",
    "The course enrols 80 students.",
]


def conflicted(personas, conflicts: int = 1) -> ResearchTask:
    """A completed research whose report (schema 1.x, as stored before the span design) has
    `conflicts` unresolved conflicts, each side resting on a located quote."""
    task = stored_research(personas.student, personas.channel)
    report = {
        "schema_version": "1.1",
        "question": task.user_question,
        "findings": [{"claims": [{"id": n, "citations": [n]} for n in range(1, 5)]}],
        "conflicts": [_conflict("weekly workload", 1, 2), _conflict("enrolment", 3, 4)][:conflicts],
        "citations": [_citation(n, quote) for n, quote in enumerate(QUOTES, 1)],
    }
    ResearchTask.objects.filter(pk=task.pk).update(report_json=report, needs_review=True)
    task.refresh_from_db()
    return task


def _decide(task, user, key, side=0):
    return conflict_decisions.decide(
        task=task, user=user, key=key, decision="side", side=side, reason="The filing"
    )


def _queued(user):
    return list(review.review_queue(user).values_list("pk", flat=True))


@pytest.mark.django_db
def test_one_decision_on_the_only_conflict_takes_the_research_out_of_the_queue(personas, client):
    task = conflicted(personas)
    assert _queued(personas.teacher) == [task.pk]
    (key,) = conflict_decisions.unresolved_conflicts(task)
    row = _decide(task, personas.super_ta, key)
    task.refresh_from_db()
    assert task.conflicts_decided_at == row.decided_at and task.reviewed_at is None
    assert _queued(personas.teacher) == []
    assert list(review.review_queue(personas.teacher, include_reviewed=True)) == [task]

    client.force_login(personas.teacher)
    page = client.get("/deep_research/review").content.decode()
    assert task.user_question not in page
    page = client.get("/deep_research/review?reviewed=on", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert task.user_question in page and "Conflicts decided" in page and "Awaiting review" not in page


@pytest.mark.django_db
def test_a_research_with_two_conflicts_waits_for_both_decisions(personas):
    task = conflicted(personas, conflicts=2)
    first, second = conflict_decisions.unresolved_conflicts(task)
    _decide(task, personas.teacher, first)
    task.refresh_from_db()
    assert task.conflicts_decided_at is None and _queued(personas.teacher) == [task.pk]
    row = _decide(task, personas.teacher, second, side=1)
    task.refresh_from_db()
    assert task.conflicts_decided_at == row.decided_at and _queued(personas.teacher) == []
    # A later decision replaces the shown one; the review was closed by the first full set.
    _decide(task, personas.super_ta, first, side=1)
    task.refresh_from_db()
    assert task.conflicts_decided_at == row.decided_at


@pytest.mark.django_db
def test_a_refused_decision_leaves_the_research_in_the_queue(personas):
    task = conflicted(personas)
    (key,) = conflict_decisions.unresolved_conflicts(task)
    with pytest.raises(conflict_decisions.ServiceError):
        conflict_decisions.decide(
            task=task, user=personas.teacher, key=key, decision="side", side=0, reason=" "
        )
    task.refresh_from_db()
    assert task.conflicts_decided_at is None and _queued(personas.teacher) == [task.pk]


def _page(client, task, url=None) -> str:
    return client.get(
        url or f"/deep_research/task/{task.task_uuid}", HTTP_ACCEPT_LANGUAGE="en"
    ).content.decode()


def _form(page: str, key: str) -> str:
    start = page.index(f'id="decide-{key[:16]}"')
    return page[start : page.index("</form>", start)]


@pytest.mark.django_db
def test_a_refused_decision_returns_to_the_result_page_with_the_error_beside_its_field(client, personas):
    task = conflicted(personas, conflicts=2)
    first, second = conflict_decisions.unresolved_conflicts(task)
    client.force_login(personas.teacher)
    decide = f"/deep_research/task/{task.task_uuid}/conflicts/decide"
    response = client.post(
        decide, {"conflict_key": second, "choice": "0", "reason": "  "}, HTTP_ACCEPT_LANGUAGE="en"
    )
    # The address is the result page's (at the form), which a reload does not post again.
    assert (
        response.status_code == 302
        and response["Location"] == f"/deep_research/task/{task.task_uuid}#decide-{second[:16]}"
    )
    page = _page(client, task, response["Location"])
    form = _form(page, second)
    assert (
        '<p class="error small" id="reason-error-' in form
        and "Please give a reason for the decision." in form
    )
    assert 'aria-invalid="true"' in form and "aria-describedby" in form
    assert "Please give a reason" not in _form(page, first)  # beside its own conflict only
    assert 'class="primary">Save the decision</button>' in form  # the page's own button style
    # What was typed comes back; the message is shown once, not on the next visit.
    client.post(
        decide, {"conflict_key": second, "choice": "9", "reason": "Kept words"}, HTTP_ACCEPT_LANGUAGE="en"
    )
    form = _form(_page(client, task), second)
    assert "Kept words</textarea>" in form and "Choose one of the conflict" in form
    assert "Choose one of the conflict" not in _page(client, task)
    assert not task.conflict_decisions.exists()
