"""One selection round on its own (agent/engine/selection.py): a real RunContext, the real
openai client against the scripted server, sources registered by hand. The whole research around
it: tests/agent/test_engine.py; on the real stack: tests/research/test_selection_fallbacks.py."""

from __future__ import annotations

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
