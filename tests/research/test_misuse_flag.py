"""A teacher flags a result as misused (a learning-analytics signal the export carries)."""

from research.models import ResearchTask
from research.services.learning_analytics import task_signals


def _task(personas):
    return ResearchTask.objects.create(
        user=personas.student,
        channel=personas.channel,
        user_question="q",
        trigger_mode="forced",
        status="completed",
        final_answer="a",
    )


def test_the_teacher_flags_and_clears_a_misuse_flag_from_the_result_page(client, personas):
    task = _task(personas)
    url = f"/deep_research/task/{task.task_uuid}/misuse"
    client.force_login(personas.teacher)
    assert 'id="misuse"' in client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    response = client.post(url, {"note": "交作業時整段貼上"})
    assert response.status_code == 302 and response["Location"].endswith("#misuse")
    task.refresh_from_db()
    assert (
        task.misuse_flagged_at
        and task.misuse_flagged_by == personas.teacher
        and task.misuse_note == "交作業時整段貼上"
    )
    assert task_signals(task)["misuse_flagged"] is True
    client.post(url, {"flagged": "0"})
    task.refresh_from_db()
    assert task.misuse_flagged_at is None and task_signals(task)["misuse_flagged"] is False


def test_the_student_and_others_cannot_flag(client, personas):
    task = _task(personas)
    url = f"/deep_research/task/{task.task_uuid}/misuse"
    client.force_login(personas.student)
    assert 'id="misuse"' not in client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    assert client.post(url, {"note": "x"}).status_code == 403
    for who in ("ta", "other_student", "other_teacher"):
        client.force_login(getattr(personas, who))
        assert client.post(url, {"note": "x"}).status_code == 404
    task.refresh_from_db()
    assert task.misuse_flagged_at is None
