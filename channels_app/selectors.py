"""Reads about channels and who belongs to them."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from .models import Channel, Membership


def channels_for_user(user) -> QuerySet[Channel]:
    """Channels the user belongs to (as owner or member); admins see every channel."""
    if user.is_superuser:
        return Channel.objects.all()
    return Channel.objects.filter(Q(owner=user) | Q(memberships__user=user)).distinct()


def membership_role(user, channel: Channel) -> str | None:
    """The user's role in the channel, 'teacher' for its owner, None for outsiders."""
    if channel.owner_id == user.pk:
        return Membership.Role.TEACHER
    return Membership.objects.filter(user=user, channel=channel).values_list("role", flat=True).first()


def can_manage_channel(user, channel: Channel) -> bool:
    """Channel settings: the channel's teachers (its owner or a teacher member) and platform admins."""
    if not user.is_authenticated:
        return False
    return user.is_superuser or membership_role(user, channel) == Membership.Role.TEACHER


def is_member(user, channel: Channel) -> bool:
    if not user.is_authenticated:
        return False
    return user.is_superuser or membership_role(user, channel) is not None
