"""The engine's query translation (agent/engine/translation.py) on an in-memory registry: one
structured call per research when the materials hold a language the question is not in, its
versions handed to every search of a bilingual tool (never to other tools, never from the
model), shown in the plan as the model's, bounded by the research's limits, and a failure that
leaves the tool to its glossary. The report's plan carries the translations code lets through
(`plan.search_queries`, marked as the model's): a translation that adds or loses a figure, a name
or a negation is listed as not shown, never with its words. The real path (the product's tool over the demo course, the
runner, the terminal) is tests/research/test_bilingual_research.py."""

from __future__ import annotations

import json

import pytest

from agent.engine import Limits, LLMClient, LLMConfig, NullSink, ResearchInput, UsageMeter, run_research
from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolDefinitionError, ToolRegistry
from tests.support.scripted_llm import Scenario

QUESTION = "典型的預警儀表板結合哪三種訊號？"
CTX = ToolContext(user_id=1, channel_id=1)


def registry(calls: list) -> ToolRegistry:
    box = ToolRegistry()

    @box.tool(tier="internal", search=True, exact_figures=False, bilingual=True)
    def course_search(ctx: ToolContext, query: str, *, translations: list[dict] | None = None) -> ToolResult:
        """Search the course's files.

        Args:
            query: what to look for
        """
        calls.append({"tool": "course_search", "query": query, "translations": translations})
        text = "A typical early-warning dashboard combines three signals."
        return ToolResult(sources=[Source(title="handout p. 1", snippet=text, text=text, tier="internal")])

    @box.tool(tier="scholarly", search=True, exact_figures=False)
    def paper_search(ctx: ToolContext, query: str) -> ToolResult:
        """Search papers.

        Args:
            query: what to look for
        """
        calls.append({"tool": "paper_search", "query": query})
        return ToolResult(data={"papers": []})

    return box


def research(server, languages=("en", "zh"), limits=None):
    calls: list = []
    result = run_research(
        ResearchInput(question=QUESTION, language="zh-hant", material_languages=languages),
        llm=LLMClient(
            LLMConfig(models={"default": "m"}, base_url=server.url, api_key="t", timeout=5), UsageMeter()
        ),
        tools=registry(calls).bind(CTX),
        sink=NullSink(),
        is_cancelled=lambda: False,
        limits=limits or Limits(),
    )
    return result, calls


def test_a_question_outside_the_materials_language_is_translated_once_and_every_search_gets_it(llm):
    llm.reset(
        Scenario(complexity="simple", sub_questions=2, tools_per_round=2, action_rounds=2, sufficient_after=2)
    )
    result, calls = research(llm)

    assert result.outcome == "completed", result.error
    (asked,) = llm.calls("translation")  # one call for the whole research, however many searches
    assert (
        asked["response_format"]["type"] == "json_schema"
        and asked["response_format"]["json_schema"]["strict"]
    )
    user = asked["messages"][-1]["content"]
    assert "Languages: en (English)" in user and json.dumps(QUESTION, ensure_ascii=False) in user
    searches = [c for c in calls if c["tool"] == "course_search"]
    assert len(searches) >= 2
    for call in searches:
        versions = {t["language"]: t for t in call["translations"]}
        assert versions["zh"]["by"] == "question" and versions["en"]["by"] == "model"
        assert "early-warning dashboard" in versions["en"]["text"]  # the scripted translator's words
    assert all("translations" not in c for c in calls if c["tool"] == "paper_search")
    # shown in the plan, as the model's translation
    plan = result.plan["translations"]
    assert (plan["by"], plan["status"], plan["languages"]) == ("model", "ok", ["en"])
    assert {"text": QUESTION, "language": "en", "translation": versions["en"]["text"]} in plan["items"]
    # and in the report, as the model's words of its plan
    assert result.report["plan"]["by"] == "model"
    (queries,) = result.report["plan"]["search_queries"]
    assert queries["language"] == "en" and queries["question"] == versions["en"]["text"]
    assert len(queries["sub_questions"]) == len(result.report["plan"]["sub_questions"])


def test_materials_in_the_questions_language_only_need_no_translation(llm):
    llm.reset(Scenario(complexity="simple", tools_per_round=1))
    result, calls = research(llm, languages=("zh",))

    assert result.outcome == "completed" and not llm.calls("translation")
    assert result.plan["translations"] == {}
    (search,) = [c for c in calls if c["tool"] == "course_search"]
    assert search["translations"] == [{"language": "zh", "text": QUESTION, "by": "question"}]


