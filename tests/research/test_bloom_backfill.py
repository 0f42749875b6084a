"""Questions whose Bloom classification failed are classified again: by `manage.py backfill_bloom`
and by the periodic sweep on the beat schedule, within bounds on rows and attempts."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from channels_app.models import ChatLog
from research.services import bloom
from research.tasks import retry_failed_bloom


def _row(
    personas,
    content="比較學習分析與布魯姆分類法",
    *,
    attempts=0,
    minutes_old=60,
    level="",
    kind=ChatLog.Kind.REQUEST,
):
    row = ChatLog.objects.create(channel=personas.channel, user=personas.student, kind=kind, content=content)
    ChatLog.objects.filter(pk=row.pk).update(
        bloom_attempts=attempts, bloom_level=level, created_at=timezone.now() - timedelta(minutes=minutes_old)
    )
    return row


@pytest.fixture
def rows(db, personas, settings):
    settings.UEDU_BLOOM_MAX_ATTEMPTS = 3
    settings.UEDU_BLOOM_MAX_TOTAL_ATTEMPTS = 5
    settings.UEDU_BLOOM_SWEEP_AFTER_MINUTES = 15
    return {
        "gave_up": _row(personas, "為什麼學習分析有用？", attempts=3),
        "never_queued": _row(personas, "請分析布魯姆分類法", attempts=0, minutes_old=600),
        "in_its_retry_chain": _row(personas, "最近的問題", attempts=1, minutes_old=2),
        "out_of_attempts": _row(personas, "問了很多次", attempts=5),
        "classified": _row(personas, "已分類", attempts=1, level="remember"),
        "response": _row(personas, "an answer", kind=ChatLog.Kind.RESPONSE),
    }


def levels(rows) -> dict:
    return {name: ChatLog.objects.get(pk=row.pk).bloom_level for name, row in rows.items()}


def test_the_command_classifies_the_questions_left_without_a_level_oldest_first(rows, llm):
    out = StringIO()
    call_command("backfill_bloom", "--dry-run", stdout=out)
    assert out.getvalue().strip() == "2 question(s) wait for a Bloom level"

    call_command("backfill_bloom", stdout=out)

    assert "classified 2, failed 0, skipped 0 (of 2 waiting)" in out.getvalue()
    assert levels(rows) == {
        "gave_up": "analyze",
        "never_queued": "analyze",
        "in_its_retry_chain": "",
        "out_of_attempts": "",
        "classified": "remember",
        "response": "",
    }
    asked = [c["messages"][1]["content"] for c in llm.calls("bloom")]
    assert len(asked) == 2 and "請分析布魯姆分類法" in asked[0]  # the oldest first
    assert ChatLog.objects.get(pk=rows["gave_up"].pk).bloom_attempts == 4


def test_each_sweep_grants_one_more_attempt_up_to_the_total_bound(rows, llm):
    llm.fail("bloom", "malformed", times=100)

    first = retry_failed_bloom()
    second = retry_failed_bloom()
    third = retry_failed_bloom()

    assert first == {"failed": 2} and second == {"failed": 2}
    assert third == {"failed": 1}  # "gave_up" reached the bound of 5 attempts; "never_queued" is at 3
    gave_up = ChatLog.objects.get(pk=rows["gave_up"].pk)
    assert gave_up.bloom_attempts == 5 and gave_up.bloom_level == ""
    assert len(llm.calls("bloom")) == 5
    assert bloom.unclassified_rows().count() == 1


def test_a_sweep_classifies_at_most_its_batch(rows, llm, settings):
    settings.UEDU_BLOOM_SWEEP_BATCH = 1
    assert retry_failed_bloom() == {"classified": 1}
    assert levels(rows)["never_queued"] == "analyze" and levels(rows)["gave_up"] == ""


def test_without_a_model_nothing_is_attempted(rows, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    with pytest.raises(CommandError, match="No language model is configured"):
        call_command("backfill_bloom")
    assert retry_failed_bloom() == {}
    assert ChatLog.objects.get(pk=rows["gave_up"].pk).bloom_attempts == 3


def test_the_sweep_is_on_the_beat_schedule_that_beat_installs(transactional_db, settings):
    from django_celery_beat.models import PeriodicTask
    from django_celery_beat.schedulers import DatabaseScheduler

    from uedu_dr.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["retry-failed-bloom-classifications"]
    assert entry == {
        "task": "research.tasks.retry_failed_bloom",
        "schedule": 60.0 * settings.UEDU_BLOOM_SWEEP_MINUTES,
    }
    assert "research.tasks.retry_failed_bloom" in app.tasks

    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE  # what `celery beat` reads
    DatabaseScheduler(app=app, lazy=True).setup_schedule()  # what beat does when it starts
    task = PeriodicTask.objects.get(name="retry-failed-bloom-classifications")
    assert task.task == "research.tasks.retry_failed_bloom" and task.enabled
    assert (
        task.interval.every * {"seconds": 1, "minutes": 60}[task.interval.period]
        == 60 * settings.UEDU_BLOOM_SWEEP_MINUTES
    )
