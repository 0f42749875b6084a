"""Which quota role a user has, by priority:
platform admin → teacher of any channel → TA (or Super TA) of any channel → student."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from channels_app import access

ADMIN, TEACHER, TA, STUDENT = "admin", "teacher", "ta", "student"


@dataclass(frozen=True)
class QuotaRole:
    role: str
    daily_limit: int | None  # None means unlimited

    @property
    def unlimited(self) -> bool:
        return self.daily_limit is None


def resolve_role(user) -> QuotaRole:
    limits = settings.UEDU_DEEP_RESEARCH_QUOTA
    if user.is_superuser:
        role = ADMIN
    elif access.teaches_anywhere(user):
        role = TEACHER
    elif access.assists_anywhere(user):
        role = TA
    else:
        role = STUDENT
    return QuotaRole(role=role, daily_limit=limits[role])


def chat_daily_limit(user) -> int | None:
    """The user's ordinary chat messages per rolling 24 hours (None = unlimited)."""
    return settings.UEDU_CHAT_DAILY_QUOTA[resolve_role(user).role]