def test_a_failed_translation_leaves_the_search_to_the_glossary_and_the_plan_says_so(llm):
    llm.reset(Scenario(complexity="simple", tools_per_round=1))
    llm.fail("translation", "malformed", times=2)  # the call and its one retry
    result, calls = research(llm)

    assert result.outcome == "completed", result.error
    assert len(llm.calls("translation")) == 2
    assert result.plan["translations"]["status"] == "failed" and result.plan["translations"]["items"] == []
    # the report says so, by code, and carries no translation
    assert "query_translation_failed" in {x["code"] for x in result.report["limitations"]}
    assert result.report["plan"]["search_queries"] == []
    (search,) = [c for c in calls if c["tool"] == "course_search"]
    # only the question itself: the tool carries it over with its glossary
    assert search["translations"] == [{"language": "zh", "text": QUESTION, "by": "question"}]


@pytest.mark.parametrize(
    "wrote",
    [
        QUESTION,  # the question again (Gemma 3 270M did, docs/evaluation.md)
        "The dashboard combines three signals, the typical ones.",  # English, as asked
        "典型的預警儀表板",  # Chinese, not what was asked
    ],
)
def test_a_translation_that_is_not_one_is_dropped_by_code(llm, wrote):
    llm.reset(Scenario(complexity="simple", tools_per_round=1))
    expected_ok = wrote.startswith("The")
    llm.on(
        "translation",
        lambda body: {
            "content": json.dumps(
                {"translations": [{"index": 1, "language": "en", "text": wrote}]}, ensure_ascii=False
            )
        },
    )
    result, calls = research(llm)

    (search,) = [c for c in calls if c["tool"] == "course_search"]
    by_model = [t["text"] for t in search["translations"] if t["by"] == "model"]
    assert by_model == ([wrote] if expected_ok else [])
    assert result.plan["translations"]["status"] == ("ok" if expected_ok else "failed")


@pytest.mark.parametrize(
    "lie",
    [
        "A typical early-warning dashboard combines five signals since 2019",  # a figure and a year
        "Professor Quillanby's early-warning dashboard combines three signals",  # a name
        "A typical early-warning dashboard does not combine three signals",  # a negation
    ],
)
def test_a_translation_that_says_more_than_its_question_is_not_in_the_report(llm, lie):
    """It was searched with (it only chose what was searched), but the report shows none of it."""
    llm.reset(Scenario(complexity="simple", tools_per_round=1))
    llm.on(
        "translation",
        lambda body: {"content": json.dumps({"translations": [{"index": 1, "language": "en", "text": lie}]})},
    )
    result, calls = research(llm)

    assert result.outcome == "completed", result.error
    assert result.plan["translations"]["items"][0]["translation"] == lie
    assert result.report["plan"]["search_queries"] == []
    assert {"kind": "search_query", "reason": "lost_numbers", "span": "", "index": None} in result.report[
        "not_shown"
    ]
    assert "Quillanby" not in json.dumps(result.report) and "five" not in json.dumps(result.report)


def test_the_translation_call_is_bounded_by_the_researchs_token_limit(llm):
    llm.reset(Scenario(complexity="simple", tools_per_round=1))
    # The planner alone uses up the (tiny) token budget: the translation is never sent.
    limits = Limits(max_tokens=300, grace_tokens=36_000, budgets={"simple": {"tokens": 300}})
    result, calls = research(llm, limits=limits)

    assert not llm.calls("translation")
    assert result.limit_hit == "max_tokens"


def test_a_bilingual_tool_must_take_the_engines_translations_keyword():
    box = ToolRegistry()
    with pytest.raises(ToolDefinitionError, match="translations=None"):

        @box.tool(tier="internal", search=True, exact_figures=False, bilingual=True)
        def broken(ctx: ToolContext, query: str) -> ToolResult:
            """Search.

            Args:
                query: what to look for
            """
            return ToolResult()

    calls: list = []
    spec = registry(calls).bind(CTX).specs()[0]["function"]
    assert set(spec["parameters"]["properties"]) == {"query"}  # the model never sees it
