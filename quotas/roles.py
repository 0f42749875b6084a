"""A user's daily limits: the quota class of the roles they hold (channels_app.access.quota_class,
from the role table, which declares the classes) looked up in the settings UEDU_DEEP_RESEARCH_QUOTA,
UEDU_CHAT_DAILY_QUOTA and UEDU_DR_MAX_ACTIVE, keyed by those classes (checked at start-up, quotas.apps)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from channels_app import access, roles

QUOTA_SETTINGS = ("UEDU_DEEP_RESEARCH_QUOTA", "UEDU_CHAT_DAILY_QUOTA", "UEDU_DR_MAX_ACTIVE")


@dataclass(frozen=True)
class QuotaRole:
    role: str
    daily_limit: int | None  # None means unlimited

    @property
    def unlimited(self) -> bool:
        return self.daily_limit is None


def resolve_role(user) -> QuotaRole:
    role = access.quota_class(user)
    return QuotaRole(role=role, daily_limit=settings.UEDU_DEEP_RESEARCH_QUOTA[role])


def max_active_researches(role: QuotaRole) -> int | None:
    """How many researches of a user of this role may be queued or running at once (None = no limit)."""
    return settings.UEDU_DR_MAX_ACTIVE[role.role]


def chat_daily_limit(user) -> int | None:
    """The user's ordinary chat messages per rolling 24 hours (None = unlimited)."""
    return settings.UEDU_CHAT_DAILY_QUOTA[resolve_role(user).role]


def check_settings(values=None) -> None:
    """Each quota setting has one limit per quota class of the role table, and no other key."""
    for name in QUOTA_SETTINGS:
        limits = values[name] if values and name in values else getattr(settings, name)
        if set(limits) != set(roles.QUOTA_CLASSES):
            raise ImproperlyConfigured(
                f"{name} must have exactly the quota classes {', '.join(roles.QUOTA_CLASSES)} "
                f"(channels_app.roles); it has {', '.join(sorted(limits))}"
            )
