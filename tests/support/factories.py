"""Small, explicit factories for test rows (no factory library: the models are few)."""

from __future__ import annotations

import itertools

from django.contrib.auth import get_user_model

from channels_app.models import Channel, Membership

_counter = itertools.count(1)
PASSWORD = "pw-for-tests-1"


def make_user(username: str | None = None, *, superuser: bool = False, staff: bool = False):
    username = username or f"user{next(_counter)}"
    user = get_user_model().objects.create_user(
        username=username,
        password=PASSWORD,
        email=f"{username}@example.test",
        is_superuser=superuser,
        is_staff=staff or superuser,
    )
    return user


def make_channel(owner=None, *, slug: str | None = None, deep_research: bool = True, **fields) -> Channel:
    owner = owner or make_user()
    slug = slug or f"channel-{next(_counter)}"
    channel = Channel.objects.create(
        slug=slug, name=f"Course {slug}", owner=owner, deep_research_enabled=deep_research, **fields
    )
    Membership.objects.create(user=owner, channel=channel, role=Membership.Role.TEACHER)
    return channel


def add_member(channel: Channel, user=None, role: str = Membership.Role.STUDENT):
    user = user or make_user()
    Membership.objects.create(user=user, channel=channel, role=role)
    return user
