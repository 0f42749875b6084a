"""Builds the engine's LLM client from Django settings (the engine itself never reads settings)."""

from __future__ import annotations

from django.conf import settings

from agent.engine.llm import LLMClient, LLMConfig, LLMNotConfigured, Recorder, UsageMeter


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


def ask_about_question(role: str, system_prompt: str, question: str, schema: dict, name: str, *, max_tokens: int) -> dict:
    """One light structured call about a student's question (the judge, the context check, the
    Bloom classifier). Raises LLMError; each caller decides what a failure means for it."""
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": f"Student's question:\n{question}"}]
    return make_client().structured(role, messages, schema, name, max_tokens=max_tokens)


def require_llm() -> None:
    from django.utils.translation import gettext as _

    from uedu_dr.errors import ServiceError

    if not llm_configured():
        raise ServiceError("llm_not_configured", _("No language model is configured."), status=503)


__all__ = ["LLMNotConfigured", "llm_config", "llm_configured", "make_client"]
