"""The adversary on the engine alone (the real openai client against the scripted
server's lying model, tests/support/planted.py): its lies arrive through the plan, the selection
and the interpretation, in English and in Chinese, and none reaches a fact. A lie that states a
figure, a year, a name or a negation reaches nothing at all; the others may stand only in the
blocks marked as the AI's. The same on the real stack: tests/research/test_planted_statements.py."""

from __future__ import annotations

import json

import pytest

from agent.engine import Limits, NullSink, ResearchInput, run_research
from agent.engine.report_types import Report
from tests.agent.test_engine import client
from tests.support.corpus_tools import CTX
from tests.support.planted import AI_ONLY, HOLES, QUESTION, leaked_holes, planted_registry
from tests.support.scripted_llm import Scenario

AI_BLOCKS = ("plan", "interpretation", "translations", "suggestions")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_lie_of_the_adversary_reaches_a_fact_in_either_language(llm, lang):
    llm.reset(Scenario(invent=lang))
    sink = NullSink()
    result = run_research(
        ResearchInput(question=QUESTION[lang], language="en" if lang == "en" else "zh-hant"),
        llm=client(llm),
        tools=planted_registry(lang).bind(CTX),
        sink=sink,
        is_cancelled=lambda: False,
        limits=Limits(),
    )
    assert result.outcome == "completed", result.error
    report = result.report
    facts_and_the_rest = {k: v for k, v in report.items() if k not in AI_BLOCKS}
    everything_else = [
        facts_and_the_rest,
        result.verification,
        [c.as_dict() for c in result.citations],
        sink.events,
        result.answer,
    ]
    leaked = leaked_holes(json.dumps(everything_else, ensure_ascii=False), lang)
    assert not leaked, f"a lie reached a fact or a record: {leaked}"
    ai = json.dumps({k: report[k] for k in AI_BLOCKS}, ensure_ascii=False)
    assert not [h for h in leaked_holes(ai, lang) if h not in AI_ONLY]
    # ... and each lie was there to be stopped: the model answered every call at once (its
    # replies fit their schemas), and each lie is listed, by kind and reason, without its text
    assert len(llm.calls("interpreter")) == 1 and result.verification["retries"] == []
    not_shown = [(n["kind"], n["reason"]) for n in report["not_shown"]]
    assert {"sub_question", "hypothesis", "reasoning", "assumption", "suggestion", "translation"} <= {
        k for k, _ in not_shown
    }
    assert {"novel_name", "novel_negation", "novel_figure", "novel_year", "lost_numbers"} <= {
        r for _, r in not_shown
    }
    assert len([k for k, _ in not_shown if k in ("reasoning", "assumption")]) == 5
    # the research still stands on its facts: the handbook's figure prevails over the blog's
    typed = Report.from_json(report)
    (values_conflict,) = [c for c in typed.conflicts if c.found_by == "values"]
    assert values_conflict.status == "resolved"
    winner = values_conflict.sides[values_conflict.prevailing_side]
    assert winner.tier == "internal"
    shown = [typed.fact_text(f) for f in typed.shown_facts()]
    assert any("1,200" in t for t in shown) and not any("4,321" in t for t in shown)
    assert typed.judgement is not None and typed.judgement.stance in ("for", "mixed", "insufficient")
    assert HOLES[lang]["quantifier"]  # the shapes the AI's block may show are declared
