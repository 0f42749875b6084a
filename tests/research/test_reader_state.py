"""What a reader's pages remember for them: the feedback they already gave on an answer (the
buttons render in that state after a reload) and the search over their own research history."""

from __future__ import annotations

from research.selectors import FeedbackGiven, feedback_given
from research.services.feedback import give_feedback
from tests.support.research_fixtures import stored_research


def test_feedback_given_is_the_readers_own(db, personas):
    task = stored_research(personas.student, personas.channel)
    assert feedback_given(personas.student, task) == FeedbackGiven()
    give_feedback(task=task, user=personas.student, useful=False, reason="wrong_fact")
    give_feedback(task=task, user=personas.student, reason="source_does_not_say", citation_number=2)
    assert feedback_given(personas.student, task) == FeedbackGiven(
        useful=False, reported=False, citations=frozenset({2})
    )
    give_feedback(task=task, user=personas.teacher, reason="too_long")
    assert feedback_given(personas.teacher, task) == FeedbackGiven(useful=None, reported=True)
    assert feedback_given(personas.other_student, task) == FeedbackGiven()


def test_the_answer_renders_the_stored_feedback(client, personas):
    task = stored_research(personas.student, personas.channel)
    give_feedback(task=task, user=personas.student, useful=True)
    give_feedback(task=task, user=personas.student, reason="source_does_not_say", citation_number=1)
    client.force_login(personas.student)
    html = client.get(f"/deep_research/task/{task.task_uuid}/outcome").content.decode()
    assert 'class="secondary small chosen" name="useful" value="true"' in html
    assert f'hx-get="/deep_research/task/{task.task_uuid}/feedback_box?form=not_useful" disabled>' in html
    assert (
        'name="citation_number" value="1"' not in html and 'name="citation_number" value="2"' in html
    )  # [1] already reported
    client.force_login(personas.teacher)  # who may see the answer, and has said nothing about it
    html = client.get(f"/deep_research/task/{task.task_uuid}/outcome").content.decode()
    assert "chosen" not in html and 'name="citation_number" value="1"' in html


def test_the_history_search_finds_the_users_own_questions_only(client, personas):
    stored_research(personas.student, personas.channel, question="布魯姆分類法的六個層次")
    stored_research(personas.student, personas.channel, question="學習分析的倫理")
    stored_research(personas.other_student, personas.channel, question="布魯姆分類法與評量")
    client.force_login(personas.student)
    html = client.get("/deep_research/my", {"q": "布魯姆"}).content.decode()
    assert html.count('class="history-row"') == 1 and "六個層次" in html and "與評量" not in html
    html = client.get("/deep_research/my", {"q": "  bloom  "}).content.decode()
    assert html.count('class="history-row"') == 0 and "bloom" in html  # the empty result names the search
    assert (
        client.get("/deep_research/my", {"q": "x" * 201}).status_code == 200
    )  # too long: the filter is ignored, said so
