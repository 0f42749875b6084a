"""Redaction of direct identifiers in free text before it leaves the platform.

Two passes over every exported string (questions, answers, chat content, step arguments and
previews, citations):

1. Patterns: e-mail addresses; Taiwanese national ID / resident certificate numbers (A123456789,
   A812345678, AB12345678); student ids in the NTU style (a letter and eight digits: B09901001,
   r12345678); phone numbers (Taiwanese mobiles 0912-345-678 / +886 912 345 678, landlines
   (02)2345-6789, 037-123456, +886-2-2345-6789, and other +country numbers; 8–15 digits).
2. Known identifiers: the usernames, e-mail addresses and names of the people of the exported
   channels, wherever they appear (usernames of three characters or more, matched as whole
   words; names as written).

Boundaries are "not a letter or digit" rather than \\b, because in Chinese text an id is usually
glued to CJK characters ("學號B09901001的"), which \\b treats as word characters.
Redaction is a safety net, not a guarantee: researchers still sign the responsibility agreement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

EMAIL = "[EMAIL]"
NATIONAL_ID = "[NATIONAL_ID]"
STUDENT_ID = "[STUDENT_ID]"
PHONE = "[PHONE]"
PERSON = "[PERSON]"

_NO_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
_NO_ALNUM_AFTER = r"(?![A-Za-z0-9])"

_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
# Letter + 1/2 (citizens), 8/9 (new resident certificates) or A–D (old resident certificates) + 8 digits.
_NATIONAL_ID_RE = re.compile(_NO_ALNUM_BEFORE + r"[A-Za-z][12489A-Da-d]\d{8}" + _NO_ALNUM_AFTER)
_STUDENT_ID_RE = re.compile(_NO_ALNUM_BEFORE + r"[A-Za-z]\d{8}" + _NO_ALNUM_AFTER)
_B = r"(?<![0-9A-Za-z+])"  # CJK text glues numbers to characters, so no \w boundaries here
_S = r"[\s.\-]?"  # one optional separator between digit groups
_PHONE_RES = [
    # Taiwanese mobiles: 0912-345-678, 0912 345 678, +886 912 345 678, 886912345678
    re.compile(_B + r"(?:\+?886" + _S + r"|0)9\d{2}" + _S + r"\d{3}" + _S + r"\d{3}" + _NO_ALNUM_AFTER),
    # Taiwanese landlines: 02-2345-6789, (02)2345-6789, 037-123456, +886-2-2345-6789, 0800-123-456
    re.compile(_B + r"(?:\+?886" + _S + r"\(?|\(?0)[2-8]\d{0,3}\)?" + _S + r"\d{2,4}" + _S + r"\d{3,4}" + _NO_ALNUM_AFTER),
    # Other international numbers: +1 415 555 0100, +44 20 7946 0958
    re.compile(r"(?<![0-9A-Za-z])\+\d{1,3}(?:" + _S + r"\(?\d{2,4}\)?){2,5}" + _NO_ALNUM_AFTER),
]


def _phone(match: re.Match) -> str:
    digits = sum(ch.isdigit() for ch in match.group(0))
    return PHONE if 8 <= digits <= 15 else match.group(0)


def redact_patterns(text: str) -> str:
    text = _EMAIL_RE.sub(EMAIL, text)
    text = _NATIONAL_ID_RE.sub(NATIONAL_ID, text)
    text = _STUDENT_ID_RE.sub(STUDENT_ID, text)
    for pattern in _PHONE_RES:
        text = pattern.sub(_phone, text)
    return text


class Redactor:
    def __init__(self, known_identifiers: Iterable[str] = ()):
        words, literals = set(), set()
        for raw in known_identifiers:
            value = (raw or "").strip()
            if len(value) < 2:
                continue
            if re.fullmatch(r"[\w.@+\-]+", value, re.ASCII):
                if len(value) >= 3:  # "ta" would eat every "TA"; three letters and up are names
                    words.add(value)
            else:
                literals.add(value)  # CJK names have no word boundaries to rely on
        parts = [_NO_ALNUM_BEFORE + re.escape(w) + _NO_ALNUM_AFTER for w in words] + [re.escape(v) for v in literals]
        # Longest first, so "s_alice@example.test" is not cut at "s_alice".
        parts.sort(key=len, reverse=True)
        self._known = re.compile("|".join(parts), re.IGNORECASE) if parts else None

    def text(self, value: str | None) -> str:
        if not value:
            return value or ""
        value = redact_patterns(value)
        if self._known is not None:
            value = self._known.sub(PERSON, value)
        return value

    def data(self, value):
        """Redact every string inside JSON-like data (step arguments, citations); keys stay."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        return value
