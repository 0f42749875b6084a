"""Builds the engine's LLM client from Django settings (the engine itself never reads settings)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal

import redis
from django.conf import settings

from agent.endpoint_limiter import EndpointLimiter
from agent.engine.llm import (
    LLMClient,
    LLMConfig,
    LLMNotConfigured,
    Recorder,
    UsageMeter,
    server_context_tokens,
)
from quotas import services as quotas
from quotas.models import CostReservation
from uedu_dr.token_estimate import messages_token_bound, token_bound


def llm_config() -> LLMConfig:
    return LLMConfig(
        models=dict(settings.UEDU_LLM_MODELS, default=settings.UEDU_LLM_DEFAULT_MODEL),
        base_url=settings.OPENAI_BASE_URL,
        api_key=settings.OPENAI_API_KEY,
        timeout=settings.UEDU_LLM_TIMEOUT_SECONDS,
        max_retries=settings.UEDU_LLM_MAX_RETRIES,
        prices=settings.UEDU_LLM_PRICES,
        silence_seconds=settings.UEDU_LLM_SILENCE_SECONDS,
        context_tokens=settings.UEDU_LLM_CONTEXT_TOKENS,
        limiter=endpoint_limiter(),
    )


# (Redis location, endpoint, limits) -> the process's limiter: one Redis connection pool for every
# client of the process, made again only when the settings change (the tests change them).
_LIMITERS: dict[tuple, EndpointLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def endpoint_limiter() -> EndpointLimiter | None:
    """The shared pace of the configured endpoint and key (agent/endpoint_limiter.py), or None
    when neither UEDU_LLM_REQUESTS_PER_MINUTE nor UEDU_LLM_TOKENS_PER_MINUTE is set."""
    rpm, tpm = settings.UEDU_LLM_REQUESTS_PER_MINUTE, settings.UEDU_LLM_TOKENS_PER_MINUTE
    if not rpm and not tpm:
        return None
    location = settings.CACHES["default"]["LOCATION"]
    endpoint = EndpointLimiter.endpoint_key(settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY)
    key = (location, endpoint, rpm, tpm)
    with _LIMITERS_LOCK:
        if key not in _LIMITERS:
            client = redis.Redis.from_url(location, socket_timeout=2, socket_connect_timeout=2)
            _LIMITERS[key] = EndpointLimiter(
                client,
                endpoint,
                requests_per_minute=rpm,
                tokens_per_minute=tpm,
                prefix=settings.CACHES["default"].get("KEY_PREFIX", "uedu"),
            )
        return _LIMITERS[key]


# base URL -> the window the server reported, asked once per process (a research's worker thread
# should not wait on GET /props for every client it builds).
_MEASURED: dict[str, int] = {}
_MEASURED_LOCK = threading.Lock()


def measured_context_tokens(base_url: str) -> int:
    if not base_url:
        return 0  # OpenAI itself: its windows are far above any prompt of ours
    with _MEASURED_LOCK:
        if base_url not in _MEASURED:
            config = LLMConfig(models={}, base_url=base_url, api_key=settings.OPENAI_API_KEY)
            _MEASURED[base_url] = server_context_tokens(config, timeout=3.0)
        return _MEASURED[base_url]


def llm_configured() -> bool:
    return bool(settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY)


def make_client(
    meter: UsageMeter | None = None, recorder: Recorder | None = None, preamble: str = ""
) -> LLMClient:
    return LLMClient(call_config(), meter=meter, recorder=recorder, preamble=preamble)


def call_config() -> LLMConfig:
    """llm_config() with the window every call must fit: the setting, else what the server says
    (asked once per process; not in llm_config(), which /healthz reads without waiting on a model
    server)."""
    config = llm_config()
    config.context_tokens = config.context_tokens or measured_context_tokens(config.base_url)
    return config


@dataclass(frozen=True)
class CallBound:
    """The most one metered operation can spend: its calls, each within a prompt and an answer
    token bound (the answer bound is sent as max tokens).

    The prompt bound is counted from the prompt itself when the caller gives it, per script
    (uedu_dr/token_estimate.py: a Chinese prompt bounds at two tokens a character, English at
    0.4), plus what later calls of the operation add (`added_prompt_tokens`: chat's tool results
    and the first answer). `prompt_tokens` is the bound for callers that cannot show theirs."""

    role: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    added_prompt_tokens: int = 0

    def worst_case_usd(self, prompt_tokens: int | None = None) -> Decimal:
        config = llm_config()
        price_in, price_out = config.price(config.model_for(self.role))
        prompt = self.prompt_tokens if prompt_tokens is None else prompt_tokens + self.added_prompt_tokens
        usd = self.calls * (prompt * price_in + self.completion_tokens * price_out) / 1_000_000
        return Decimal(str(usd)).quantize(Decimal("0.000001"), rounding=ROUND_UP)


# Every kind of model call outside a Deep Research run (which reserves its own worst case per
# task, research.services.settlement), with its bound. The README's cost-defence table lists them.
CALL_BOUNDS = {
    # The second call adds the first answer (4,000), the tool specs and up to four tool results of
    # 2,000 characters (chat.services.MAX_TOOL_CALLS) at two tokens a character.
    CostReservation.Kind.CHAT: CallBound(
        "chat", calls=2, prompt_tokens=24_000, completion_tokens=4_000, added_prompt_tokens=24_000
    ),
    CostReservation.Kind.JUDGE: CallBound("judge", calls=1, prompt_tokens=2_000, completion_tokens=400),
    CostReservation.Kind.CONTEXT: CallBound("context", calls=1, prompt_tokens=2_000, completion_tokens=600),
    CostReservation.Kind.BLOOM: CallBound("bloom", calls=1, prompt_tokens=2_000, completion_tokens=500),
}


def prompt_bound(messages: list[dict], preamble: str = "", schema: dict | None = None) -> int:
    """The prompt's token bound, per script: its messages, the client's preamble (the teacher's
    rules, sent with every call) and the JSON Schema a structured call sends."""
    bound = messages_token_bound(messages) + token_bound(preamble)
    if schema is not None:
        bound += token_bound(json.dumps(schema, ensure_ascii=False))
    return bound


@contextmanager
def metered_client(
    kind: str,
    *,
    user,
    daily_limit: int | None = None,
    preamble: str = "",
    messages: list[dict] | None = None,
    schema: dict | None = None,
) -> Iterator[LLMClient]:
    """A client for one operation of `kind`, paid for against the platform's daily cap: the
    worst case is reserved before any request is sent (ServiceError 503 when the cap is reached,
    429 when the user's own daily budget for this kind is used) and settled at the metered cost
    when the operation ends, whether it succeeded or not. Give the first call's `messages` (and
    `schema`) so that the bound is counted from them, per script."""
    bound = CALL_BOUNDS[kind]
    prompt = None if messages is None else prompt_bound(messages, preamble, schema)
    reference = quotas.reserve_call(user, kind, bound.worst_case_usd(prompt), daily_limit=daily_limit)
    meter = UsageMeter()
    try:
        yield make_client(meter=meter, preamble=preamble)
    finally:
        quotas.settle_cost(reference, Decimal(str(round(meter.total.cost_usd, 6))))


def ask_about_question(
    kind: str, system_prompt: str, question: str, schema: dict, name: str, *, user, max_tokens: int
) -> dict:
    """One light structured call about a student's question (the judge, the context check, the
    Bloom classifier), metered against the daily cap for `user`. Raises LLMError, or
    ServiceError when the cap refuses it; each caller decides what a failure means for it."""
    messages = [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": f"Student's question:\n{question}"},
    ]
    with metered_client(kind, user=user, messages=messages, schema=schema) as client:
        return client.structured(CALL_BOUNDS[kind].role, messages, schema, name, max_tokens=max_tokens)


def require_llm() -> None:
    from django.utils.translation import gettext as _

    from uedu_dr.errors import ServiceError

    if not llm_configured():
        raise ServiceError("llm_not_configured", _("No language model is configured."), status=503)


__all__ = ["LLMNotConfigured", "llm_config", "llm_configured", "make_client"]
