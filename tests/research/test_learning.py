"""Learning from use: context alignment, plan review, budgets, feedback, source weights, dashboard."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from agent.engine import Limits, LLMClient, LLMConfig, NullSink, ResearchInput, UsageMeter, run_research
from research import dashboard
from research.models import AnswerFeedback, ResearchMetrics, ResearchTask, SourceStat
from research.services import credibility, lifecycle, runner
from tests.support.corpus_tools import CTX, corpus_registry
from tests.support.report_scenarios import hostile_registry
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for


def test_an_under_specified_question_gets_a_clarifying_card_and_a_complete_one_does_not(
    client, db, personas, llm
):
    client.force_login(personas.student)
    vague = client.post(
        "/api/deep_research/context_check",
        {"question": "最近的學習分析研究有哪些重要發現？", "channel_id": personas.channel.pk},
        content_type="application/json",
    ).json()
    clear = client.post(
        "/api/deep_research/context_check",
        {"question": "2020 到 2024 年學習分析研究有哪些重要發現？", "channel_id": personas.channel.pk},
        content_type="application/json",
    ).json()
    assert vague["needs_clarification"] is True
    assert vague["questions"][0]["key"] == "time_range" and vague["questions"][0]["default"]
    assert clear == {"needs_clarification": False, "questions": []}
    assert ResearchTask.objects.count() == 0


def test_a_start_can_carry_the_context_and_the_planner_sees_it(
    client, db, personas, llm, django_capture_on_commit_callbacks
):
    client.force_login(personas.student)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            "/api/deep_research/start",
            {
                "question": "最近的學習分析研究有哪些重要發現？",
                "channel_id": personas.channel.pk,
                "context": {"time_range": "2021-2026", "source_preference": "papers"},
            },
            content_type="application/json",
            HTTP_ACCEPT="application/json",
        )
    task = ResearchTask.objects.get(task_uuid=response.json()["task_uuid"])
    assert task.context_json == {"time_range": "2021-2026", "source_preference": "papers"}
    bad = client.post(
        "/api/deep_research/start",
        {"question": "最近的研究", "channel_id": personas.channel.pk, "context": {"colour": "red"}},
        content_type="application/json",
        HTTP_ACCEPT="application/json",
    )
    assert bad.status_code == 400 and "colour" in bad.json()["error"]["message"]


def test_context_alignment_asks_about_entities_and_figures_and_a_start_carries_them(
    client, db, personas, llm, django_capture_on_commit_callbacks
):
    client.force_login(personas.student)
    asked = client.post(
        "/api/deep_research/context_check",
        {"question": "比較兩家公司上一季的財務表現", "channel_id": personas.channel.pk},
        content_type="application/json",
    ).json()
    assert asked["needs_clarification"] is True
    assert {q["key"] for q in asked["questions"]} >= {"entities", "metrics"}
    context = {q["key"]: q["default"] for q in asked["questions"]}
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            "/api/deep_research/start",
            {
                "question": "比較兩家公司上一季的財務表現",
                "channel_id": personas.channel.pk,
                "context": context,
            },
            content_type="application/json",
            HTTP_ACCEPT="application/json",
        )
    assert response.status_code == 201, response.content
    task = ResearchTask.objects.get(task_uuid=response.json()["task_uuid"])
    assert (
        task.context_json["entities"] == "NVIDIA, Apple"
        and task.context_json["metrics"] == "revenue, gross margin"
    )


def test_plan_edits_change_the_sub_questions_the_engine_researches(client, worker, personas, llm):
    personas.channel.plan_review = "required"
    personas.channel.save()
    task, _ = lifecycle.task_start(
        user=personas.student,
        channel=personas.channel,
        question="比較學習分析與布魯姆分類法",
        context={"subject": "教育"},
    )
    wait_for(
        lambda: task.events.filter(type="status_change", data__to="awaiting_plan_review").exists(),
        message="plan review",
    )

    client.force_login(personas.other_student)
    url = f"/api/deep_research/task/{task.task_uuid}/plan"
    assert client.post(url, {"sub_questions": ["x"]}, content_type="application/json").status_code == 404
    client.force_login(personas.student)
    assert (
        client.post(url, {"sub_questions": []}, content_type="application/json").json()["error"]["code"]
        == "invalid_plan"
    )
    edited = ["布魯姆分類法的六個層次", "學習分析如何使用布魯姆分類"]
    assert client.post(url, {"sub_questions": edited}, content_type="application/json").status_code == 200
    wait_for(lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, message="the research")

    task.refresh_from_db()
    assert task.status == "completed"
    assert [sq["question"] for sq in task.plan_json["sub_questions"]] == edited
    assert task.plan_edits_json["sub_questions"] == edited and len(task.plan_edits_json["original"]) == 3
    action_prompt = llm.calls("action")[0]["messages"][1]["content"]
    assert all(q in action_prompt for q in edited) and "aspect 1" not in action_prompt
    assert "subject: 教育" in action_prompt
    resumed = task.events.get(
        type="status_change", data__to="running", data__from="awaiting_plan_review"
    ).data
    assert resumed["plan_edited"] is True and resumed["timed_out"] is False
    assert client.post(url, {}, content_type="application/json").status_code == 409  # no longer waiting


def test_an_unanswered_plan_review_times_out_and_proceeds(worker, personas, llm, settings):
    personas.channel.plan_review = "required"
    personas.channel.save()
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
    )
    wait_for(
        lambda: task.events.filter(type="status_change", data__to="awaiting_plan_review").exists(),
        message="plan review",
    )
    # The session's worker waits the default five minutes: the deadline is moved, and the reaper
    # (which re-sends a continuation overdue by UEDU_DR_STALE_AFTER_SECONDS) continues it.
    settings.UEDU_DR_STALE_AFTER_SECONDS = 3
    ResearchTask.objects.filter(pk=task.pk).update(plan_review_deadline=timezone.now() - timedelta(seconds=5))
    assert lifecycle.reap_stale_tasks() == {"running": 0, "queued": 0, "continued": 1}
    wait_for(lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, message="the research")
    task.refresh_from_db()
    assert task.status == "completed"
    assert task.plan_edits_json == {"timed_out": True}
    resumed = task.events.get(type="status_change", data__from="awaiting_plan_review").data
    assert resumed["timed_out"] is True and resumed["plan_edited"] is False


@pytest.fixture(scope="module")
def server():
    from tests.support.scripted_llm import ScriptedLLM

    srv = ScriptedLLM().start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("complexity, calls", [("simple", 5), ("moderate", 10), ("complex", 20)])
def test_budgets_follow_complexity(server, complexity, calls):
    server.reset(Scenario(complexity=complexity, action_rounds=99, sufficient_after=99, tools_per_round=2))
    sink = NullSink()
    client = LLMClient(
        LLMConfig(models={"default": "gpt-5.4-mini"}, base_url=server.url, api_key="t", timeout=5),
        UsageMeter(),
    )
    result = run_research(
        ResearchInput(question="比較學習分析", counter_search="off"),
        llm=client,
        tools=corpus_registry(fresh=True).bind(CTX),
        sink=sink,
        is_cancelled=lambda: False,
        limits=Limits(max_steps=30),
    )
    plan = dict(sink.events)["plan_complete"]
    assert plan["limits"]["max_tool_calls"] == calls
    assert result.tool_calls <= calls
    assert result.limit_hit in ("tool_budget", "max_steps")


def _completed(personas, django_capture_on_commit_callbacks, llm, hostile=False):
    """A research over the course materials, or (`hostile`) over materials one of which
    addresses the model."""
    llm.reset(Scenario(complexity="simple"))
    task, _ = lifecycle.task_start(
        user=personas.student,
        channel=personas.channel,
        question="How do dashboards help students?"
        if hostile
        else "How do learning analytics and Bloom's taxonomy relate?",
        queue=False,
    )
    runner.execute_task(task.pk, registry=hostile_registry() if hostile else corpus_registry())
    task.refresh_from_db()
    assert task.status == "completed" and task.verification_json["evidence"] and task.citations_json
    return task


def test_feedback_is_stored_and_visible_only_to_the_channels_reviewers(
    client, transactional_db, personas, llm, django_capture_on_commit_callbacks
):
    task = _completed(personas, django_capture_on_commit_callbacks, llm)
    url = f"/api/deep_research/task/{task.task_uuid}/feedback"
    client.force_login(personas.student)
    assert (
        client.post(
            url,
            {"useful": False, "reason": "wrong_fact", "note": "年份不對"},
            content_type="application/json",
        ).status_code
        == 201
    )
    assert client.post(url, {}, content_type="application/json").status_code == 400
    assert (
        client.post(url, {"reason": "source_does_not_say"}, content_type="application/json").status_code
        == 400
    )
    assert (
        client.post(
            url, {"reason": "source_does_not_say", "citation_number": 99}, content_type="application/json"
        ).status_code
        == 400
    )
    assert (
        client.post(
            url, {"reason": "source_does_not_say", "citation_number": 1}, content_type="application/json"
        ).status_code
        == 201
    )
    client.force_login(personas.other_student)
    assert client.post(url, {"useful": True}, content_type="application/json").status_code == 404

    for who, count in [
        ("teacher", 2),
        ("super_ta", 2),
        ("admin", 2),
        ("ta", 0),
        ("other_teacher", 0),
        ("student", 0),
    ]:
        client.force_login(getattr(personas, who))
        assert len(client.get("/api/deep_research/feedback").json()) == count, who
    tool = task.citations_json[0]["source_tool"]
    assert SourceStat.objects.get(kind="tool", key=tool).reports == 1
    assert AnswerFeedback.objects.filter(task=task).count() == 2


def test_weights_move_down_when_citations_fail_and_up_when_they_pass(
    transactional_db, personas, llm, django_capture_on_commit_callbacks
):
    task = _completed(personas, django_capture_on_commit_callbacks, llm, hostile=True)
    checked = task.verification_json["evidence"]  # a fact passes its source; a flagged source fails
    tool = "search_channel_materials"
    failing = SourceStat.objects.get(kind="tool", key=tool)
    assert failing.failed == 1 and failing.passed == sum(
        1 for c in checked if c["verdict"] == "supported" for s in c["sources"] if s["source_tool"] == tool
    )
    handout = SourceStat.objects.get(kind="domain", key="docs.example")
    assert handout.failed == 1
    assert credibility.history_factor(0, failing.failed, 0) < 1.0

    for _ in range(3):
        _completed(personas, django_capture_on_commit_callbacks, llm)
    recovered = SourceStat.objects.get(kind="tool", key=tool)
    assert recovered.passed > 0
    assert credibility.history_factor(
        recovered.passed, recovered.failed, recovered.reports
    ) > credibility.history_factor(failing.passed, failing.failed, failing.reports)
    # a new source is neither punished nor rewarded for being new
    assert credibility.history_factor(0, 0, 0) == 1.0


def test_a_denied_domain_pin_keeps_it_out_of_every_research(db):
    SourceStat.objects.create(kind="domain", key="spam.example", pinned="deny")
    SourceStat.objects.create(kind="domain", key="good.example", pinned="allow", failed=9)
    assert credibility.denied_domains() == ("spam.example",)
    from agent.engine.types import Source

    weigh = credibility.weigher()
    assert (
        weigh(
            Source(title="t", snippet="s", tier="web", url="https://good.example/a", source_tool="web_search")
        )
        == 1.0
    )
    assert (
        weigh(
            Source(title="t", snippet="s", tier="web", url="https://new.example/a", source_tool="web_search")
        )
        == 0.6
    )


def test_dashboard_figures_match_hand_computed_values(client, db, personas):
    rows = [  # (day, model, duration, tokens, cost, tool_calls, searches, rounds, limit_hit, citations, low)
        (date(2026, 11, 1), "m1", 10.0, 1000, "0.010", 4, 2, 2, False, 4, 1),
        (date(2026, 11, 1), "m1", 30.0, 3000, "0.030", 6, 4, 2, True, 6, 0),
        (date(2026, 11, 2), "m2", 20.0, 2000, "0.020", 3, 3, 3, False, 0, 0),
    ]
    for n, (day, model, duration, tokens, cost, calls, searches, rounds, limit, citations, low) in enumerate(
        rows
    ):
        task = ResearchTask.objects.create(
            user=personas.student, channel=personas.channel, user_question=f"q{n}", trigger_mode="forced"
        )
        ResearchMetrics.objects.create(
            task=task,
            day=day,
            model_name=model,
            channel=personas.channel,
            status="completed",
            duration_seconds=duration,
            tokens=tokens,
            cost_usd=Decimal(cost),
            tool_calls=calls,
            searches=searches,
            rounds=rounds,
            limit_hit=limit,
            citations=citations,
            low_credibility_citations=low,
        )
    by_day = {
        r.key: r for r in dashboard.figures(group="day", start=date(2026, 11, 1), end=date(2026, 11, 30))
    }
    first = by_day["2026-11-01"]
    assert first.tasks == 2 and first.mean_duration == 20.0
    assert first.p95_duration == pytest.approx(29.0)  # 10 + 0.95 × (30 − 10)
    assert (first.tokens_per_report, first.cost_per_report) == (2000.0, 0.02)
    assert (first.tool_calls_per_round, first.searches_per_round) == (2.5, 1.5)
    assert (first.limit_hit_share, first.low_credibility_share) == (0.5, 0.1)
    assert by_day["2026-11-02"].low_credibility_share is None  # no citations at all
    by_model = {
        r.key: r.tasks
        for r in dashboard.figures(group="model", start=date(2026, 11, 1), end=date(2026, 11, 30))
    }
    assert by_model == {"m1": 2, "m2": 1}
    assert [
        r.tasks for r in dashboard.figures(group="channel", start=date(2026, 11, 1), end=date(2026, 11, 30))
    ] == [3]

    client.force_login(personas.admin)
    page = client.get(
        "/admin/research/researchmetrics/dashboard/?group=day&figure=p95_duration&start=2026-11-01&end=2026-11-30"
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "29.000" in html
