"""The auto-judge: is this question worth a Deep Research run? It only ever advises."""

from __future__ import annotations

from django.utils.translation import gettext as _

from agent.engine import prompts, schemas
from agent.engine.llm import LLMError
from agent.llm_factory import ask_about_question, require_llm
from channels_app.models import Channel
from uedu_dr.errors import ServiceError

from .membership import check_member
from .questions import validate_question


def judge_question(question: str, channel: Channel, *, user) -> dict:
    """For a member of `channel` only (every model call is a member's, on a channel's behalf);
    metered against the platform's daily cap and the user's own share of it on `user`'s behalf
    (503 when the cap is reached, 429 when the share is used)."""
    check_member(user, channel)
    question = validate_question(question)
    require_llm()
    try:
        verdict = ask_about_question(
            "judge", prompts.JUDGE, question, schemas.JUDGE, "deep_research_judge", user=user, max_tokens=400
        )
    except LLMError as exc:
        raise ServiceError(
            "judge_unavailable", _("The suggestion service is unavailable right now."), status=503
        ) from exc
    result = {
        "worth_it": verdict["worth_it"],
        "confidence": round(min(1.0, max(0.0, float(verdict["confidence"]))), 3),
        "reasons": [r[:300] for r in verdict["reasons"][:5]],
    }
    result["threshold"] = channel.auto_suggest_threshold
    result["suggest"] = bool(
        result["worth_it"]
        and result["confidence"] >= channel.auto_suggest_threshold
        and channel.deep_research_enabled
    )
    return result
