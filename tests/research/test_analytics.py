from research.models import ResearchTask
from research.services import analytics, lifecycle


def _completed_task(personas, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            queue=False,
            user=personas.student,
            channel=personas.channel,
            question="比較學習分析與布魯姆分類法",
        )
    ResearchTask.objects.filter(pk=task.pk).update(status="completed", final_answer="A [1].")
    task.refresh_from_db()
    return task


def test_openings_through_the_share_link_by_others_are_counted_without_the_owner(
    db, personas, django_capture_on_commit_callbacks
):
    task = _completed_task(personas, django_capture_on_commit_callbacks)
    token = analytics.share_token(task)
    assert analytics.share_token(task) == token  # made once
    analytics.record_result_view(task, personas.student, via_share=token)  # the owner
    analytics.record_result_view(task, personas.teacher, via_share=token)
    analytics.record_result_view(task, personas.teacher, via_share=token)  # the same reader again
    analytics.record_result_view(task, personas.super_ta, via_share=token)
    analytics.record_result_view(task, personas.teacher)  # browsing, not through the link
    analytics.record_result_view(task, personas.teacher, via_share=token[:-1] + "x")  # a guessed link
    task.refresh_from_db()
    assert task.shared_views == 2


def test_only_the_owner_acknowledges_the_disclaimer_once(
    client, db, personas, django_capture_on_commit_callbacks
):
    task = _completed_task(personas, django_capture_on_commit_callbacks)
    url = f"/api/deep_research/task/{task.task_uuid}/acknowledge"
    client.force_login(personas.teacher)
    assert client.post(url).status_code == 403
    client.force_login(personas.other_student)
    assert client.post(url).status_code == 404
    client.force_login(personas.student)
    first = client.post(url).json()["acknowledged_at"]
    second = client.post(url).json()["acknowledged_at"]
    assert first == second
