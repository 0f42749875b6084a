"""Reads about channels and who belongs to them."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from . import access
from .models import Channel, Material, Membership
from .roles import is_platform_admin


def channels_for_user(user) -> QuerySet[Channel]:
    """Channels the user belongs to (as owner or member); admins see every channel."""
    if is_platform_admin(user):
        return Channel.objects.all()
    return Channel.objects.filter(Q(owner=user) | Q(memberships__user=user)).distinct()


def membership_role(user, channel: Channel) -> str | None:
    """The user's role in the channel, 'teacher' for its owner, None for outsiders."""
    return access.role_in(user, channel)


def can_manage_channel(user, channel: Channel) -> bool:
    """Channel settings and materials (upload, delete, re-index): the channel's teachers (its
    owner or a teacher member) and platform admins."""
    if not user.is_authenticated:
        return False
    return is_platform_admin(user) or membership_role(user, channel) == Membership.Role.TEACHER


def is_member(user, channel: Channel) -> bool:
    """Members read the channel's chat, passages and files (citations link there)."""
    if not user.is_authenticated:
        return False
    return is_platform_admin(user) or membership_role(user, channel) is not None


# --------------------------------------------------------------------------- materials


def manageable_channel_ids(user) -> set[int]:
    if not user.is_authenticated:
        return set()
    if is_platform_admin(user):
        return set(Channel.objects.values_list("pk", flat=True))
    return set(access.channel_ids(user, {access.OWNER, access.TEACHER}))


def channel_materials(channel: Channel) -> QuerySet[Material]:
    return (
        Material.objects.filter(channel=channel).select_related("uploaded_by").order_by("-created_at", "-id")
    )


def material_pages(material: Material) -> list[tuple[int, str]]:
    """The indexed text of a material, page by page, with the chunk overlaps removed."""
    pages: dict[int, str] = {}
    for page, text in material.chunks.order_by("ordinal").values_list("page", "text"):
        pages[page] = _merge_overlap(pages[page], text) if page in pages else text
    return list(pages.items())


def _merge_overlap(previous: str, following: str) -> str:
    # A chunk starts with the whole sentences its predecessor ended with (see channels_app.chunking),
    # so the overlap is a prefix of `following` that ends a sentence and is a suffix of `previous`.
    # (A chunk's text is stripped, so a carried paragraph's final newline is not in `previous`.)
    for end in range(min(len(previous), len(following)), 0, -1):
        at_boundary = following[end - 1] in ".!?;。！？；」』”’）)" or following[end : end + 1] == "\n"
        if at_boundary and previous.endswith(following[:end]):
            return previous + following[end:]
    separator = "" if previous.endswith(tuple("。！？；")) else " "
    return previous + separator + following
