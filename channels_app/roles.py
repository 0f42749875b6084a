"""The role table: every role a user can hold, the quota class it gives, and whether it reads
students' research content. The one place a new role is added; the rest asks this table.

| role              | held through                                   | quota class | reads students' content |
|-------------------|------------------------------------------------|-------------|-------------------------|
| admin             | an active superuser (the platform admin)       | admin       | everywhere              |
| owner             | owning the channel (its accountable teacher)   | teacher     | in the channel          |
| teacher           | a Membership                                   | teacher     | no                      |
| super_ta+nda      | a Super TA Membership with an NDA on file      | ta          | in the channel          |
| super_ta          | a Super TA Membership                          | ta          | no (an ordinary TA)     |
| ta                | a Membership                                   | ta          | no                      |
| student           | a Membership (and anyone who holds no role)    | student     | no                      |

A user's quota class is the highest one among the roles they hold in any channel
(QUOTA_CLASSES, highest first); the quota settings (UEDU_DEEP_RESEARCH_QUOTA,
UEDU_CHAT_DAILY_QUOTA) are keyed by quota class and checked against this table at start-up
(quotas.apps). Who may read what is composed from CONTENT_ROLES in channels_app.access; every
platform-admin check is `is_platform_admin`."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q

# Quota classes, highest first.
QUOTA_ADMIN, QUOTA_TEACHER, QUOTA_TA, QUOTA_STUDENT = "admin", "teacher", "ta", "student"
QUOTA_CLASSES = (QUOTA_ADMIN, QUOTA_TEACHER, QUOTA_TA, QUOTA_STUDENT)

PLATFORM_ADMIN = "admin"
OWNER = "owner"
# The values of Membership.Role (checked when the app is ready: channels_app.apps). Plain
# strings, so this table imports no model and any layer may ask it.
TEACHER, TA, SUPER_TA, STUDENT = "teacher", "ta", "super_ta", "student"
# A Super TA membership with a signed NDA on file for the same channel: the role that reads
# students' content. (SUPER_TA alone is the membership, whatever the NDA.)
SUPER_TA_WITH_NDA = "super_ta+nda"


@dataclass(frozen=True)
class Role:
    name: str
    held_through: str  # "superuser" | "ownership" | "membership" | "membership+nda"
    quota_class: str
    reads_content: bool  # reads students' research content (in its channel; everywhere for the admin)


ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        Role(PLATFORM_ADMIN, "superuser", QUOTA_ADMIN, reads_content=True),
        Role(OWNER, "ownership", QUOTA_TEACHER, reads_content=True),
        Role(TEACHER, "membership", QUOTA_TEACHER, reads_content=False),
        Role(SUPER_TA_WITH_NDA, "membership+nda", QUOTA_TA, reads_content=True),
        Role(SUPER_TA, "membership", QUOTA_TA, reads_content=False),
        Role(TA, "membership", QUOTA_TA, reads_content=False),
        Role(STUDENT, "membership", QUOTA_STUDENT, reads_content=False),
    )
}

# Roles held in a channel (everything but the platform admin, who is above the channels).
CHANNEL_ROLES = frozenset(name for name, role in ROLES.items() if role.held_through != "superuser")
# Channel roles that read the content of students' research in their channel.
CONTENT_ROLES = frozenset(name for name in CHANNEL_ROLES if ROLES[name].reads_content)
# Membership roles by the quota class they give (an NDA changes what one reads, not one's quota).
MEMBERSHIP_ROLES_BY_QUOTA = {
    quota: frozenset(
        name
        for name, role in ROLES.items()
        if role.held_through == "membership" and role.quota_class == quota
    )
    for quota in QUOTA_CLASSES
}
# A quota class no role gives, or a role giving none, fails here, at import.
if {role.quota_class for role in ROLES.values()} != set(QUOTA_CLASSES):
    raise ImproperlyConfigured("every quota class is given by a role, and every role gives one")


def is_platform_admin(user) -> bool:
    """The platform admin (an active superuser): the one test of it, everywhere."""
    return bool(user.is_authenticated and user.is_active and user.is_superuser)


def platform_admins_q(prefix: str = "") -> Q:
    """The platform admins, as a filter on users (`prefix`: the path to the user, e.g. "user__")."""
    return Q(**{f"{prefix}is_active": True, f"{prefix}is_superuser": True})


def quota_class(user, channel_roles: set[str]) -> str:
    """The highest quota class among the platform admin and the channel roles the user holds
    anywhere (`channel_roles`); the lowest class for a user who holds none."""
    if is_platform_admin(user):
        return QUOTA_ADMIN
    classes = {ROLES[name].quota_class for name in channel_roles}
    return next((quota for quota in QUOTA_CLASSES if quota in classes), QUOTA_STUDENT)


def check_membership_roles(membership_roles) -> None:
    """Every Membership.Role has its row in the table (called when the app is ready)."""
    missing = set(membership_roles) - {
        name for name, role in ROLES.items() if role.held_through == "membership"
    }
    if missing:
        raise ImproperlyConfigured(f"Membership roles without a row in channels_app.roles: {sorted(missing)}")
