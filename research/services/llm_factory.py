"""Builds the engine's LLM client from Django settings (the engine itself never reads settings)."""

from __future__ import annotations

from django.conf import settings

from research.engine.llm import LLMClient, LLMConfig, LLMNotConfigured, Recorder, UsageMeter


def llm_config() -> LLMConfig:
    return LLMConfig(
        models=dict(settings.UEDU_LLM_MODELS, default=settings.UEDU_LLM_DEFAULT_MODEL),
        base_url=settings.OPENAI_BASE_URL,
        api_key=settings.OPENAI_API_KEY,
        timeout=settings.UEDU_LLM_TIMEOUT_SECONDS,
        max_retries=settings.UEDU_LLM_MAX_RETRIES,
        prices=settings.UEDU_LLM_PRICES,
    )


def llm_configured() -> bool:
    return bool(settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY)


def make_client(meter: UsageMeter | None = None, recorder: Recorder | None = None) -> LLMClient:
    return LLMClient(llm_config(), meter=meter, recorder=recorder)


__all__ = ["LLMNotConfigured", "llm_config", "llm_configured", "make_client"]
