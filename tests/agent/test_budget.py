"""The call gate on its own run (the real openai client against the scripted server, the corpus
toolbox, an in-memory sink): every request of every phase fits the research's token and cost
ceilings, however wordy the model. The same on the real stack: tests/research/test_limits.py."""

from __future__ import annotations

from agent.engine import Limits, NullSink, ResearchInput, run_research
from tests.agent.test_engine import client
from tests.support.corpus_tools import CTX, corpus_registry
from tests.support.scripted_llm import Scenario

WORDY = 10**6
ROLES = ("planner", "action", "reflection", "claims", "verifier", "synthesizer")


def research(server, limits: Limits):
    llm = client(server)
    sink = NullSink()
    result = run_research(
        ResearchInput(
            question="比較學習分析與布魯姆分類在課程設計中的角色", channel_name="Demo", language="zh-hant"
        ),
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
    # reword_claims: a claim that only restates its quote is verified by code; reworded, the
    # verifier model is asked too
    llm.reset(Scenario(usage={role: WORDY for role in ROLES if role != "planner"}, reword_claims=True))
    result, sink, meter = research(llm, Limits(max_tokens=4_000, grace_tokens=16_000))
    assert result.status == "completed" and result.answer.strip()
    assert result.limit_hit == "max_tokens"
    assert [t for t, _ in sink.events].count("limit_hit") == 1
    assert 4_000 < meter.total_tokens <= 20_000
    # every phase was asked (none starved by the one before it), each within what was left
    assert {c["_role"] for c in llm.calls()} >= {"planner", "action", "claims", "verifier", "synthesizer"}
    assert all(bound >= 256 for bound in answer_bounds(llm))
    usual = client(llm).config.answer_tokens("synthesizer", "gpt-5.4-mini")
    assert max(answer_bounds(llm)) < usual  # the writer's usual bound was lowered to its share


def test_the_reserved_usd_bounds_a_research_below_its_token_ceiling(llm):
    # 2 USD per million answer tokens: 0.05 USD is about 25,000 answer tokens, far below the
    # tokens' ceiling (200,000 + 36,000)
    llm.reset(Scenario(usage={role: WORDY for role in ROLES}))
    result, sink, meter = research(llm, Limits(max_cost_usd=0.05))
    assert result.status == "completed" and result.answer.strip() and result.citations
    assert result.limit_hit == "max_tokens" and [t for t, _ in sink.events].count("limit_hit") == 1
    assert meter.total.cost_usd <= 0.05
    assert meter.total_tokens < 40_000


def test_a_research_with_room_to_spare_is_not_bounded_below_its_usual_answer_bounds(llm):
    llm.reset(Scenario())
    result, sink, _ = research(llm, Limits())
    assert result.status == "completed" and not result.limit_hit
    bounds = {c["_role"]: c.get("max_completion_tokens") for c in llm.calls()}
    usual = client(llm).config
    for role in ("planner", "claims", "synthesizer"):
        assert bounds[role] == usual.answer_tokens(role, "gpt-5.4-mini"), role


def test_a_writer_with_no_time_left_leaves_a_body_of_the_verified_claims(llm):
    """The claims are verified three seconds before the hard deadline (the run's clock is moved
    there): the writer's share (half of it) is too short to ask, the draft's check (all of it) is
    not. The body is the verified claims, checked like any draft, and the report says why."""
    now = [0.0]
    limits = Limits(max_seconds=100, grace_seconds=100)

    class Sink(NullSink):
        def emit(self, event) -> None:
            super().emit(event)
            if event.type == "claims_verified":
                now[0] = 197.0

    llm.reset(Scenario())
    sink = Sink()
    result = run_research(
        ResearchInput(
            question="比較學習分析與布魯姆分類在課程設計中的角色", channel_name="Demo", language="zh-hant"
        ),
        llm=client(llm),
        tools=corpus_registry().bind(CTX),
        sink=sink,
        is_cancelled=lambda: False,
        limits=limits,
        clock=lambda: now[0],
    )
    assert result.status == "completed" and result.limit_hit == "max_seconds"
    assert not llm.calls("synthesizer")  # the writer was not asked
    codes = [item["code"] for item in result.report["limitations"]]
    assert "written_from_claims" in codes and codes.count("limit_hit") == 1
    claims = [c for c in result.verification["evidence_claims"] if c["verdict"] == "supported"]
    assert claims and all(c["text"] in result.answer for c in claims)
    assert result.citations and [t for t, _ in sink.events].count("limit_hit") == 1
