"""The ledger, metrics, review queue and replay on the real database."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.apps import apps
from django.core.management import call_command

from research.models import ResearchClaim, ResearchEvent, ResearchStep, ResearchTask
from research.services import lifecycle, quality, replay, runner
from tests.support.scripted_llm import Scenario


def hand_built_task(personas) -> ResearchTask:
    task = ResearchTask.objects.create(
        user=personas.student,
        channel=personas.channel,
        user_question="q",
        trigger_mode="forced",
        status="completed",
        model_name="gpt-5.4-mini",
        tokens_used=1234,
        cost_usd=Decimal("0.012"),
        duration_seconds=42.0,
        limit_hit="max_steps",
        invalid_citations_removed=1,
        citations_json=[{"number": n} for n in range(1, 5)],
        verification_json={
            "conflicts": [{"topic": "t", "positions": []}],
            "conflicts_found": 2,
            "conflicts_shown": 1,
            "low_credibility_sources": 1,
        },
    )
    verdicts = [
        ("supported", [1], "kept"),
        ("supported", [2, 3], "kept"),
        ("partial", [4], "kept"),
        ("unsupported", [1], "marked"),
        ("no_citation", [], "marked"),
        ("fabricated_citation", [], "dropped"),
    ]
    for n, (verdict, citations, action) in enumerate(verdicts, start=1):
        ResearchClaim.objects.create(
            task=task, index=n, text=f"claim {n}", citations=citations, verdict=verdict, action=action
        )
    for n, tool in enumerate(
        ["search_channel_materials", "get_course_overview", "search_external_papers"], start=1
    ):
        ResearchStep.objects.create(task=task, index=n, phase="evidence", tool_name=tool)
    for seq in (1, 2):
        ResearchEvent.objects.create(task=task, seq=seq, type="action_thinking")
    return task


def test_metrics_of_a_hand_built_task_match_hand_computed_values(db, personas):
    metrics = quality.save_metrics(hand_built_task(personas))
    # shown claims: 5 (the invented one was dropped); cited among them: 4
    assert (metrics.factual_sentences, metrics.cited_sentences, metrics.citation_coverage) == (5, 4, 0.8)
    # unsupported + no citation + invented, over all 6 claims the model wrote
    assert (metrics.unsupported_claims, metrics.unsupported_rate) == (3, 0.5)
    assert (metrics.conflicts_found, metrics.conflicts_shown, metrics.conflict_disclosure) == (2, 1, 0.5)
    assert (metrics.citations, metrics.low_credibility_citations, metrics.low_credibility_share) == (
        4,
        1,
        0.25,
    )
    assert (metrics.tool_calls, metrics.searches, metrics.rounds) == (3, 2, 2)
    assert (metrics.tokens, metrics.cost_usd, metrics.limit_hit, metrics.invalid_citations) == (
        1234,
        Decimal("0.012"),
        True,
        1,
    )
    assert metrics.model_name == "gpt-5.4-mini"


@pytest.fixture
def catalogue(db):
    apps.get_app_config("catalogue").load_demo_data(open("/dev/null", "w"))


def run_in_process(personas, question="比較教育資料科學課程與研究群的主題"):
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question=question, queue=False
    )
    runner.execute_task(task.pk)
    task.refresh_from_db()
    return task


def test_a_finished_task_stores_its_ledger_metrics_and_transcript(
    transactional_db, personas, llm, catalogue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        task = run_in_process(personas)
    assert task.status == "completed", task.error
    assert task.claims.count() == len(task.verification_json["claims"]) > 0
    assert task.claims.filter(kind="fact").count() == len(task.report_json["facts"]) > 0
    assert task.metrics.citation_coverage == 1.0 and task.metrics.model_name == "gpt-5.4-mini"
    roles = list(task.transcript.values_list("role", flat=True))
    assert roles[0] == "planner" and "selector" in roles and roles[-1] == "interpreter"
    assert list(task.transcript.values_list("seq", flat=True)) == list(range(1, len(roles) + 1))
    assert task.transcript.filter(role="selector").first().response["choices"][0]["message"]["content"]


def test_replaying_a_task_reproduces_its_structure_without_new_tool_calls(
    transactional_db, personas, llm, catalogue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        original = run_in_process(personas)
        assert original.citations_json
        tool_calls_before = ResearchStep.objects.count()
        again = replay.replay_task(original, run_by=personas.admin)

    report = replay.compare(original, again)
    assert again.replay_of == original and again.status == "completed"
    assert report["reproduced"] is True
    assert (
        report["cited_sources_jaccard"] == 1.0
        and report["answer_sections_match"]
        and report["plan_structure_match"]
    )
    assert report["metrics"]["citation_coverage"]["delta"] == 0
    # the replay's steps answer from the record: same tools and arguments, nothing new was asked of a tool
    original_calls = list(original.steps.values_list("tool_name", "args"))
    assert list(again.steps.values_list("tool_name", "args")) == original_calls
    assert ResearchStep.objects.count() == tool_calls_before + len(original_calls)


def test_the_replay_command_prints_the_comparison(
    transactional_db, personas, llm, catalogue, capsys, django_capture_on_commit_callbacks
):
    import json

    with django_capture_on_commit_callbacks(execute=False):
        original = run_in_process(personas)
        call_command(
            "deep_research_replay",
            str(original.task_uuid),
            "--model",
            "other-model",
            "--json",
            "--by",
            personas.admin.username,
        )
    report = json.loads(capsys.readouterr().out)
    assert report["original"] == str(original.task_uuid)
    replayed = ResearchTask.objects.get(task_uuid=report["replay"])
    assert replayed.model_name == "other-model"
    assert {r["model"] for r in llm.calls()} >= {"other-model"}


def test_a_replay_answers_unrecorded_calls_with_an_error_instead_of_calling_tools(
    transactional_db, personas, llm, catalogue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        original = run_in_process(personas)
        llm.reset(Scenario(tools_per_round=3))  # the replayed model asks for one more tool than was recorded
        again = replay.replay_task(original, run_by=personas.admin)
    errors = list(again.steps.filter(status="error").values_list("error", flat=True))
    assert (
        errors == [replay.NOT_RECORDED] * 2
    )  # one extra call in the evidence round, one in the counter-search round


def test_unresolved_conflicts_put_a_task_in_the_review_queue(
    client, transactional_db, personas, llm, catalogue, django_capture_on_commit_callbacks
):
    llm.reset(Scenario(contradict=True))  # the selection marks two spans of two sources as contradicting
    with django_capture_on_commit_callbacks(execute=False):
        task = run_in_process(personas)
    assert task.needs_review is True
    (conflict,) = [c for c in task.report_json["conflicts"] if c["status"] == "unresolved"]
    assert task.verification_json["conflicts"][0]["key"] == conflict["key"]

    for who, expected in [
        ("teacher", [str(task.task_uuid)]),
        ("super_ta", [str(task.task_uuid)]),
        ("ta", []),
        ("student", []),
        ("other_teacher", []),
    ]:
        client.force_login(getattr(personas, who))
        queue = client.get("/api/deep_research/review_queue").json()
        assert [t["task_uuid"] for t in queue] == expected, who

    url = f"/api/deep_research/task/{task.task_uuid}/review"
    client.force_login(personas.student)
    assert client.post(url, {"note": "mine"}, content_type="application/json").status_code == 403
    client.force_login(personas.super_ta)
    assert (
        client.post(url, {"note": "  "}, content_type="application/json").json()["error"]["code"]
        == "empty_note"
    )
    response = client.post(
        url, {"note": "兩份資料的工作量定義不同，請以課綱為準。"}, content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["review"]["note"] == "兩份資料的工作量定義不同，請以課綱為準。"
    client.force_login(personas.teacher)
    assert client.get("/api/deep_research/review_queue").json() == []  # reviewed


def test_the_task_api_shows_the_ledger_and_metrics(
    client, transactional_db, personas, llm, catalogue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        task = run_in_process(personas)
    client.force_login(personas.student)
    body = client.get(f"/api/deep_research/task/{task.task_uuid}").json()
    assert [c["verdict"] for c in body["claims"]] == [c.verdict for c in task.claims.order_by("index")]
    assert body["metrics"]["citation_coverage"] == 1.0


def test_the_admin_shows_quality_by_day_and_model(client, db, personas):
    quality.save_metrics(hand_built_task(personas))
    client.force_login(personas.admin)
    page = client.get("/admin/research/researchmetrics/by-day/")
    assert page.status_code == 200
    assert "gpt-5.4-mini" in page.content.decode() and "0.800" in page.content.decode()
    client.force_login(personas.teacher)
    assert client.get("/admin/research/researchmetrics/by-day/").status_code in (302, 403)
