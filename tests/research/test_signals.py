"""Learning-analytics signals of a task (Cognomics, Linguomics, Sociomics, Ethicomics)."""

from datetime import timedelta

from django.utils import timezone

from channels_app.models import ChatLog
from research.models import ResearchEvent, ResearchTask
from research.services.learning_analytics import CODEBOOK, language_measures, task_signals


def test_language_measures_work_for_chinese_english_and_mixed_text():
    zh = language_measures("比較學習分析與布魯姆分類法。為什麼重要？")
    assert zh["tokens"] == 18 and zh["sentences"] == 2 and zh["mean_sentence_tokens"] == 9.0
    assert zh["chars"] == 20 and 0 < zh["type_token_ratio"] <= 1

    en = language_measures("Compare learning analytics and Bloom. Why does Bloom matter?")
    assert en["tokens"] == 9 and en["sentences"] == 2 and en["type_token_ratio"] == round(8 / 9, 3)
    assert en["complexity"] == round(4.5 * 8 / 9, 3)  # distinct tokens per sentence

    mixed = language_measures("用 RAG 做 learning analytics 可以嗎")
    assert mixed["tokens"] == 8 and mixed["sentences"] == 1
    assert language_measures("")["tokens"] == 0 and language_measures("")["complexity"] == 0


def test_a_tasks_signals_come_from_what_it_stored(db, personas):
    finished = timezone.now() - timedelta(hours=30)
    task = ResearchTask.objects.create(
        user=personas.student,
        channel=personas.channel,
        user_question="比較學習分析與布魯姆分類法",
        trigger_mode="forced",
        status="completed",
        plan_json={
            "complexity": "complex",
            "sub_questions": [{"question": "a"}, {"question": "b"}, {"question": "c"}],
        },
        finished_at=finished,
        shared_views=4,
        disclaimer_acknowledged_at=finished + timedelta(seconds=90),
    )
    ChatLog.objects.create(
        channel=personas.channel,
        user=personas.student,
        kind="request",
        content="q",
        deep_research_task=task,
        bloom_level="evaluate",
        bloom_confidence=0.6,
    )
    for seq in (1, 2, 3):
        ResearchEvent.objects.create(task=task, seq=seq, type="reflection_done" if seq < 3 else "completed")

    def later(hours, content, **fields):
        row = ChatLog.objects.create(channel=personas.channel, kind="request", content=content, **fields)
        ChatLog.objects.filter(pk=row.pk).update(created_at=finished + timedelta(hours=hours))

    link = f"https://uedu.example/deep_research/task/{task.task_uuid}?s=abc"
    later(1, "第 [2] 個來源說的是什麼？", user=personas.student)  # a follow-up: refers to its source [2]
    later(3, f"再解釋 {task.task_uuid} 的結論", user=personas.student)  # a follow-up: names the task
    later(4, "期中考範圍？", user=personas.student)  # a later question that does not refer to it
    later(2, f"大家看 {link}", user=personas.other_student)  # diffusion, not a follow-up
    later(5, f"老師分享 {link}", user=personas.teacher)  # diffusion
    # A new research of the student ends this answer's turn: later questions refer to that one.
    newer = ResearchTask.objects.create(
        user=personas.student, channel=personas.channel, user_question="新問題", trigger_mode="forced"
    )
    ResearchTask.objects.filter(pk=newer.pk).update(created_at=finished + timedelta(hours=6))
    later(7, "那 [1] 呢？", user=personas.student)

    signals = task_signals(task)

    assert signals["bloom_level"] == "evaluate" and signals["bloom_confidence"] == 0.6
    assert signals["sub_questions"] == 3 and signals["plan_complexity"] == "complex"
    assert signals["reflection_rounds"] == 2
    assert signals["follow_ups"] == 2 and signals["diffusion_mentions"] == 2
    assert signals["share_link_openings"] == 4 and signals["misuse_flagged"] is False
    assert set(signals) == set(CODEBOOK)  # every exported signal is documented
    assert signals["disclaimer_acknowledged"] is True and signals["disclaimer_ack_seconds"] == 90.0
    assert signals["question_chars"] == 13


def test_an_unfinished_task_has_no_follow_up_count(db, personas):
    task = ResearchTask.objects.create(
        user=personas.student, channel=personas.channel, user_question="q", trigger_mode="forced"
    )
    signals = task_signals(task)
    assert (
        signals["follow_ups"] is None
        and signals["diffusion_mentions"] is None
        and signals["disclaimer_acknowledged"] is False
        and signals["bloom_level"] == ""
    )
