"""What a question must be before anything is done with it (a research, a chat turn, the advice
the composer asks for): one rule for every path."""

from __future__ import annotations

import re

from django.conf import settings
from django.utils.translation import gettext as _

from uedu_dr.errors import ServiceError

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def question_language(question: str) -> str:
    """Answer in the language the student asked in."""
    letters = [c for c in question if c.isalpha()]
    if letters and sum(1 for c in letters if _CJK.match(c)) / len(letters) >= 0.2:
        return "zh-hant"
    return "en"


def validate_question(question: str | None) -> str:
    # Control characters carry nothing a reader sees, and PostgreSQL refuses NUL in text outright.
    question = _CONTROL.sub("", question or "").strip()
    if not question:
        raise ServiceError("empty_question", _("Please type a question."))
    limit = settings.UEDU_DR_MAX_QUESTION_CHARS
    if len(question) > limit:
        raise ServiceError(
            "question_too_long",
            _("The question is too long (at most %(limit)d characters).") % {"limit": limit},
        )
    return question
