"""The engine knows tools by their declared traits, never by their names: no engine module or
prompt names a registered tool, a new search tool counts as a search and a new tool of filed
figures is named to the researcher with no engine change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import agent.tools
from agent.engine import Limits, LLMClient, LLMConfig, NullSink, ResearchInput, UsageMeter, run_research
from agent.engine.report_types import Report
from agent.tools.registry import ToolContext, ToolRegistry
from tests.support.scripted_llm import Scenario
from tests.support.trait_tools import filed_registry, journals_registry

ENGINE = Path(agent.__file__).resolve().parent / "engine"
CTX = ToolContext(user_id=1, channel_id=1)


def test_no_engine_module_or_prompt_names_a_registered_tool():
    names = [tool.name for tool in agent.tools.load().all()]
    assert len(names) >= 10  # the product's registry, loaded
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found += [
                f"{path.name}:{lineno}: {name}"
                for name in names
                if re.search(rf"\b{re.escape(name)}\b", line)
            ]
    assert found == [], "the engine tells tools apart by their traits (ToolTraits), not by name"


def run(server, registry: ToolRegistry, question: str = "比較學習分析與布魯姆分類法"):
    sink = NullSink()
    client = LLMClient(
        LLMConfig(models={"default": "gpt-5.4-mini"}, base_url=server.url, api_key="t", timeout=5),
        UsageMeter(),
    )
    result = run_research(
        ResearchInput(question=question, language="en"),
        llm=client,
        tools=registry.bind(CTX),
        sink=sink,
        is_cancelled=lambda: False,
        limits=Limits(),
    )
    return result, sink


def test_a_new_search_tool_is_counted_as_a_search_by_its_trait(llm):
    llm.reset(Scenario(complexity="complex", tools_per_round=2))
    result, sink = run(llm, journals_registry())

    assert result.outcome == "completed", result.error
    called = [s["tool_name"] for s in sink.steps.values()]
    assert called.count("lookup_journals") >= 2 and called.count("open_syllabus") >= 2
    assert result.searches == called.count("lookup_journals")
    counter = [s for s in sink.steps.values() if s["phase"] == "counter_search"]
    assert result.verification["counter_searches"] == sum(
        s["tool_name"] == "lookup_journals" for s in counter
    )


@pytest.mark.parametrize("exact", [True, False])
def test_a_new_tool_of_filed_figures_is_named_to_the_researcher_by_its_trait(llm, exact):
    llm.reset(Scenario(complexity="simple"))
    result, _ = run(llm, filed_registry(exact=exact), question="What was NVIDIA's revenue last quarter?")

    # the filing's sentence is the fact, and its figure the value code read from it, either way
    report = Report.from_json(result.report)
    (fact,) = report.facts
    assert report.fact_text(fact) == "NVIDIA revenue for Q3 FY2025 was USD 35,082 million, as filed."
    assert 35_082_000_000 in [report.value(v).value for v in fact.values]
    # the researcher is told which tools give filed figures, by the trait
    action_prompt = llm.calls("action")[0]["messages"][0]["content"]
    assert ("(quarterly_filing)" in action_prompt) is exact
