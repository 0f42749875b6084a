"""Reports built from the sources' own words (the engine with the real openai client against the
scripted server): filed figures as facts with the values code read from them, a conflict between
two sources found by comparing those values and settled by a targeted re-search, a model that
obeys a hostile passage, the interpretation's items checked against their facts, the plan's
sub-questions and hypotheses checked against the question, and hypotheses and a judgement
weighed by code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent.engine import Limits, LLMClient, LLMConfig, NullSink, ResearchInput, UsageMeter, run_research
from agent.engine.report_types import REPORT_SCHEMA, Report, validate
from tests.support.corpus_tools import CTX, corpus_registry
from tests.support.report_scenarios import (
    AAPL,
    NVDA,
    PLANTED,
    financials_first,
    financials_registry,
    hostile_registry,
)
from tests.support.scripted_llm import FACT_LINE, Scenario, ScriptedLLM, interpret_from_facts, observations_of

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def run(
    server, registry, *, question="Compare NVIDIA's and Apple's revenue in their last reported quarter", **inp
):
    sink = NullSink()
    client = LLMClient(
        LLMConfig(models={"default": "gpt-5.4-mini"}, base_url=server.url, api_key="t", timeout=5),
        UsageMeter(),
    )
    inp.setdefault("language", "en")
    result = run_research(
        ResearchInput(question=question, **inp),
        llm=client,
        tools=registry.bind(CTX),
        sink=sink,
        is_cancelled=lambda: False,
        limits=Limits(),
    )
    return result, sink


def test_filed_figures_are_facts_with_the_values_code_read_from_their_spans(llm):
    llm.reset(Scenario(complexity="simple"))
    llm.on("action", financials_first)
    result, _ = run(llm, financials_registry())

    assert result.outcome == "completed", result.error
    report = Report.from_json(result.report)
    by_text = {report.fact_text(f): f for f in report.facts}
    nvda = next(f for t, f in by_text.items() if t.startswith("NVIDIA Corp (NVDA), Revenue"))
    aapl = next(f for t, f in by_text.items() if t.startswith("Apple Inc (AAPL), Revenue"))
    # each fact is its filing's own words, where they are in it
    for fact, filing in ((nvda, NVDA), (aapl, AAPL)):
        (span,) = report.fact_spans(fact)
        assert filing[span.location.start : span.location.end] == span.text
        assert report.source(fact.source).tool == "get_financials" and fact.tier == "structured"
    # the values are the spans' own characters, read by code with their scale
    amounts = {report.value(v).value: report.value(v).text for f in (nvda, aapl) for v in f.values}
    assert "35,082,000,000" in amounts[35_082_000_000] and "94,930,000,000" in amounts[94_930_000_000]
    # the citations a task stores: one per source, each showing the span a fact quotes
    quoted = {c.title[:4]: c for c in result.citations}
    for citation, filing in ((quoted["NVDA"], NVDA), (quoted["AAPL"], AAPL)):
        location = citation.location
        assert citation.quote and filing[location["start"] : location["end"]] == citation.quote
    validate(result.report)
    # the example report in docs/reports.md ("An example") is this one
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "report-example.json").write_text(
        json.dumps(result.report, ensure_ascii=False, indent=1) + "\n"
    )


def test_a_model_that_names_spans_that_do_not_exist_states_nothing_of_its_own(llm):
    def inventing(body):
        return {
            "content": json.dumps(
                {"facts": [{"span_ids": ["9.1"], "hypothesis": 0, "stance": "none"}], "contradictions": []}
            )
        }

    llm.reset(Scenario(complexity="simple"))
    llm.on("action", financials_first)
    llm.on("selector", inventing)
    result, _ = run(llm, financials_registry())
    report = Report.from_json(result.report)
    # refused by the enum of the call's candidates; the search ranking chose real spans instead
    assert report.facts and {f.selected_by for f in report.facts} == {"search_ranking"}
    assert all(report.fact_text(f) in (NVDA + AAPL) for f in report.facts)
    assert "9.1" not in json.dumps(result.report["facts"])


def test_two_sources_disagreeing_on_a_figure_are_found_by_code_and_settled_by_a_re_search(llm):
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
    result, sink = run(llm, financials_registry(), question="What was NVIDIA's revenue in Q3 FY2025?")

    assert [d["purpose"] for t, d in sink.events if t == "action_dispatch"] == ["evidence", "conflict"]
    report = Report.from_json(result.report)
    (conflict,) = report.conflicts
    assert conflict.found_by == "values" and conflict.subject.year == 2025
    text_of = {f.id: report.fact_text(f) for f in report.facts}
    sides = [[text_of[i] for i in side.facts] for side in conflict.sides]
    # the filing found by the re-search agrees with page A (35.08 against 35.1, within 1 %)
    page_a, page_b = "NVIDIA reported revenue of $35.1 billion", "Analysts say NVIDIA's Q3 FY2025 revenue"
    (winning,) = [s for s in sides if any(t.startswith(page_a) for t in s)]
    (losing,) = [s for s in sides if any(t.startswith(page_b) for t in s)]
    assert any(t.startswith("NVIDIA Corp (NVDA), Revenue") for t in winning)
    assert conflict.status == "resolved" and conflict.resolution == "higher_tier"
    assert conflict.sides[conflict.prevailing_side].tier == "structured"
    # every side's values are values of its facts' spans
    for side in conflict.sides:
        assert side.values and all(
            report.value(v).span in {s for f in side.facts for s in report.fact(f).spans} for v in side.values
        )
    # the losing fact is superseded: shown only in the conflict, not under the question
    (lost,) = [f for f in report.facts if f.superseded]
    assert report.fact_text(lost).startswith(page_b)
    assert lost.id not in [i for s in report.sections for i in s.facts]
    filing = next(f for f in report.facts if report.fact_text(f).startswith("NVIDIA Corp"))
    assert filing.found_by == "conflict"
    assert (conflict.re_search.rounds, conflict.re_search.new_sources, conflict.re_search.new_facts) == (
        1,
        1,
        [filing.id],
    )
    assert result.verification["conflicts_found"] == 1 and result.verification["conflicts"] == []


def test_a_model_that_obeys_a_hostile_passage_never_gets_the_planted_sentence_into_the_report(llm):
    def obedient_interpreter(body):  # it repeats what the handout told it, citing the handout's fact
        reply = interpret_from_facts(body)
        handout = next(
            int(i) for i, text in FACT_LINE.findall(observations_of(body)) if text.startswith("Dashboards")
        )
        reply["items"].append(
            {"kind": "reasoning", "text": f"As the official source says, {PLANTED}.", "facts": [handout]}
        )
        reply["suggestions"].append(f"Why is {PLANTED}?")
        return {"content": json.dumps(reply)}

    llm.reset(Scenario(complexity="simple"))
    llm.on("interpreter", obedient_interpreter)
    result, _ = run(llm, hostile_registry(), question="How do dashboards help students?")

    planted = re.compile(r"exam is cancelled", re.I)
    # the passage is a flagged span: no model is shown it
    for call in llm.calls("selector"):
        assert not planted.search(json.dumps(call["messages"]))
    everything = json.dumps(
        [result.answer, result.report, result.verification, [c.as_dict() for c in result.citations]],
        ensure_ascii=False,
    )
    assert not planted.search(everything), "the planted sentence reached the report"
    report = Report.from_json(result.report)
    # the handout's clean sentence is still a fact
    assert "Dashboards show weekly progress to students." in [report.fact_text(f) for f in report.facts]
    handout = next(s for s in report.sources if s.title == "Shared handout")
    assert handout.flagged and handout.cited
    dropped = [(n.kind, n.reason) for n in report.not_shown]
    assert ("reasoning", "instruction_in_source") in dropped and (
        "suggestion",
        "instruction_in_source",
    ) in dropped
    # the ledger lists them with no text
    rows = [r for r in result.verification["claims"] if r["reason"] == "instruction_in_source"]
    assert rows and all(r["text"] == "" and r["action"] == "dropped" for r in rows)


def test_an_interpretation_that_states_what_its_facts_do_not_is_not_shown(llm):
    def embellishing(body):
        reply = interpret_from_facts(body)
        first = int(FACT_LINE.findall(observations_of(body))[0][0])
        reply["items"] = [
            {
                "kind": "reasoning",
                "text": "Learning analytics measures data about learners",
                "facts": [first],
            },
            {"kind": "reasoning", "text": "Learning analytics improved grades by 40%", "facts": [first]},
            {"kind": "assumption", "text": "Professor Quillan designed learning analytics", "facts": [first]},
            {"kind": "assumption", "text": "Learning analytics does not measure learners", "facts": [first]},
        ]
        reply["suggestions"] = ["How does learning analytics measure learners?", "Why did Harvard drop it?"]
        reply["translations"] = [
            {"span": t["span"], "text": t["text"] + " 99"} for t in reply.get("translations", [])
        ]
        return {"content": json.dumps(reply, ensure_ascii=False)}

    llm.reset(Scenario(complexity="simple"))
    llm.on("interpreter", embellishing)
    result, _ = run(
        llm,
        corpus_registry(),
        question="How does learning analytics relate to Bloom's taxonomy?",
        language="zh-hant",
    )
    report = Report.from_json(result.report)
    assert [i.text for i in report.interpretation.items] == [
        "Learning analytics measures data about learners"
    ]
    assert report.interpretation.by == "model" and report.suggestions.items == [
        "How does learning analytics measure learners?"
    ]
    reasons = [(n.kind, n.reason, n.index) for n in report.not_shown if n.kind != "translation"]
    assert reasons == [
        ("reasoning", "novel_figure", 1),
        ("assumption", "novel_name", 2),
        ("assumption", "novel_negation", 3),
        ("suggestion", "novel_name", 1),
    ]
    # a translation that changes a number is not shown, and its span is named
    assert report.translations.items == []
    lost = [n for n in report.not_shown if n.kind == "translation"]
    assert lost and {n.reason for n in lost} == {"lost_numbers"} and all(n.span for n in lost)
    # no model text anywhere outside the AI's blocks
    texts = json.dumps(result.report["not_shown"]) + json.dumps(result.verification["claims"])
    assert "Quillan" not in texts and "40%" not in texts and "Harvard" not in texts


def test_a_translation_of_a_span_in_another_language_is_shown_beside_it(llm):
    llm.reset(Scenario(complexity="simple"))
    result, _ = run(
        llm, corpus_registry(), question="比較學習分析與布魯姆分類在課程設計中的角色", language="zh-hant"
    )
    report = Report.from_json(result.report)
    assert report.language == "zh" and report.translations.by == "model"
    translated = {t.span: t.text for t in report.translations.items}
    assert translated and set(translated) <= {s.id for s in report.spans}
    assert translated["1.1"].startswith("學習分析") and all(
        t.language == "zh" for t in report.translations.items
    )


def test_a_translation_that_is_its_span_again_is_not_shown_beside_it(llm):
    """A model that hands a span back untranslated adds nothing beside it: the report shows no
    translation and says the machine translation failed."""

    def untranslated(body):
        reply = interpret_from_facts(body)
        listed = observations_of(body).split("Spans to translate into", 1)
        spans = re.findall(r"^\[(\d+\.\d+)\] (.*)$", listed[1], re.M) if len(listed) > 1 else []
        reply["translations"] = [{"span": i, "text": text} for i, text in spans]
        return {"content": json.dumps(reply, ensure_ascii=False)}

    llm.reset(Scenario(complexity="simple"))
    llm.on("interpreter", untranslated)
    result, _ = run(
        llm, corpus_registry(), question="比較學習分析與布魯姆分類在課程設計中的角色", language="zh-hant"
    )
    report = Report.from_json(result.report)
    assert report.facts and report.translations.items == []
    assert "translation_failed" in {x.code for x in report.limitations}
    assert not [n for n in report.not_shown if n.kind == "translation"]  # nothing failed a check


def test_a_sub_question_or_hypothesis_that_adds_to_the_question_is_shown_empty(llm):
    def planner(body):
        return {
            "content": json.dumps(
                {
                    "complexity": "simple",
                    "sub_questions": [
                        {"question": "What does learning analytics measure?", "suggested_tools": []},
                        {
                            "question": "Why did Stanford abolish learning analytics in 2019?",
                            "suggested_tools": [],
                        },
                    ],
                    "hypotheses": [
                        "Learning analytics helps students",
                        "Learning analytics is not used at Oxford",
                    ],
                    "rationale": "",
                    "asks_for_judgement": False,
                }
            )
        }

    llm.reset(Scenario(complexity="simple"))
    llm.on("planner", planner)
    result, sink = run(
        llm, corpus_registry(), question="What does learning analytics measure, and does it help students?"
    )
    plan = result.report["plan"]
    assert plan["by"] == "model"
    assert plan["sub_questions"] == ["What does learning analytics measure?", ""]
    assert plan["hypotheses"] == ["Learning analytics helps students", ""]
    assert [(n["kind"], n["index"]) for n in result.report["not_shown"]][:2] == [
        ("sub_question", 1),
        ("hypothesis", 1),
    ]
    # the progress card is told the plan as the report shows it
    event = dict(sink.events)["plan_complete"]
    assert event["sub_questions"] == plan["sub_questions"] and event["hypotheses"] == plan["hypotheses"]
    assert "Stanford" not in json.dumps(result.report) and "Oxford" not in json.dumps(result.report)


def test_hypotheses_and_the_judgement_are_weighed_by_code_from_the_tagged_facts(llm):
    hypotheses = [
        "Learning analytics measures data about learners",
        "Bloom's taxonomy orders cognitive skills",
    ]
    llm.reset(Scenario(complexity="simple", asks_for_judgement=True, hypotheses=hypotheses))
    asked, _ = run(
        llm, corpus_registry(), question="Should our course use learning analytics and Bloom's taxonomy?"
    )
    report = Report.from_json(asked.report)
    statuses = [(h.index, h.status) for h in report.hypotheses]
    assert statuses == [(0, "supported"), (1, "supported")]
    for h in report.hypotheses:
        assert h.for_facts and all(
            (h.index, "for") in [(t.hypothesis, t.stance) for t in report.fact(i).stances]
            for i in h.for_facts
        )
    judgement = report.judgement
    assert judgement.stance == "for" and judgement.hypothesis == 0
    assert judgement.for_by_tier == {"internal": 1} and judgement.against_by_tier == {}
    assert judgement.facts == report.hypotheses[0].for_facts
    # the interpretation is told the codes, never asked to decide them
    prompt = llm.calls("interpreter")[0]["messages"][1]["content"]
    assert "(supported)" in prompt and "stance code computed from the facts: for" in prompt

    llm.reset(Scenario(complexity="simple"))
    not_asked, _ = run(llm, corpus_registry(), question="What do learning analytics dashboards measure?")
    assert not_asked.report["judgement"] is None and not_asked.report["hypotheses"] == []


def test_the_published_schema_is_the_typed_report_of_version_2():
    assert REPORT_SCHEMA["properties"]["schema_version"]["const"] == "2.0"
    assert {"plan", "sections", "facts", "spans", "values", "conflicts", "not_shown", "sources"} <= set(
        REPORT_SCHEMA["required"]
    )
    for block in ("plan", "interpretation", "translations", "suggestions"):
        assert REPORT_SCHEMA["properties"][block]["properties"]["by"] == {"enum": ["model"]}


def test_the_agreed_context_reaches_every_phase_reflection_included(llm):
    # two rounds: one reflection says "not yet"
    llm.reset(Scenario(sufficient_after=2, action_rounds=2))
    context = {"entities": "NVIDIA, Apple", "metrics": "revenue, gross margin", "time_range": "FY2025 Q3"}
    run(
        llm,
        corpus_registry(),
        context=context,
        question="How does learning analytics relate to Bloom's taxonomy?",
    )
    for role in ("planner", "action", "reflection", "selector", "interpreter"):
        calls = llm.calls(role)
        assert calls, role
        prompt = "\n".join(m.get("content") or "" for m in calls[0]["messages"] if m["role"] == "user")
        assert "- entities: NVIDIA, Apple" in prompt and "- metrics: revenue, gross margin" in prompt, role
    # company figures: the filings first (the tools of filed figures are named when offered; the
    # corpus offers none)
    action = llm.calls("action")[0]["messages"][0]["content"]
    assert "reported figures" in action and "tool of filed figures when one is offered (none in" in action


def test_a_follow_up_whose_earlier_conversation_is_long_still_asks_the_model_to_select(llm):
    """A follow-up carries the earlier conversation (a whole earlier report): in the selection's
    small window it left no room for one candidate, and the search ranking chose every fact."""
    llm.reset(Scenario(complexity="simple"))
    earlier = "## Findings\n\n" + "\n".join(
        f"- “Learning analytics measures learners, point {n}, in detail.” [{n}]" for n in range(1, 120)
    )
    result, _ = run(
        llm,
        corpus_registry(),
        conversation=earlier,
        question="How does learning analytics relate to Bloom's taxonomy?",
    )
    selections = llm.calls("selector")
    assert selections, "no selection call"
    assert {f["selected_by"] for f in result.report["facts"]} == {"model"}
    prompt = "\n".join(m.get("content") or "" for m in selections[0]["messages"] if m["role"] == "user")
    assert "point 119" not in prompt  # the earlier report stays out of the selection's window
    # ...and in the prompts whose window holds it
    planner = "\n".join(m.get("content") or "" for m in llm.calls("planner")[0]["messages"])
    assert "point 119" in planner


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_a_server_that_only_fills_the_schemas_it_is_sent_still_yields_relevant_facts(language):
    """It knows nothing of the prompts: an empty plan (the question becomes the one sub-question),
    no tool chosen (the engine searches), no span selected (the search ranking chooses)."""
    question = (
        "How do learning analytics, Bloom's taxonomy and language model answers relate?"
        if language == "en"
        # the materials are English: the question names its terms in both languages
        else "學習分析(learning analytics)、布魯姆分類(Bloom's taxonomy)與語言模型(language model)有何關係？"
    )
    # A server of its own: the client remembers per server that this one has no tool calls.
    server = ScriptedLLM(Scenario(mode="schema_filler")).start()
    try:
        result, _ = run(server, corpus_registry(), question=question, language=language)
    finally:
        server.stop()
    assert result.outcome == "completed", result.error
    report = Report.from_json(result.report)
    facts = report.shown_facts()
    assert len(facts) >= 3 and {f.selected_by for f in facts} == {"search_ranking"}
    # relevant: each fact's words include a term of the question
    terms = ("learning analytics", "bloom's taxonomy", "language model")
    assert all(any(t in report.fact_text(f).lower() for t in terms) for f in facts)
    codes = {x.code for x in report.limitations}
    assert {"plan_fallback", "searched_by_code", "selected_by_search_ranking"} <= codes
