"""Reads about channels and their materials. Who may do what is channels_app.access.can."""

from __future__ import annotations

from django.db.models import QuerySet

from .access import channels_where
from .models import Channel, Material
from .roles import CHANNEL_USE


def channels_for_user(user) -> QuerySet[Channel]:
    """The channels the user may open (channel.use: members, the owner; every channel for admins)."""
    return channels_where(user, CHANNEL_USE)


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
    # A chunk starts with the whole sentences its predecessor ended with (see materials.chunking),
    # so the overlap is a prefix of `following` that ends a sentence and is a suffix of `previous`.
    # (A chunk's text is stripped, so a carried paragraph's final newline is not in `previous`.)
    for end in range(min(len(previous), len(following)), 0, -1):
        at_boundary = following[end - 1] in ".!?;。！？；」』”’）)" or following[end : end + 1] == "\n"
        if at_boundary and previous.endswith(following[:end]):
            return previous + following[end:]
    separator = "" if previous.endswith(tuple("。！？；")) else " "
    return previous + separator + following
