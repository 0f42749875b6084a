"""The report on the real stack: run by the real runner on the test database with the scripted
model, stored on the task, served as a typed report (schema 2.x) at
GET /api/deep_research/task/<uuid>/report under the visibility rule, published in the OpenAPI
document, rendered on the result page in the reader's language with the AI's words only in
labelled blocks, exported as Markdown, counted in the metrics and on the ledger, and replayed with
its context. (The engine alone: tests/agent/test_verified_report.py; what every part of a page
shows: tests/research/test_report_pages.py, over fixture reports.)"""

from __future__ import annotations

import html
import json

import jsonschema
import pytest

from agent.engine.report_types import REPORT_SCHEMA, Report, integrity_problems
from research.api.report_schema import REPORT_OPENAPI, to_openapi
from research.models import ResearchTask
from research.services import lifecycle, replay, runner
from tests.support.model_blocks import EN_LABEL, ZH_LABEL, check_page, check_text, page_outside_model
from tests.support.report_scenarios import NVDA, financials_first, financials_registry
from tests.support.scripted_llm import Scenario

QUESTION = "Compare NVIDIA's and Apple's revenue in their last reported quarter"


@pytest.fixture
def compared(transactional_db, personas, llm, django_capture_on_commit_callbacks):
    """A finished two-company comparison of filed figures."""
    llm.reset(Scenario(complexity="simple"))
    llm.on("action", financials_first)
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
    served = response.json()
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(served)
    assert served["question"] == QUESTION and served["facts"] == compared.report_json["facts"]
    report = Report.from_json(compared.report_json)
    assert integrity_problems(report) == [] and report.schema_version == "2.0"
    # each fact is a filing's own words, at their place in it
    (nvda,) = [f for f in report.facts if report.source(f.source).title.startswith("NVDA")]
    (span,) = report.fact_spans(nvda)
    assert NVDA[span.location.start : span.location.end] == span.text
    # the stored citations: one per source, in the report's numbering, with the span they quote
    assert [c["number"] for c in compared.citations_json] == [s.number for s in report.sources]
    assert {c["quote"] for c in compared.citations_json} == {s.text for s in report.spans}
    assert served == report.to_json()
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
    assert published["properties"]["schema_version"]["enum"] == ["2.0"]
    assert {"facts", "spans", "sources", "not_shown"} <= set(published["required"])
    assert published["properties"]["judgement"]["nullable"] is True
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
        ("zh-hant", ["來源中的事實", "顯示的事實", "來源"]),
        ("en", ["Facts from the sources", "Facts shown", "Sources"]),
    ],
)
def test_the_result_page_renders_the_reports_spans_in_the_readers_language(
    client, personas, compared, language, labels
):
    client.force_login(personas.student)
    client.cookies["django_language"] = language
    page = client.get(f"/deep_research/task/{compared.task_uuid}")
    assert page.status_code == 200
    page_html = page.content.decode()
    for label in labels:
        assert label in page_html, label
    # the facts are the filings' own words, outside the AI's blocks; every AI block is labelled
    check_page(page_html, [], ZH_LABEL if language == "zh-hant" else EN_LABEL)
    outside = page_outside_model(page_html)
    for span in compared.report_json["spans"]:
        assert " ".join(span["text"].split()) in outside, span["text"]
    # the stored report holds no section title in either language
    stored = json.dumps(compared.report_json, ensure_ascii=False)
    assert "來源中的事實" not in stored and "Facts from" not in stored


def test_the_markdown_export_quotes_the_facts_spans_under_the_pages_sections(client, personas, compared):
    client.force_login(personas.student)
    client.cookies["django_language"] = "en"
    response = client.get(f"/deep_research/task/{compared.task_uuid}/answer.md")
    assert response.status_code == 200, response.status_code
    text = response.content.decode()
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Facts from the sources" and sections[-1] == "## Sources"
    for span in compared.report_json["spans"]:
        assert span["text"] in html.unescape(text).replace("**", ""), span["text"]
    check_text(text, [])


def test_the_metrics_and_the_ledger_count_the_facts(compared):
    metrics = compared.metrics
    facts = compared.report_json["facts"]
    # every fact shown cites its source: coverage is whole by construction
    assert metrics.factual_sentences == metrics.cited_sentences == len(facts) > 0
    assert metrics.citation_coverage == 1.0 and metrics.unsupported_claims == 0
    assert metrics.source_pollution_rate == 0.0  # every cited source is a filing
    rows = list(compared.claims.order_by("index").values_list("kind", "verdict", "action", "tiers"))
    assert rows == [("fact", "supported", "kept", ["structured"])] * len(facts)
    assert metrics.table_cells == 0 and metrics.removed_from_body == 0


