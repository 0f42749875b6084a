"""Context alignment: before a run, does the question lack something the research needs?"""

from __future__ import annotations

from django.utils.translation import gettext as _

from agent.engine import prompts, schemas
from agent.engine.llm import LLMError
from agent.llm_factory import ask_about_question, require_llm
from channels_app.models import Channel
from uedu_dr.errors import ServiceError

from .membership import check_member
from .questions import validate_question

MAX_VALUE = 200


def check_context(question: str, channel: Channel, *, user) -> dict:
    """{needs_clarification, questions: [{key, question, default}]}, one question per key (the
    model's `question` is its own words: pages label a field by its key) — advice only, for a member of
    `channel`, metered against the platform's daily cap and the user's share of it on `user`'s
    behalf (503 when the cap is reached, 429 when the share is used)."""
    check_member(user, channel)
    question = validate_question(question)
    require_llm()
    try:
        data = ask_about_question(
            "context", prompts.CONTEXT, question, schemas.CONTEXT, "context_check", user=user, max_tokens=600
        )
    except LLMError as exc:
        raise ServiceError(
            "context_unavailable", _("The clarification service is unavailable right now."), status=503
        ) from exc
    # One field per key, the first the model gave: a weak model asks the same thing twice.
    questions, keys = [], set()
    for q in data["questions"]:
        if q["key"] not in keys:
            keys.add(q["key"])
            questions.append(
                {
                    k: q[k][:MAX_VALUE] if isinstance(q[k], str) else q[k]
                    for k in ("key", "question", "default")
                }
            )
    return {"needs_clarification": bool(data["needs_clarification"] and questions), "questions": questions}


def clean_context(context) -> dict:
    """The context a start may carry: known keys, short strings, nothing else."""
    if context in (None, ""):
        return {}
    if not isinstance(context, dict):
        raise ServiceError("invalid", _("context must be an object."))
    unknown = set(context) - set(prompts.CONTEXT_KEYS)
    if unknown:
        raise ServiceError(
            "invalid", _("Unknown context keys: %(keys)s") % {"keys": ", ".join(sorted(unknown))}
        )
    cleaned = {}
    for key, value in context.items():
        if value in (None, ""):
            continue
        if not isinstance(value, str) or len(value) > MAX_VALUE:
            raise ServiceError(
                "invalid",
                _("Each context value must be text of at most %(n)d characters.") % {"n": MAX_VALUE},
            )
        cleaned[key] = value.strip()
    return cleaned
