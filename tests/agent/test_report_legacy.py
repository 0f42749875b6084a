"""Reports stored in schema 1.x render as typed reports (agent/engine/report_legacy.py): located
quotes become spans, verified claims their facts, values are parsed from the spans by code, and
the 1.x model-written texts never become facts (the judgement's text only as the AI's
interpretation, and only when its figures, years and names are in its facts' spans)."""

from __future__ import annotations

import json

from agent.engine.report_legacy import ClaimQuote, from_v1, legacy_conflict_key
from agent.engine.report_types import Location, integrity_problems, validate
from tests.support import report_examples as X


def test_a_1x_report_becomes_a_typed_report_whose_facts_are_its_located_quotes():
    data = X.v1_report()
    report = from_v1(data)
    assert report.schema_version == "2.0" and report.language == "en"
    assert integrity_problems(report) == []
    validate(report.to_json())
    apple = report.span("2.1")
    assert apple.text == "Apple Inc (AAPL), Revenue for FY2024Q4: $94,930,000,000 (USD)."
    assert (apple.source, apple.location.start, apple.location.end) == (1, 0, 62)
    # the facts in the findings' order, in one section for the question as a whole
    (section,) = report.sections
    assert section.sub_question == -1
    assert [report.fact_text(report.fact(i)) for i in section.facts] == [
        "NVIDIA Corp (NVDA), Revenue for FY2025Q3: $35,082,000,000 (USD).",
        "Apple Inc (AAPL), Revenue for FY2024Q4: $94,930,000,000 (USD).",
    ]
    # values parsed from the spans by code, never the claims' model-written labels
    currencies = [(v.value, v.unit) for v in report.values if v.kind == "currency"]
    assert (35082000000.0, "USD") in currencies and (94930000000.0, "USD") in currencies
    assert not any(v.value == 35.08 for v in report.values)


def test_no_model_written_text_of_a_1x_report_becomes_a_fact():
    report = from_v1(X.v1_report())
    facts = json.dumps(
        {"spans": [s.text for s in report.spans], "sources": [s.title for s in report.sources]},
        ensure_ascii=False,
    )
    everything = json.dumps(report.to_json(), ensure_ascii=False)
    for words in X.V1_MODEL_WORDS:
        assert words not in facts
        assert words not in everything, words
    # the judgement's text is kept, without its markers, as the AI's reasoning on its facts
    (item,) = report.interpretation.items
    assert (item.kind, item.text) == (
        "reasoning",
        "Apple's revenue was larger than NVIDIA's in these quarters.",
    )
    assert sorted(report.fact(i).source for i in item.facts) == [1, 2]
    # its assumption names a year no fact states: listed as not shown, without its words
    # and the not-verified list keeps its kinds and reasons, never its texts
    assert [(n.kind, n.reason, n.span) for n in report.not_shown] == [
        ("assumption", "novel_year", ""),
        ("reasoning", "unverified", ""),
        ("reasoning", "novel_figure", ""),
    ]


def test_a_1x_conflict_keeps_its_key_and_its_sides_as_spans():
    data = X.v1_report()
    report = from_v1(data)
    (conflict,) = report.conflicts
    assert conflict.key == legacy_conflict_key(data["conflicts"][0])
    assert (conflict.found_by, conflict.status) == ("values", "unresolved")
    sides = [[report.fact_text(report.fact(i)) for i in side.facts] for side in conflict.sides]
    assert sides == [
        ["NVIDIA Corp (NVDA), Revenue for FY2025Q3: $35,082,000,000 (USD)."],
        ["NVIDIA's Q3 FY2025 revenue came in at $32.5 billion."],  # the side's quote, found in its excerpt
    ]
    web = report.span(report.fact(conflict.sides[1].facts[0]).spans[0])
    assert (web.source, web.location.start) == (3, len("Analysts say "))
    # the counter-evidence cites the same source: the same fact
    assert report.counter_evidence.facts == conflict.sides[1].facts
    assert report.counter_evidence.against_by_tier == {"web": 1}


def test_a_side_quote_that_is_not_in_its_source_drops_the_conflict_and_a_flagged_source_gives_no_span():
    data = X.v1_report()
    data["conflicts"][0]["sides"][1]["quotes"][0]["text"] = "NVIDIA's revenue collapsed."
    data["citations"][0]["flagged"] = True
    report = from_v1(data)
    assert report.conflicts == []
    assert ("contradiction", "no_spans") in [(n.kind, n.reason) for n in report.not_shown]
    assert not any(s.source == 1 for s in report.spans)
    assert report.source(1).flagged and not report.source(1).cited


def test_limitation_codes_are_renamed_or_dropped_and_consulted_sources_kept():
    data = {
        "schema_version": "1.1",
        "question": "學習分析是什麼？",
        "summary": "",
        "findings": [],
        "limitations": [
            {"code": "claims_failed", "detail": {}},
            {"code": "draft_check_failed", "detail": {}},
            {
                "code": "no_verified_claims",
                "detail": {
                    "claims": 3,
                    "sources": [{"title": "Week 1", "url": "/channels/a/materials/1/#p1"}],
                },
            },
        ],
        "citations": [],
    }
    report = from_v1(data)
    assert report.language == "zh"
    assert [(x.code, x.detail) for x in report.limitations] == [
        ("selection_failed", {}),
        ("no_facts", {"claims": 3}),
    ]
    (source,) = report.sources
    assert (source.title, source.url, source.cited) == ("Week 1", "/channels/a/materials/1/#p1", False)
    assert report.facts == [] and integrity_problems(report) == []


def test_an_empty_or_1_0_report_converts_without_facts():
    assert from_v1({}).facts == []
    old = X.v1_report()
    old["schema_version"] = "1.0"
    for citation in old["citations"]:
        citation.pop("quote"), citation.pop("location")
    for side in old["conflicts"][0]["sides"]:
        side.pop("quotes")
    report = from_v1(old)
    assert report.facts == [] and report.spans == [] and len(report.sources) == 3


def test_a_claims_own_located_quotes_make_its_facts_when_the_caller_has_them():
    nvidia = "NVIDIA Corp (NVDA), Revenue for FY2025Q3"
    quotes = {1: [ClaimQuote(2, nvidia, Location(start=0, end=len(nvidia)))]}
    report = from_v1(X.v1_report(), quotes)
    assert integrity_problems(report) == []
    (section,) = report.sections
    assert [report.fact_text(report.fact(i)) for i in section.facts] == [
        nvidia,  # claim 1: its own quote, at its place in the filing
        "Apple Inc (AAPL), Revenue for FY2024Q4: $94,930,000,000 (USD).",  # claim 2: its citation's
    ]
    span = report.span(report.fact(section.facts[0]).spans[0])
    assert (span.source, span.location.start, span.location.end) == (2, 0, 40)
    # the conflict's side and the judgement rest on the claim's own fact too
    assert report.conflicts[0].sides[0].facts == [section.facts[0]]
    assert section.facts[0] in report.interpretation.items[0].facts
