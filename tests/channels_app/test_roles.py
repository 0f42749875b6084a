"""The role table (channels_app.roles): one row per role, the quota class it gives and whether it
reads students' content; the quota settings and every platform-admin check key off it."""

from __future__ import annotations

import ast
from datetime import date
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from channels_app import access, roles
from channels_app.models import Membership, SuperTaNda
from quotas.roles import check_settings, resolve_role
from tests.support.factories import add_member, make_channel, make_user

ROOT = Path(__file__).resolve().parents[2]
APPS = (
    "uedu_dr",
    "channels_app",
    "catalogue",
    "quotas",
    "agent",
    "research",
    "chat",
    "governance",
    "evaluation",
)


def test_the_table_gives_each_role_its_quota_class_and_content_access():
    table = {name: (role.quota_class, role.reads_content) for name, role in roles.ROLES.items()}
    assert table == {
        "admin": ("admin", True),
        "owner": ("teacher", True),
        "teacher": ("teacher", False),
        "super_ta+nda": ("ta", True),
        "super_ta": ("ta", False),
        "ta": ("ta", False),
        "student": ("student", False),
    }
    assert roles.CONTENT_ROLES == access.CONTENT_ROLES == {"owner", "super_ta+nda"}
    assert set(Membership.Role.values) <= set(roles.ROLES)


def test_a_membership_role_without_a_row_stops_the_start():
    roles.check_membership_roles(Membership.Role.values)
    with pytest.raises(ImproperlyConfigured, match="co_teacher"):
        roles.check_membership_roles([*Membership.Role.values, "co_teacher"])


def test_quota_settings_keyed_by_anything_but_the_quota_classes_stop_the_start(settings):
    check_settings()  # the project's own settings
    wrong = {
        "UEDU_DEEP_RESEARCH_QUOTA": {"admin": None, "teacher": None, "ta": 40, "student": 20},
        "UEDU_CHAT_DAILY_QUOTA": {"admin": None, "teacher": 500, "assistant": 300, "student": 150},
    }
    with pytest.raises(ImproperlyConfigured, match="UEDU_CHAT_DAILY_QUOTA"):
        check_settings(wrong)


def test_a_super_ta_reads_content_only_with_an_nda_and_keeps_the_ta_quota_either_way(db):
    channel = make_channel()
    super_ta = add_member(channel, make_user(), Membership.Role.SUPER_TA)
    assert not access.reads_content_in(super_ta, channel) and resolve_role(super_ta).role == "ta"
    SuperTaNda.objects.create(user=super_ta, channel=channel, signed_on=date(2025, 9, 1))
    assert access.reads_content_in(super_ta, channel) and resolve_role(super_ta).role == "ta"


def test_an_inactive_superuser_is_no_platform_admin(db):
    admin = make_user(superuser=True)
    assert roles.is_platform_admin(admin)
    admin.is_active = False
    admin.save(update_fields=["is_active"])
    assert not roles.is_platform_admin(admin)
    assert admin.__class__.objects.filter(roles.platform_admins_q(), pk=admin.pk).count() == 0


def test_every_platform_admin_check_goes_through_is_platform_admin():
    """No `something.is_superuser` read outside channels_app/roles.py (ORM lookups such as
    `user__is_superuser=` are not reads of the flag and are not counted)."""
    bare = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if path == ROOT / "channels_app" / "roles.py" or "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr == "is_superuser":
                    bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bare, f"platform-admin checks that bypass channels_app.roles.is_platform_admin: {bare}"
