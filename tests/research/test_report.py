"""The claims-first report on the real stack: run by the real runner on the test database with
the scripted model, stored on the task, served at GET /api/deep_research/task/<uuid>/report under
the visibility rule, published in the OpenAPI document, rendered on the result page in the
reader's language, exported as Markdown, counted in the metrics, and replayed with its context."""

from __future__ import annotations

import jsonschema
import pytest

from agent.engine.report import REPORT_SCHEMA
from research.api.report_schema import REPORT_OPENAPI, to_openapi
from research.models import ResearchTask
from research.services import lifecycle, replay, runner
from tests.support.report_scenarios import financials_first, financials_registry, revenue_claims, table_writer
from tests.support.scripted_llm import Scenario

QUESTION = "Compare NVIDIA's and Apple's revenue in their last reported quarter"


@pytest.fixture
def compared(transactional_db, personas, llm, django_capture_on_commit_callbacks):
    """A finished two-company comparison whose table has one cell off its source."""
    llm.reset(Scenario(complexity="simple"))
    llm.on("action", financials_first)
    llm.on("claims", revenue_claims)
    llm.on("synthesizer", table_writer)
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student,
            channel=personas.channel,
            question=QUESTION,
            queue=False,
            context={
                "entities": "NVIDIA, Apple",
                "metrics": "revenue",
                "time_range": "last reported quarter",
            },
        )
        runner.execute_task(task.pk, registry=financials_registry())
    task.refresh_from_db()
    assert task.status == "completed", task.error
    return task


def test_the_report_is_stored_served_under_the_visibility_rule_and_valid_against_its_schema(
    client, personas, compared
):
    url = f"/api/deep_research/task/{compared.task_uuid}/report"
    client.force_login(personas.student)
    response = client.get(url)
    assert response.status_code == 200
    report = response.json()
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(report)
    assert report == compared.report_json and report["question"] == QUESTION
    assert [(n["kind"], n["text"], n["reason"]) for n in report["not_verified"]] == [
        ("sentence", "Apple's quarterly revenue was larger.", "not_in_claims"),
        ("cell", "95.93", "figure_mismatch"),
    ]
    assert "95.93" not in compared.final_answer
    # a stranger gets the same 404 as for a task that does not exist
    client.force_login(personas.outsider)
    hidden = client.get(url)
    missing = client.get("/api/deep_research/task/00000000-0000-4000-8000-000000000000/report")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["error"]["code"] == missing.json()["error"]["code"]


def test_a_task_without_a_report_says_so_in_the_error_shape(
    client, db, personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION, queue=False
        )
    client.force_login(personas.student)
    response = client.get(f"/api/deep_research/task/{task.task_uuid}/report")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "report_unavailable"


def test_the_openapi_document_publishes_the_report_schema(client, db, personas):
    client.force_login(personas.student)
    document = client.get("/api/schema/?format=json").json()
    operation = document["paths"]["/api/deep_research/task/{task_uuid}/report"]["get"]
    published = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert (
        published
        == REPORT_OPENAPI
        == {**to_openapi(REPORT_SCHEMA), "description": REPORT_OPENAPI["description"]}
    )
    assert published["required"][:3] == ["schema_version", "question", "summary"]
    assert published["properties"]["judgement"]["nullable"] is True
    assert published["properties"]["schema_version"]["enum"] == ["1.1"]
    # citations show what they cite: the quote and where it is
    citation = published["properties"]["citations"]["items"]
    assert {"quote", "location"} <= set(citation["required"])
    assert citation["properties"]["location"]["required"] == ["page", "start", "end"]
    # and so do the task's stored citations in the task detail (optional: older tasks have none)
    task_schema = document["components"]["schemas"]["TaskDetail"]["properties"]["citations"]["items"]
    assert "number" in task_schema["required"] and {"quote", "location"} <= set(task_schema["properties"])


@pytest.mark.parametrize(
    "language, labels",
    [
        ("zh-hant", ["摘要", "發現", "未查核", "數字與所引用的已驗證主張不符", "引用覆蓋率"]),
        (
            "en",
            [
                "Summary",
                "Findings",
                "Not verified",
                "the figure differs from the verified claim it cites",
                "Citation coverage",
            ],
        ),
    ],
)
def test_the_result_page_renders_the_report_sections_in_the_readers_language(
    client, personas, compared, language, labels
):
    client.force_login(personas.student)
    client.cookies["django_language"] = language
    page = client.get(f"/deep_research/task/{compared.task_uuid}")
    assert page.status_code == 200
    html = page.content.decode()
    for label in labels:
        assert label in html, label
    assert "<q>95.93</q>" in html  # the cell that left the body is listed, not shown in the table
    assert "| NVIDIA |" not in html and "<table>" in html
    # the stored report holds no section title in either language
    assert "摘要" not in str(compared.report_json) and "Summary" not in str(compared.report_json)


def test_the_markdown_export_has_the_same_sections_as_the_json(client, personas, compared):
    client.force_login(personas.student)
    client.cookies["django_language"] = "en"
    response = client.get(f"/deep_research/task/{compared.task_uuid}/answer.md")
    assert response.status_code == 200, response.status_code
    text = response.content.decode()
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    # the schema's order: summary, findings, (judgement, conflicts, counter-evidence,) limitations, not verified
    assert sections == ["## Summary", "## Findings", "## Not verified", "## Sources"]
    assert (
        "- Table cell: “95.93” — the figure differs from the verified claim it cites (AAPL — Revenue — SEC Form 10-Q)"
        in text
    )
    assert "| NVIDIA · Q3 FY2025 | 35.08 USD billion [" in text and "95.93 [" not in text


def test_the_metrics_count_table_cells_removals_and_pollution(compared):
    metrics = compared.metrics
    # the writer's table: 4 cells and 2 row labels, checked apart (the engine renders the table)
    assert metrics.table_cells == 6
    assert (metrics.removed_from_body, metrics.removed_reasons) == (1, {"figure_mismatch": 1})
    # 2 sentences, 1 heading, 6 cells; one cell removed; every unit shown cites a source
    assert metrics.factual_sentences == 8 and metrics.cited_sentences == 8
    assert metrics.source_pollution_rate == 0.0  # both cited sources are filings
    assert compared.claims.filter(kind="cell").count() == 6


def test_a_replay_copies_the_agreed_context(compared, personas, llm, django_capture_on_commit_callbacks):
    llm.on("action", financials_first)
    llm.on("claims", revenue_claims)
    llm.on("synthesizer", table_writer)
    with django_capture_on_commit_callbacks(execute=False):
        again = replay.replay_task(compared, run_by=personas.admin)
    assert (
        again.context_json
        == compared.context_json
        == {"entities": "NVIDIA, Apple", "metrics": "revenue", "time_range": "last reported quarter"}
    )
    planner_prompt = [r for r in llm.calls("planner")][-1]["messages"][1]["content"]
    assert "entities: NVIDIA, Apple" in planner_prompt
    # the same input with the same model: the same sections and the same set of claims
    assert [f["heading"] for f in again.report_json["findings"]] == [
        f["heading"] for f in compared.report_json["findings"]
    ]
    claims = lambda task: {c["text"] for c in task.verification_json["evidence_claims"]}  # noqa: E731
    assert claims(again) == claims(compared)
    assert ResearchTask.objects.filter(replay_of=compared).count() == 1