@pytest.mark.parametrize(
    "language, words",
    [
        (
            "en",
            [
                "Fact ledger",
                "a passage of its source",
                "selected by the AI",
                "Facts shown",
                "Source credibility",
            ],
        ),
        ("zh-hant", ["事實帳冊", "來源中的段落", "由 AI 選出", "顯示的事實", "來源可信度"]),
    ],
)
def test_the_ledger_of_a_report_of_spans_shows_its_facts_as_their_sources_words(
    client, personas, compared, language, words
):
    """Not the 1.x claim ledger: no verdict on a writer's sentence, no "unsupported" rate (no fact
    can be unsupported); each row is a fact's spans, who chose it and its source's credibility."""
    client.force_login(personas.student)
    client.cookies["django_language"] = language
    page = client.get(f"/deep_research/task/{compared.task_uuid}").content.decode()
    ledger = page[page.index('id="ledger"') :]
    ledger = ledger[: ledger.index("</section>")]
    for word in words:
        assert word in ledger, word
    assert "doubtful" not in ledger and "metric-unsupported_rate" not in ledger
    assert ledger.count('class="claim verdict-supported action-kept"') == len(compared.report_json["facts"])
    check_page(page, [], ZH_LABEL if language == "zh-hant" else EN_LABEL)


def test_a_replay_copies_the_agreed_context(compared, personas, llm, django_capture_on_commit_callbacks):
    llm.on("action", financials_first)
    with django_capture_on_commit_callbacks(execute=False):
        again = replay.replay_task(compared, run_by=personas.admin)
    assert (
        again.context_json
        == compared.context_json
        == {"entities": "NVIDIA, Apple", "metrics": "revenue", "time_range": "last reported quarter"}
    )
    planner_prompt = [r for r in llm.calls("planner")][-1]["messages"][1]["content"]
    assert "entities: NVIDIA, Apple" in planner_prompt
    # the same input with the same model: the same facts, span for span
    spans = lambda task: [f["spans"] for f in task.report_json["facts"]]  # noqa: E731
    assert spans(again) == spans(compared)
    assert ResearchTask.objects.filter(replay_of=compared).count() == 1


def test_two_sources_disagreeing_on_a_figure_are_settled_by_a_filing_in_the_stored_report(
    transactional_db, personas, llm, django_capture_on_commit_callbacks
):
    """The real-path twin of tests/agent/test_verified_report.py's conflict: two web pages give
    NVIDIA's revenue two ways, code finds the conflict by their values, the re-search finds the
    filing, and the page that disagrees with it is superseded in the stored report."""

    def researcher(body):
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        last = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        if turns == 0:
            return {
                "tool_calls": [{"name": "web_search", "arguments": {"query": "NVIDIA revenue Q3 FY2025"}}]
            }
        if "sources disagree" in last:
            return {
                "tool_calls": [
                    {"name": "get_financials", "arguments": {"ticker": "NVDA", "quarter": "2025Q3"}}
                ]
            }
        return {"content": "DONE"}

    llm.reset(Scenario(complexity="simple"))
    llm.on("action", researcher)
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student,
            channel=personas.channel,
            question="What was NVIDIA's revenue in Q3 FY2025?",
            queue=False,
        )
        runner.execute_task(task.pk, registry=financials_registry())
    task.refresh_from_db()
    assert task.status == "completed", task.error
    report = Report.from_json(task.report_json)
    (conflict,) = report.conflicts
    assert (conflict.found_by, conflict.status, conflict.resolution) == ("values", "resolved", "higher_tier")
    assert conflict.sides[conflict.prevailing_side].tier == "structured" and conflict.re_search.rounds == 1
    (lost,) = [f for f in report.facts if f.superseded]
    assert "32.5 billion" in report.fact_text(lost)
    assert not task.needs_review and task.verification_json["conflicts"] == []
    assert task.claims.get(kind="fact", action="dropped").reason == "superseded"
    assert task.metrics.conflicts_found == 1


def test_hypotheses_and_the_judgement_weighed_by_code_are_stored(
    transactional_db, personas, llm, django_capture_on_commit_callbacks
):
    """The real-path twin of the engine's weighing: the statuses and the stance are code's."""
    from tests.support.corpus_tools import corpus_registry

    hypotheses = [
        "Learning analytics measures data about learners",
        "Bloom's taxonomy orders cognitive skills",
    ]
    llm.reset(Scenario(complexity="simple", asks_for_judgement=True, hypotheses=hypotheses))
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student,
            channel=personas.channel,
            question="Should our course use learning analytics and Bloom's taxonomy?",
            queue=False,
        )
        runner.execute_task(task.pk, registry=corpus_registry())
    task.refresh_from_db()
    report = task.report_json
    assert [(h["index"], h["status"]) for h in report["hypotheses"]] == [(0, "supported"), (1, "supported")]
    assert report["judgement"]["stance"] == "for" and report["judgement"]["for_by_tier"] == {"internal": 1}
    assert report["plan"]["hypotheses"] == hypotheses and report["plan"]["by"] == "model"
    assert task.verification_json["hypotheses"] == [
        {"index": 0, "status": "supported"},
        {"index": 1, "status": "supported"},
    ]
