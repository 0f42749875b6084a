"""The report on the real stack: run by the real runner on the test database with the scripted
model, stored on the task, served as a typed report (schema 2.x) at
GET /api/deep_research/task/<uuid>/report under the visibility rule, published in the OpenAPI
document, rendered on the result page in the reader's language with the AI's words only in
labelled blocks, exported as Markdown, counted in the metrics, and replayed with its context.
(What every part of a page shows: tests/research/test_report_pages.py, over fixture reports.)"""

from __future__ import annotations

import json

import jsonschema
import pytest

from agent.engine.report_types import REPORT_SCHEMA, Report, integrity_problems
from research.api.report_schema import REPORT_OPENAPI, to_openapi
from research.models import ResearchTask
from research.services import lifecycle, replay, runner
from tests.support.model_blocks import check_text, page_outside_model
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
    typed = Report.from_json(compared.report_json)
    assert report == typed.to_json() and report["question"] == QUESTION and report["schema_version"] == "2.0"
    assert integrity_problems(typed) == []
    assert typed.facts and all(typed.fact_spans(f) for f in typed.facts)
    assert "95.93" not in json.dumps(report)  # the cell the writer got wrong is nowhere
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
    assert published["required"][:3] == ["schema_version", "question", "language"]
    assert published["properties"]["judgement"]["nullable"] is True
    assert published["properties"]["schema_version"]["enum"] == ["2.0"]
    # facts show what they rest on: spans with their location; the model's blocks say whose they are
    span = published["properties"]["spans"]["items"]
    assert {"id", "source", "text", "location"} <= set(span["required"])
    assert span["properties"]["location"]["required"] == ["page", "start", "end"]
    for block in ("plan", "interpretation", "translations", "suggestions"):
        assert published["properties"][block]["properties"]["by"]["enum"] == ["model"]
    # the task's stored citations in the task detail keep their shape (older tasks' quotes too)
    task_schema = document["components"]["schemas"]["TaskDetail"]["properties"]["citations"]["items"]
    assert "number" in task_schema["required"] and {"quote", "location"} <= set(task_schema["properties"])


@pytest.mark.parametrize(
    "language, labels",
    [
        ("zh-hant", ["來源中的事實", "整個問題", "未顯示的內容", "引用覆蓋率", "AI 撰寫（非來源原文）"]),
        ("en", ["Facts from the sources", "The question as a whole", "Not shown", "Citation coverage"]),
    ],
)
def test_the_result_page_renders_the_report_in_the_readers_language(
    client, personas, compared, language, labels
):
    client.force_login(personas.student)
    client.cookies["django_language"] = language
    page = client.get(f"/deep_research/task/{compared.task_uuid}")
    assert page.status_code == 200
    html = page.content.decode()
    for label in labels:
        assert label in html, label
    # the facts are the filings' own words; what the writer wrote is only in the AI's blocks
    assert "Apple Inc (AAPL), Revenue for FY2024Q4:" in html
    outside = page_outside_model(html)
    assert "95.93" not in outside and "Apple's quarterly revenue was larger." not in outside
    # the stored report holds no section title in either language
    assert "來源中的事實" not in str(compared.report_json) and "Facts from" not in str(compared.report_json)


def test_the_markdown_export_has_the_pages_sections(client, personas, compared):
    client.force_login(personas.student)
    client.cookies["django_language"] = "en"
    response = client.get(f"/deep_research/task/{compared.task_uuid}/answer.md")
    assert response.status_code == 200, response.status_code
    text = response.content.decode()
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Facts from the sources" and sections[-1] == "## Sources"
    assert "## Not shown" in sections
    assert "“Apple Inc (AAPL), Revenue for **FY2024**Q4: **$94,930,000,000** (USD).” [" in text
    assert "95.93" not in text
    check_text(text, [])


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
