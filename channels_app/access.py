"""Who holds which role in a channel, and who may read students' research content: the one place
the pages, the API, the streams, the review queue, the admin and the quota roles ask.

The roles, the quota class each gives and whether it reads students' content are one table,
channels_app.roles. Roles in a channel:

- platform admin: an active superuser (`is_platform_admin`); everything everywhere;
- OWNER: the channel's owner, its accountable teacher (a "teacher" membership without ownership
  manages the channel's settings and materials, but does not read students' research);
- SUPER_TA: a Super TA membership;
- TA, STUDENT: memberships.

Students' research content (questions, answers, steps, the review queue) is readable by its
author, the channel's owner, platform admins, and a Super TA *only while a signed NDA is on file
for that channel* (SuperTaNda, recorded by a platform admin). Without the NDA a Super TA is an
ordinary TA: operational records only. That rule is written once, in `content_reader_q` and
CONTENT_ROLES (from the role table), and everything else composes them.
"""

from __future__ import annotations

from functools import reduce
from operator import or_

from django.db.models import Exists, F, OuterRef, Q

from .models import Channel, Membership, SuperTaNda
from .roles import (  # noqa: F401  (the role names, re-exported for the modules that compose access)
    CONTENT_ROLES,
    OWNER,
    STUDENT,
    SUPER_TA,
    SUPER_TA_WITH_NDA,
    TA,
    TEACHER,
    is_platform_admin,
)


def _nda_on_file(user, channel_ref: str = "channel") -> Exists:
    return Exists(SuperTaNda.objects.filter(user=user, channel=OuterRef(channel_ref)))


def _super_ta_with_nda_channels(user):
    """Channel ids (a subquery) where the user is a Super TA with an NDA on file."""
    return Membership.objects.filter(user=user, role=SUPER_TA).filter(_nda_on_file(user)).values("channel")


def channels_q(user, roles) -> Q:
    """A filter on Channel for the channels in which the user holds one of `roles` (platform
    admins are not special-cased here)."""
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


def channel_ids(user, roles) -> frozenset[int]:
    """Ids of the channels in which the user holds one of `roles` (every channel for admins)."""
    roles = frozenset(roles)
    if not user.is_authenticated or not user.is_active or not roles:
        return frozenset()
    return frozenset(Channel.objects.filter(channels_q(user, roles)).values_list("pk", flat=True))


def content_reader_q(user, channel_ref: str = "channel") -> Q:
    """Rows (with a channel at `channel_ref`) whose students' content the user may read as staff:
    channel owner, or Super TA with an NDA on file for that channel."""
    super_ta = Membership.objects.filter(channel=OuterRef(channel_ref), user=user, role=SUPER_TA)
    return Q(**{f"{channel_ref}__owner": user}) | (Q(Exists(super_ta)) & Q(_nda_on_file(user, channel_ref)))


def reads_content_in(user, channel: Channel) -> bool:
    if not user.is_authenticated:
        return False
    if is_platform_admin(user):
        return True
    return Channel.objects.filter(channels_q(user, CONTENT_ROLES), pk=channel.pk).exists()


def reads_content_anywhere(user) -> bool:
    """Owns a channel, is a Super TA with an NDA somewhere, or is a platform admin."""
    if not user.is_authenticated:
        return False
    return is_platform_admin(user) or Channel.objects.filter(channels_q(user, CONTENT_ROLES)).exists()


def sees_student_names(user, channel: Channel) -> bool:
    """Whether lists of a channel's students' questions (the dashboard and its CSV) name the
    students: for platform admins and the channel's owner, who answer for the course and its
    members. A Super TA with an NDA reads the same questions under a pseudonym per student: the
    NDA covers reading the students' research, and a period's questions side by side, by person,
    are a profile of each student that reviewing needs no name for."""
    if not user.is_authenticated:
        return False
    return is_platform_admin(user) or channel.owner_id == user.pk


def has_nda(user, channel: Channel) -> bool:
    return SuperTaNda.objects.filter(user=user, channel=channel).exists()


def role_in(user, channel: Channel) -> str | None:
    """The user's role in the channel, 'teacher' for its owner, None for outsiders."""
    if channel.owner_id == user.pk:
        return TEACHER
    return Membership.objects.filter(user=user, channel=channel).values_list("role", flat=True).first()


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
