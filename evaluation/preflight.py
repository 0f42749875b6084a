"""Before a run with a real model (`make eval`): is everything it needs there, and what will it cost?

Checked: the researcher's models and the judge's model are listed by their servers (GET /models,
the client code of `manage.py check_llm`), the embedding backend answers with vectors of the
configured size, and the platform's daily cap has room for the estimated cost.

The estimate per research uses the bounds the product's token benchmark enforces (bench/tokens.py:
at most CALLS_TARGET model calls and PROMPT_TOKENS_TARGET prompt tokens per research), and the
judge's per run from the size of its batches; the worst case is each research's hard token budget
(UEDU_DR_MAX_TOKENS + UEDU_DR_GRACE_TOKENS). Both are priced with UEDU_LLM_PRICES."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.conf import settings

from agent.engine.llm import LLMConfig, LLMError, list_models
from agent.llm_factory import llm_config
from materials import embeddings
from quotas import services as quotas

from .judge import ANSWER_TOKENS, BATCH, JudgeSettings

# bench/tokens.py's targets (CALLS_TARGET, PROMPT_TOKENS_TARGET): what a research is held to.
CALLS_PER_RESEARCH = 11.3
PROMPT_TOKENS_PER_RESEARCH = 40_000
COMPLETION_SHARE = 0.15  # completion tokens per prompt token in the benchmark's transcripts (about)
# The judge per run: about 30 units, each asked for recall, claim precision and per citation (alone
# and without it), plus facts and conflicts: ~100 statements, in batches of BATCH; and one more
# call for the rubric's coverage points (a few points, asked apart: scoring.rubric_points).
JUDGE_STATEMENTS_PER_RUN = 100
JUDGE_RUBRIC_CALLS_PER_RUN = 1
JUDGE_PROMPT_TOKENS_PER_CALL = 6_000  # 8 statements with their passages (each cut at 3000 characters)


class PreflightError(Exception):
    pass


@dataclass
class Estimate:
    researches: int
    research_calls: int
    research_tokens: int
    research_usd: float
    judge_calls: int
    judge_tokens: int
    judge_usd: float
    worst_usd: float
    lines: list[str] = field(default_factory=list)

    @property
    def usd(self) -> float:
        return self.research_usd + self.judge_usd


def _price(model: str) -> tuple[float, float]:
    prices = settings.UEDU_LLM_PRICES
    price = prices.get(model) or prices.get("default") or [0.0, 0.0]
    return float(price[0]), float(price[1])


def estimate(*, items: int, k: int, model: str, judge_model: str, labelled_pairs: int) -> Estimate:
    researches = items * k
    prompt = researches * PROMPT_TOKENS_PER_RESEARCH
    completion = int(prompt * COMPLETION_SHARE)
    price_in, price_out = _price(model)
    research_usd = (prompt * price_in + completion * price_out) / 1_000_000
    judge_calls = researches * (
        math.ceil(JUDGE_STATEMENTS_PER_RUN / BATCH) + JUDGE_RUBRIC_CALLS_PER_RUN
    ) + math.ceil(labelled_pairs / BATCH)
    judge_prompt = judge_calls * JUDGE_PROMPT_TOKENS_PER_CALL
    judge_completion = judge_calls * 300
    judge_in, judge_out = _price(judge_model)
    judge_usd = (judge_prompt * judge_in + judge_completion * judge_out) / 1_000_000
    hard = settings.UEDU_DR_MAX_TOKENS + settings.UEDU_DR_GRACE_TOKENS
    worst = (
        researches * hard * max(price_in, price_out) / 1_000_000
        + judge_calls * (JUDGE_PROMPT_TOKENS_PER_CALL * judge_in + ANSWER_TOKENS * judge_out) / 1_000_000
    )
    result = Estimate(
        researches=researches,
        research_calls=math.ceil(researches * CALLS_PER_RESEARCH),
        research_tokens=prompt + completion,
        research_usd=round(research_usd, 2),
        judge_calls=judge_calls,
        judge_tokens=judge_prompt + judge_completion,
        judge_usd=round(judge_usd, 2),
        worst_usd=round(worst, 2),
    )
    result.lines = [
        f"estimate: {items} items × k={k} = {researches} researches with {model}",
        f"  research: ~{result.research_calls} model calls, ~{result.research_tokens:,} tokens, ~USD {result.research_usd:.2f}",
        f"  judge ({judge_model}): ~{judge_calls} calls (incl. the {labelled_pairs}-pair agreement check), "
        f"~{result.judge_tokens:,} tokens, ~USD {result.judge_usd:.2f}",
        f"  total ~USD {result.usd:.2f}; at most USD {result.worst_usd:.2f} if every research used its whole budget",
    ]
    return result


def _listed(name: str, config: LLMConfig, wanted: set[str]) -> str:
    try:
        listed = list_models(config, timeout=10.0)
    except LLMError as exc:
        raise PreflightError(
            f"the {name} server at {config.base_url or 'api.openai.com'} does not answer: {exc}"
        ) from None
    missing = sorted(wanted - set(listed))
    if missing:
        raise PreflightError(
            f"the {name} server at {config.base_url or 'api.openai.com'} does not list {', '.join(missing)} "
            f"(it lists: {', '.join(listed[:10]) or 'nothing'})"
        )
    return f"{name}: {', '.join(sorted(wanted))} listed at {config.base_url or 'api.openai.com'}"


def check(*, model: str | None, judge: JudgeSettings, cost: Estimate) -> list[str]:
    """Every prerequisite of a run, as lines to print; PreflightError on the first one missing (the
    cap before the embedding backend, whose calls are metered against it too)."""
    config = llm_config()
    researchers = {model} if model else set(config.models.values())
    lines = [_listed("researcher", config, researchers)]
    judge_config = LLMConfig(models={"default": judge.model}, base_url=judge.base_url, api_key=judge.api_key)
    lines.append(_listed("judge", judge_config, {judge.model}))
    status = quotas.cost_status()
    room = float(status.cap - status.committed)
    if room < cost.usd:
        raise PreflightError(
            f"the platform's daily cap (UEDU_DEEP_RESEARCH_DAILY_CAP_USD = {float(status.cap):.2f}) has USD "
            f"{room:.2f} left today, less than the estimated USD {cost.usd:.2f}: raise the cap or run --smoke"
        )
    lines.append(f"daily cap: USD {room:.2f} left of {float(status.cap):.2f}, estimate USD {cost.usd:.2f}")
    try:
        vector = embeddings.embed_texts(["evaluation preflight"])[0]
    except Exception as exc:  # noqa: BLE001 — any backend failure is the operator's to fix first
        raise PreflightError(
            f"the embedding backend ({settings.UEDU_EMBEDDING_BACKEND}, {settings.UEDU_EMBEDDING_MODEL}) "
            f"does not work: {exc}"
        ) from None
    lines.append(f"embeddings: {settings.UEDU_EMBEDDING_BACKEND} backend answers ({len(vector)} dimensions)")
    return lines
