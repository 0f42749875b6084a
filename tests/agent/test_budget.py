"""The call gate on its own run (the real openai client against the scripted server, the corpus
toolbox, an in-memory sink): every request of every phase fits the research's token and cost
ceilings, however wordy the model. The same on the real stack: tests/research/test_limits.py."""

from __future__ import annotations

import pytest

from agent.engine import Limits, NullSink, ResearchInput, run_research
from tests.agent.test_engine import client
from tests.support.corpus_tools import CTX, corpus_registry
from tests.support.scripted_llm import Scenario

WORDY = 10**6
ROLES = ("planner", "action", "reflection", "selector", "interpreter")


QUESTION = "How does learning analytics relate to Bloom's taxonomy?"


def research(server, limits: Limits):
    llm = client(server)
    sink = NullSink()
    result = run_research(
        ResearchInput(question=QUESTION, channel_name="Demo", language="en"),
        llm=llm,
        tools=corpus_registry().bind(CTX),
        sink=sink,
        is_cancelled=lambda: False,
        limits=limits,
    )
    return result, sink, llm.meter


def answer_bounds(server) -> list[int]:
    return [c.get("max_completion_tokens") or c.get("max_tokens") for c in server.calls()]


def test_a_model_wordy_in_every_phase_stays_within_the_limit_and_its_grace(llm):
    # (a wordy planner alone would take the whole limit: test_limits.py has that case)
    llm.reset(Scenario(usage={role: WORDY for role in ROLES if role != "planner"}))
    result, sink, meter = research(llm, Limits(max_tokens=4_000, grace_tokens=16_000))
    assert result.outcome == "completed" and result.report["facts"]
    assert result.limit_hit == "max_tokens"
    assert [t for t, _ in sink.events].count("limit_hit") == 1
    assert 4_000 < meter.total_tokens <= 20_000
    # every phase was asked (none starved by the one before it), each within what was left
    assert {c["_role"] for c in llm.calls()} >= {"planner", "action", "selector", "interpreter"}
    assert all(bound >= 256 for bound in answer_bounds(llm))


def test_the_reserved_usd_bounds_a_research_below_its_token_ceiling(llm):
    # 2 USD per million answer tokens: 0.05 USD is about 25,000 answer tokens, far below the
    # tokens' ceiling (200,000 + 36,000)
    llm.reset(Scenario(usage={role: WORDY for role in ROLES}))
    result, sink, meter = research(llm, Limits(max_cost_usd=0.05))
    assert result.outcome == "completed" and result.report["facts"] and result.citations
    assert result.limit_hit == "max_tokens" and [t for t, _ in sink.events].count("limit_hit") == 1
    assert meter.total.cost_usd <= 0.05
    assert meter.total_tokens < 40_000


def test_a_research_with_room_to_spare_is_not_bounded_below_its_usual_answer_bounds(llm):
    llm.reset(Scenario())
    result, sink, _ = research(llm, Limits())
    assert result.outcome == "completed" and not result.limit_hit
    bounds = {c["_role"]: c.get("max_completion_tokens") for c in llm.calls()}
    usual = client(llm).config
    for role in ("planner", "selector", "interpreter"):
        assert bounds[role] == usual.answer_tokens(role, "gpt-5.4-mini"), role


@pytest.mark.parametrize("starved", ["selection", "interpretation"])
def test_a_finishing_phase_with_no_time_left_is_done_by_code_or_left_out_and_the_report_says_so(llm, starved):
    """The run's clock jumps to a second before the hard deadline: before the selection (after the
    counter-search's last tool) or before the interpretation (after the conflicts are found). No
    call is sent that cannot finish; the search ranking chooses the facts, the interpretation is
    left out, and the report says why."""
    now = [0.0]
    limits = Limits(max_seconds=100, grace_seconds=100)

    class Sink(NullSink):
        def emit(self, event) -> None:
            super().emit(event)
            counter_done = event.type == "action_complete" and len(self.steps) == 4
            if (starved == "selection" and counter_done) or (
                starved == "interpretation" and event.type == "claims_verified"
            ):
                now[0] = 199.0

    llm.reset(Scenario())
    sink = Sink()
    result = run_research(
        ResearchInput(question=QUESTION, channel_name="Demo", language="en"),
        llm=client(llm),
        tools=corpus_registry().bind(CTX),
        sink=sink,
        is_cancelled=lambda: False,
        limits=limits,
        clock=lambda: now[0],
    )
    assert result.outcome == "completed" and result.limit_hit == "max_seconds"
    assert not llm.calls("interpreter")
    codes = {item["code"]: item["detail"] for item in result.report["limitations"]}
    assert codes["interpretation_failed"] == {"kind": "out_of_budget"}
    facts = result.report["facts"]
    assert facts and result.citations and [t for t, _ in sink.events].count("limit_hit") == 1
    if starved == "selection":
        assert not llm.calls("selector")
        assert "selection_not_run" in codes and {f["selected_by"] for f in facts} == {"search_ranking"}
    else:
        assert llm.calls("selector") and {f["selected_by"] for f in facts} == {"model"}
