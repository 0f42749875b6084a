"""One selection round on its own (agent/engine/selection.py): a real RunContext, the real
openai client against the scripted server, sources registered by hand. The whole research around
it: tests/agent/test_engine.py; on the real stack: tests/research/test_selection_fallbacks.py."""

from __future__ import annotations

import re

from agent.engine import LLMClient, LLMConfig, UsageMeter, selection
from agent.engine.plan import Plan, SubQuestion
from agent.engine.spans import SpanIndex
from agent.engine.state import RunContext
from agent.engine.types import Limits, NullSink, ResearchInput, Source
from tests.support.scripted_llm import Scenario

QUESTION = "How do learning analytics dashboards help students reflect on their learning?"


def context(
    server, texts: list[str], *, question=QUESTION, subs=(), **config
) -> tuple[RunContext, SpanIndex]:
    llm = LLMClient(
        LLMConfig(
            models={"default": "gpt-5.4-mini"}, base_url=server.url, api_key="test", timeout=5, **config
        ),
        UsageMeter(),
    )
    run = RunContext(
        inp=ResearchInput(question=question, language="en"),
        llm=llm,
        sink=NullSink(),
        is_cancelled=lambda: False,
        limits=Limits(),
        plan=Plan(sub_questions=[SubQuestion(s, []) for s in subs]),
    )
    for n, text in enumerate(texts):
        run.registry.add(
            Source(title=f"Handout p. {n + 1}", snippet="", text=text, tier="internal", url=f"u{n}")
        )
    return run, SpanIndex(run.registry)


def select(run, index, *, plan_fallback=True):
    return selection.select(
        run,
        index,
        source_ids=[i for i, _ in run.registry.items()],
        plan_fallback=plan_fallback,
        first_id=1,
        already=set(),
    )


def words(index, fact) -> str:
    return " ".join(index.get(i).text for i in fact.spans)


def test_a_sentence_two_overlapping_passages_share_is_offered_and_stated_once(llm):
    """Two chunks of one page overlap: the sentence they share is one candidate and one fact."""
    llm.reset(Scenario(select_per_call=0))  # the model chooses nothing: the ranking does
    shared = "A learning analytics dashboard helps students reflect on their learning."
    run, index = context(
        llm,
        [
            f"Learning analytics dashboards show students their progress. {shared}",
            f"{shared} Students compare their results with their goals on the dashboard.",
        ],
    )
    found = select(run, index)
    stated = [words(index, f) for f in found.facts]
    assert stated.count(shared) == 1 and len(stated) == 3
    (call,) = llm.calls("selector")
    assert call["messages"][1]["content"].count(shared) == 1


def test_a_sub_question_that_asks_nothing_or_asks_again_is_no_target_of_its_own(llm):
    """A weak model wrote "question" into every field of its plan: the question as a whole is
    the one target. A real sub-question stays one; the same terms asked twice are asked once."""
    run, _ = context(llm, [], subs=["question", "question"])
    assert [(t.index, t.text) for t in selection.targets(run, plan_fallback=False)] == [
        (selection.WHOLE_QUESTION, QUESTION)
    ]
    run, _ = context(
        llm,
        [],
        subs=["What do dashboards show students?", "What do dashboards show to students", "What is RAG?"],
    )
    assert [t.index for t in selection.targets(run, plan_fallback=False)] == [0, 2]


def test_the_candidates_are_shown_best_first(llm):
    """The model reads the candidates in the ranking's order (a small model picks the first it
    reads), a source's spans under its tag again when they come back after another source's;
    the schema's enum holds the same ids."""
    llm.reset(Scenario(select_per_call=1))
    run, index = context(
        llm,
        [
            "A learning analytics dashboard helps students reflect on their learning. "
            "The weather was fine. Dashboards show students their results.",
            "Learning analytics dashboards help students reflect. Lunch is at noon.",
        ],
    )
    select(run, index)
    (call,) = llm.calls("selector")
    prompt = call["messages"][1]["content"]
    shown = re.findall(r"^\[(\d+\.\d+)\]", prompt, re.M)
    assert shown[:3] == ["1.1", "2.1", "1.3"] and set(shown[3:]) == {"1.2", "2.2"}
    enum = call["response_format"]["json_schema"]["schema"]["$defs"]["span_id"]["enum"]
    assert enum == shown
    assert '<source id="2">\n[2.2]' in prompt or '<source id="1">\n[1.3]' in prompt
    assert prompt.count('<source id="1" tool=') == 1 and prompt.count('<source id="2" tool=') == 1
    assert prompt.rstrip().endswith("Which spans answer the student's question? Their ids, best first.")


def test_a_model_that_chooses_fewer_than_three_facts_gets_the_rankings_best_beside_them(llm):
    """The model's choice stands; the search ranking adds its best spans on the subject that
    are not stated yet, up to three facts in all, labelled as its own choice."""
    llm.reset(Scenario(select_per_call=1))
    run, index = context(
        llm,
        [
            "A learning analytics dashboard helps students reflect on their learning. "
            "Dashboards show students their results. The weather was fine.",
            "Learning analytics dashboards help students reflect. Lunch is at noon.",
        ],
    )
    found = select(run, index)
    assert [f.selected_by for f in found.facts] == ["model", "search_ranking", "search_ranking"]
    assert len({s for f in found.facts for s in f.spans}) == 3
    assert all("weather" not in words(index, f) and "Lunch" not in words(index, f) for f in found.facts)
    assert found.by_ranking == 1
    assert {"code": "selected_by_search_ranking", "detail": {"sub_questions": 1}} in found.limitations
    # a later round (a conflict's re-search) adds only what the model chose
    again = selection.select(
        run, index, source_ids=[2], plan_fallback=True, first_id=9, already={"1.1", "1.2", "1.3"}
    )
    assert [f.selected_by for f in again.facts] == ["model"]


def test_a_hypothesis_that_says_nothing_is_offered_for_no_stance(llm):
    """A plan whose hypothesis is the word "question": the model is not asked what speaks for or
    against it, and the schema lets it give no stance at all."""
    llm.reset(Scenario(select_per_call=3))
    run, index = context(llm, ["A learning analytics dashboard helps students reflect on their learning."])
    run.plan.hypotheses = [
        "question",
        "Dashboards help students reflect",
        "dashboards help students reflect!",
    ]
    found = select(run, index)
    (call,) = llm.calls("selector")
    item = call["response_format"]["json_schema"]["schema"]["properties"]["facts"]["items"]["properties"]
    assert item["hypothesis"]["enum"] == [0, 1] and item["stance"]["enum"] == ["for", "against", "none"]
    assert "Hypotheses:\n1. Dashboards help students reflect\n\n" in call["messages"][1]["content"]
    assert "the hypothesis it speaks for or against" in call["messages"][0]["content"]
    assert [f.stances for f in found.facts] == [[(1, "for")]]  # the plan's second hypothesis

    run.plan.hypotheses = ["question"]
    select(run, index)
    item = llm.calls("selector")[-1]["response_format"]["json_schema"]["schema"]["properties"]["facts"][
        "items"
    ]
    assert item["properties"]["hypothesis"]["enum"] == [0] and item["properties"]["stance"]["enum"] == [
        "none"
    ]
    assert "Hypotheses:" not in llm.calls("selector")[-1]["messages"][1]["content"]
    assert (
        "the hypothesis it speaks for or against" not in llm.calls("selector")[-1]["messages"][0]["content"]
    )
