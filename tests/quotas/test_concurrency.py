"""Quota and cap hold under simultaneous starts (real PostgreSQL, transactional, threads)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from django.db import connection

from quotas.models import CostReservation, UsageEntry
from research.models import ResearchTask
from research.services import lifecycle
from tests.support.scripted_llm import Scenario
from uedu_dr.errors import ServiceError

pytestmark = pytest.mark.slow


def _start_many(user, channel, n: int) -> list[str]:
    def attempt(i: int) -> str:
        try:
            lifecycle.task_start(user=user, channel=channel, question=f"比較學習分析與布魯姆分類法 #{i}")
            return "started"
        except ServiceError as exc:
            return exc.code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(attempt, range(n)))


def test_fifty_simultaneous_starts_with_three_left_make_exactly_three_tasks(worker, personas, settings):
    settings.UEDU_DEEP_RESEARCH_QUOTA = {"admin": None, "teacher": None, "ta": 40, "student": 20}
    # The quota is under test: what one student may have under way (2) would stop the burst first.
    settings.UEDU_DR_MAX_ACTIVE = {**settings.UEDU_DR_MAX_ACTIVE, "student": 50}
    for i in range(17):
        UsageEntry.objects.create(
            user=personas.student, kind="charge", amount=Decimal("1.00"), reference=f"earlier-{i}"
        )

    outcomes = _start_many(personas.student, personas.channel, 50)

    assert outcomes.count("started") == 3
    assert outcomes.count("quota_exceeded") == 47
    assert ResearchTask.objects.filter(user=personas.student).count() == 3
    assert UsageEntry.objects.filter(user=personas.student, kind="charge").count() == 20


def test_simultaneous_starts_never_overshoot_the_platform_cap(worker, personas, settings, llm):
    # Slow planning keeps the started researches running (their reservations held) during the burst;
    # a finished research gives back the unspent part of its reservation, and others may start.
    llm.reset(Scenario(latency={"planner": 3.0}))
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("1.00")
    settings.UEDU_DR_WORST_CASE_USD = Decimal("0.30")
    # The cap is under test, not one user's share of it nor what one user may have under way.
    settings.UEDU_USER_DAILY_CAP_SHARE = Decimal("1")
    settings.UEDU_DR_MAX_ACTIVE = {**settings.UEDU_DR_MAX_ACTIVE, "teacher": None}

    outcomes = _start_many(personas.teacher, personas.channel, 20)

    assert outcomes.count("started") == 3  # 3 × 0.30 ≤ 1.00 < 4 × 0.30
    assert outcomes.count("platform_cap_reached") == 17
    assert (
        CostReservation.objects.filter(kind="research").count() == 3
    )  # (the questions' Bloom calls reserve too)
