"""A replay is an evaluation record owned by the platform admin who ran it: it never reaches the
student's chat, history, follow-up context, export or the source statistics."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from channels_app.models import ChatLog
from chat.services import conversation_context
from research.models import ResearchTask, SourceStat
from research.services import replay
from tests.research.test_quality import catalogue, run_in_process  # noqa: F401  (fixture)
from uedu_dr.errors import ServiceError


def _stats():
    return sorted(SourceStat.objects.values_list("kind", "key", "passed", "failed", "reports"))


def test_a_replay_belongs_to_the_admin_and_stays_out_of_every_learner_view(
    transactional_db, personas, llm, catalogue, client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        original = run_in_process(personas)
        chat_rows_before = list(ChatLog.objects.filter(user=personas.student).values_list("pk", flat=True))
        context_before = conversation_context(personas.student, personas.channel)
        stats_before = _stats()
        assert stats_before  # the original fed the source statistics
        again = replay.replay_task(original, run_by=personas.admin)

    assert again.status == "completed" and again.is_replay and again.replay_of == original
    assert again.user == personas.admin  # not the student's
    # No chat row at all for the replay: the student's chat and follow-up context are unchanged.
    assert not ChatLog.objects.filter(deep_research_task=again).exists()
    assert (
        list(ChatLog.objects.filter(user=personas.student).values_list("pk", flat=True)) == chat_rows_before
    )
    assert conversation_context(personas.student, personas.channel) == context_before
    # The source statistics counted the original once, not the replay again.
    assert _stats() == stats_before

    client.force_login(personas.student)
    history = client.get("/deep_research/my").content.decode()
    assert str(original.task_uuid) in history and str(again.task_uuid) not in history
    assert client.get(f"/deep_research/task/{again.task_uuid}").status_code == 404
    assert str(again.task_uuid) not in client.get("/api/deep_research/my_tasks").content.decode()
    chat_page = client.get(f"/channels/{personas.channel.slug}/")
    assert chat_page.status_code == 200 and str(again.task_uuid) not in chat_page.content.decode()

    # The admin who ran it (and the evaluation, which reads tasks directly) sees it.
    client.force_login(personas.admin)
    assert client.get(f"/deep_research/task/{again.task_uuid}").status_code == 200
    assert ResearchTask.objects.filter(is_replay=True, replay_of=original).get() == again


def test_only_a_platform_admin_can_replay(
    transactional_db, personas, llm, catalogue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        original = run_in_process(personas)
    with pytest.raises(ServiceError) as refused:
        replay.replay_task(original, run_by=personas.teacher)
    assert refused.value.status == 403
    with pytest.raises(CommandError, match="platform admin"):
        call_command("deep_research_replay", str(original.task_uuid), "--by", personas.teacher.username)
    assert not ResearchTask.objects.filter(is_replay=True).exists()
