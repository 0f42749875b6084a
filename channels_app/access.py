"""Who may do what: `can(user, permission, scope)`, the one check that pages, the API, the admin,
the WebSocket and the services ask, and the row filters built on the same rule.

The permissions, the roles that grant them and where each role is held are one table,
channels_app.roles. A role held through the superuser flag (the platform admin) or the staff
flag holds its permissions everywhere; the owner and the memberships hold theirs in their
channel (a Super TA's content permissions only with an NDA on file for that channel: SuperTaNda,
recorded by a platform admin); a study role in its study, as governance says
(`register_study_roles`, called when governance is ready, so this module imports nothing above
it). Everything else composes these functions.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from operator import or_

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from . import roles
from .models import Channel, Membership, SuperTaNda
from .roles import (
    CHANNEL,
    CHANNEL_ROLES,
    OWNER,
    PERMISSIONS,
    PLATFORM_ADMIN,
    STAFF,
    STUDY,
    STUDY_ROLES,
    SUPER_TA,
    SUPER_TA_WITH_NDA,
    TA,
    TEACHER,
    is_platform_admin,
    roles_with,
)

# governance's answer to "does this user hold one of these study roles, in this study (or in any
# study when it is None)?"; set by register_study_roles.
_study_roles_held: Callable[[object, frozenset, object], bool] | None = None


def register_study_roles(held: Callable[[object, frozenset, object], bool]) -> None:
    global _study_roles_held
    _study_roles_held = held


def _active(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def _flag_roles(user) -> frozenset[str]:
    """The roles held through a flag on the user, which hold their permissions everywhere."""
    held = set()
    if is_platform_admin(user):
        held.add(PLATFORM_ADMIN)
    if user.is_staff:
        held.add(STAFF)
    return frozenset(held)


def can_everywhere(user, permission: str) -> bool:
    """Whether the user holds `permission` in every channel and study at once (through the
    superuser or staff flag), not only in some: whether a list needs no filter by scope."""
    return _active(user) and bool(roles_with(permission) & _flag_roles(user))


def can(user, permission: str, scope=None) -> bool:
    """Whether the user holds `permission` (a name in channels_app.roles.PERMISSIONS; any other
    name raises): in `scope` (the Channel, or its id, for a channel permission; the Study for a
    study permission), or somewhere when `scope` is None. A platform permission has no scope."""
    holders = roles_with(permission)
    if not _active(user):
        return False
    if holders & _flag_roles(user):
        return True
    kind = PERMISSIONS[permission].scope
    if kind == CHANNEL:
        channels = Channel.objects.filter(channels_q(user, holders & CHANNEL_ROLES))
        if scope is not None:
            channels = channels.filter(pk=getattr(scope, "pk", scope))
        return channels.exists()
    if kind == STUDY and holders & STUDY_ROLES:
        if _study_roles_held is None:
            raise ImproperlyConfigured("no app registered who holds study roles (governance does when ready)")
        return _study_roles_held(user, holders & STUDY_ROLES, scope)
    return False


def channels_where(user, permission: str) -> QuerySet[Channel]:
    """The channels in which the user holds `permission` (every channel for a platform-wide holder)."""
    if not _active(user):
        return Channel.objects.none()
    if can_everywhere(user, permission):
        return Channel.objects.all()
    return Channel.objects.filter(channels_q(user, roles_with(permission) & CHANNEL_ROLES))


def channel_ids(user, permission: str) -> frozenset[int]:
    """Ids of the channels in which the user holds `permission`."""
    return frozenset(channels_where(user, permission).values_list("pk", flat=True))


def permitted_q(user, permission: str, channel_ref: str = "channel") -> Q:
    """A filter on rows whose channel (at `channel_ref`; "" for Channel itself) grants the user
    `permission`. Safe to OR with other conditions: a platform-wide holder gets a condition every
    row meets, not an empty Q (which an OR would drop)."""
    field = channel_ref or "pk"
    if not _active(user):
        return Q(pk__in=[])
    if can_everywhere(user, permission):
        return Q(**{f"{field}__isnull": False})
    channels = Channel.objects.filter(channels_q(user, roles_with(permission) & CHANNEL_ROLES))
    return Q(**{f"{field}__in": channels.values("pk")})


def _nda_on_file(user, channel_ref: str = "channel") -> Exists:
    return Exists(SuperTaNda.objects.filter(user=user, channel=OuterRef(channel_ref)))


def _super_ta_with_nda_channels(user):
    """Channel ids (a subquery) where the user is a Super TA with an NDA on file."""
    return Membership.objects.filter(user=user, role=SUPER_TA).filter(_nda_on_file(user)).values("channel")


def channels_q(user, roles) -> Q:
    """A filter on Channel for the channels in which the user holds one of the channel `roles`
    (the flag roles are not special-cased here: `can` and `channels_where` do that)."""
    roles = frozenset(roles)
    conditions = []
    if OWNER in roles:
        conditions.append(Q(owner=user))
    member_roles = roles - {OWNER, SUPER_TA_WITH_NDA}
    if member_roles:
        conditions.append(
            Q(pk__in=Membership.objects.filter(user=user, role__in=member_roles).values("channel"))
        )
    if SUPER_TA_WITH_NDA in roles:
        conditions.append(Q(pk__in=_super_ta_with_nda_channels(user)))
    return reduce(or_, conditions) if conditions else Q(pk__in=[])


def quota_class(user) -> str:
    """The user's quota class: the highest among the roles they hold anywhere (roles.quota_class;
    the platform admin's needs no query of the channels)."""
    return roles.quota_class(user, set() if is_platform_admin(user) else roles_anywhere(user))


def roles_anywhere(user) -> set[str]:
    """The channel roles the user holds in any channel, for the quota class (the NDA is left out:
    it changes what a Super TA reads, not their quota)."""
    held = set(Membership.objects.filter(user=user).values_list("role", flat=True).distinct())
    if Channel.objects.filter(owner=user).exists():
        held.add(OWNER)
    return held


def teaching_staff_q(user_ref: str = "user", channel_ref: str = "channel") -> Q:
    """Rows written by the channel's teaching staff (owner, teachers, TAs, Super TAs): the
    students' consent framework does not cover them."""
    staff = Membership.objects.filter(
        channel=OuterRef(channel_ref), user=OuterRef(user_ref), role__in=[TEACHER, TA, SUPER_TA]
    )
    return Q(**{user_ref: F(f"{channel_ref}__owner")}) | Q(Exists(staff))
