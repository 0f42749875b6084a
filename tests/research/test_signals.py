"""Learning-analytics signals of a task (Cognomics, Linguomics, Sociomics, Ethicomics)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from channels_app.models import ChatLog
from research.models import ResearchEvent, ResearchTask
from research.services import lifecycle
from research.services.learning_analytics import CODEBOOK, language_measures, task_signals
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for


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
    # Two questions that refer to it, and the next research (which reads this answer).
    assert signals["follow_ups"] == 3 and signals["follow_up_researches"] == 1
    assert signals["diffusion_mentions"] == 2
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


def _finished_task(personas, **fields) -> ResearchTask:
    fields.setdefault("finished_at", timezone.now() - timedelta(hours=30))
    fields.setdefault("status", "completed")
    return ResearchTask.objects.create(
        user=personas.student, channel=personas.channel, user_question="問題", trigger_mode="forced", **fields
    )


def _at(model, row, when):
    model.objects.filter(pk=row.pk).update(created_at=when)


def test_sub_questions_count_the_planners_plan_not_the_students_edit(db, personas):
    planner = ["a", "b", "c", "d"]
    edited = _finished_task(
        personas,
        # What the research ran (stored at the end) is the student's two questions.
        plan_json={"complexity": "complex", "sub_questions": [{"question": "a"}, {"question": "mine"}]},
        plan_edits_json={"sub_questions": ["a", "mine"], "original": planner, "by": "student", "at": "…"},
    )
    untouched = _finished_task(personas, plan_json={"sub_questions": [{"question": q} for q in planner[:3]]})
    timed_out = _finished_task(
        personas, plan_json={"sub_questions": [{"question": "a"}]}, plan_edits_json={"timed_out": True}
    )

    assert task_signals(edited)["sub_questions"] == 4
    assert task_signals(edited)["sub_questions_researched"] == 2
    assert (
        task_signals(untouched)["sub_questions"] == task_signals(untouched)["sub_questions_researched"] == 3
    )
    assert (
        task_signals(timed_out)["sub_questions"] == task_signals(timed_out)["sub_questions_researched"] == 1
    )


def test_diffusion_counts_what_other_people_wrote_not_the_assistants_replies(db, personas):
    task = _finished_task(personas)
    link = f"https://uedu.example/deep_research/task/{task.task_uuid}"
    asked = ChatLog.objects.create(
        channel=personas.channel, user=personas.other_student, kind="request", content=f"這個對嗎？{link}"
    )
    # The assistant answers the other student and repeats the link: their row, not their mention.
    reply = ChatLog.objects.create(
        channel=personas.channel,
        user=personas.other_student,
        kind="response",
        content=f"你提到的研究 {link} 說……",
        in_reply_to=asked,
    )
    own = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", content=f"我的 {link}"
    )
    for row in (asked, reply, own):
        _at(ChatLog, row, task.finished_at + timedelta(hours=1))

    assert task_signals(task)["diffusion_mentions"] == 1


def test_reflection_rounds_count_reflections_that_gave_a_verdict(db, personas):
    task = _finished_task(personas)
    ResearchEvent.objects.create(task=task, seq=1, type="reflection_done", data={"round": 1, "failed": True})
    ResearchEvent.objects.create(
        task=task, seq=2, type="reflection_done", data={"round": 2, "sufficient": False}
    )
    ResearchEvent.objects.create(
        task=task, seq=3, type="reflection_done", data={"round": 3, "sufficient": True}
    )
    ResearchEvent.objects.create(task=task, seq=4, type="completed", data={})

    assert task_signals(task)["reflection_rounds"] == 2


def test_follow_ups_count_follow_up_researches_and_questions_that_refer_to_the_result(db, personas):
    task = _finished_task(personas)
    at = task.finished_at

    def research(hours, question, user=None, **fields):
        row = ResearchTask.objects.create(
            user=user or personas.student,
            channel=personas.channel,
            user_question=question,
            trigger_mode="forced",
            **fields,
        )
        _at(ResearchTask, row, at + timedelta(hours=hours))
        # Its question row in the chat log, as research.services.lifecycle writes it.
        log = ChatLog.objects.create(
            channel=personas.channel,
            user=row.user,
            kind="request",
            type="deep_research",
            content=question,
            deep_research_task=row,
        )
        _at(ChatLog, log, at + timedelta(hours=hours, seconds=1))
        return row

    question = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", content="[1] 的樣本多大？"
    )
    _at(ChatLog, question, at + timedelta(hours=1))
    research(2, "延伸：再比較三所大學")  # the next research: it reads this answer as its conversation
    research(3, "完全無關的新題目")  # a later research that does not name it
    research(4, f"根據 {task.task_uuid} 的結論，再查 2024 年")  # a later research that names it
    research(5, "另一位同學的研究", user=personas.other_student)  # not the student's
    research(6, f"重播 {task.task_uuid}", is_replay=True)  # replays are never counted

    signals = task_signals(task)
    assert signals["follow_up_researches"] == 2
    assert signals["follow_ups"] == 3  # the question referring to [1], and the two researches

    # A failed research's answer is not the next one's conversation: only naming it counts.
    failed = _finished_task(personas, status="failed", finished_at=at + timedelta(hours=7))
    _at(ResearchTask, failed, at + timedelta(hours=6, minutes=30))
    research(8, "重新問一次")
    research(9, f"{failed.task_uuid} 失敗了，再試")
    assert task_signals(failed)["follow_up_researches"] == 1


@pytest.mark.slow
def test_a_failed_reflection_on_the_real_stack_is_not_a_reflection_round(worker, personas, llm):
    # Two rounds of gathering; the first reflection's model call fails twice (the call and its
    # retry), so the loop goes on without a verdict; the second reflection answers.
    llm.reset(Scenario(action_rounds=2, sufficient_after=2, preferred_tools=["search_external_papers"]))
    llm.fail("reflection", "malformed", times=2)
    task, _ = lifecycle.task_start(
        user=personas.student,
        channel=personas.channel,
        question="Compare learning analytics dashboards in universities",
    )
    wait_for(lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, timeout=60, message="the research")
    task.refresh_from_db()

    assert task.status == "completed", task.error
    reflections = list(
        task.events.filter(type="reflection_done").order_by("seq").values_list("data", flat=True)
    )
    assert [r.get("failed", False) for r in reflections] == [True, False]
    assert task_signals(task)["reflection_rounds"] == 1
