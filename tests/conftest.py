"""Shared fixtures: the personas of a course channel (healthchecks-style owner/member/outsider)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from channels_app.models import Channel, Membership
from tests.support.factories import add_member, make_channel, make_user
from tests.support.material_fixtures import celery_eager, fake_embeddings, index_file  # noqa: F401  (fixtures)


@dataclass
class Personas:
    channel: Channel
    teacher: object
    ta: object
    super_ta: object
    student: object
    other_student: object
    outsider: object
    other_teacher: object
    other_super_ta: object
    admin: object


@pytest.fixture
def personas(db) -> Personas:
    teacher = make_user("t_owner")
    channel = make_channel(teacher, slug="course-a")
    other_teacher = make_user("t_other")
    other_channel = make_channel(other_teacher, slug="course-b")
    return Personas(
        channel=channel,
        teacher=teacher,
        ta=add_member(channel, make_user("ta_a"), Membership.Role.TA),
        super_ta=add_member(channel, make_user("sta_a"), Membership.Role.SUPER_TA),
        student=add_member(channel, make_user("s_alice")),
        other_student=add_member(channel, make_user("s_bob")),
        outsider=make_user("outsider"),
        other_teacher=other_teacher,
        other_super_ta=add_member(other_channel, make_user("sta_b"), Membership.Role.SUPER_TA),
        admin=make_user("root", superuser=True),
    )
