"""The role table (channels_app.roles): one row per role, where it is held, the quota class it
gives and the permissions it grants; the quota settings, docs/security.md and every check key off
it, and every check asks channels_app.access.can."""

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
    "materials",
    "catalogue",
    "quotas",
    "agent",
    "research",
    "chat",
    "governance",
    "evaluation",
)
# The columns of docs/security.md's permission table, in its order.
COLUMNS = (
    roles.PLATFORM_ADMIN,
    roles.STAFF,
    roles.OWNER,
    roles.TEACHER,
    roles.SUPER_TA_WITH_NDA,
    roles.SUPER_TA,
    roles.TA,
    roles.STUDENT,
    roles.RESEARCHER,
)


def test_the_table_gives_each_role_its_quota_class_and_content_access():
    table = {name: (role.quota_class, role.reads_content) for name, role in roles.ROLES.items()}
    assert table == {
        "admin": ("admin", True),
        "staff": (None, False),
        "owner": ("teacher", True),
        "teacher": ("teacher", False),
        "super_ta+nda": ("ta", True),
        "super_ta": ("ta", False),
        "ta": ("ta", False),
        "student": ("student", False),
        "researcher": (None, False),
    }
    assert roles.CONTENT_ROLES == {"owner", "super_ta+nda"}
    assert set(Membership.Role.values) <= set(roles.ROLES)
    assert set(COLUMNS) == set(roles.ROLES)


def test_the_owner_and_a_teacher_member_manage_the_channel_and_only_the_owner_its_people_and_content():
    """The rule that settles the page-versus-admin question: co-teachers manage settings and
    materials; members, consent periods and students' research are the owner's."""
    owner, teacher = roles.ROLES[roles.OWNER].permissions, roles.ROLES[roles.TEACHER].permissions
    shared = {roles.CHANNEL_CONFIGURE, roles.MATERIALS_MANAGE}
    owners_alone = {
        roles.MEMBERS_MANAGE,
        roles.CONSENT_READ_PERIODS,
        roles.RESEARCH_READ_RESULTS,
        roles.RESEARCH_REVIEW,
        roles.CONFLICTS_DECIDE,
    }
    assert shared <= owner and shared <= teacher
    assert owners_alone <= owner and not owners_alone & teacher


def test_an_undeclared_permission_fails_loudly(db):
    with pytest.raises(KeyError, match="materials.upload"):
        access.can(make_user(), "materials.upload")


def test_docs_security_shows_the_role_table_as_it_is():
    page = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    start, end = "<!-- role table: start -->", "<!-- role table: end -->"
    assert start in page and end in page, f"docs/security.md lost its {start} … {end} markers"
    shown = page.split(start, 1)[1].split(end, 1)[0].strip()
    expected = role_table_markdown()
    assert shown == expected, (
        "docs/security.md's role table differs from channels_app/roles.py; paste:\n" + expected
    )


def role_table_markdown() -> str:
    """docs/security.md's tables, rendered from channels_app.roles."""
    lines = [
        "| role | held through | quota class |",
        "|---|---|---|",
        *(
            f"| `{name}` | {roles.ROLES[name].held_through} | {roles.ROLES[name].quota_class or '—'} |"
            for name in COLUMNS
        ),
        "",
        "| permission | held in | allows | " + " | ".join(f"`{name}`" for name in COLUMNS) + " |",
        "|---|---|---|" + "---|" * len(COLUMNS),
    ]
    for name, permission in roles.PERMISSIONS.items():
        cells = " | ".join("✓" if name in roles.ROLES[role].permissions else "" for role in COLUMNS)
        lines.append(f"| `{name}` | {permission.scope} | {permission.allows} | {cells} |")
    return "\n".join(lines)


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
    reads = roles.RESEARCH_READ_RESULTS
    assert not access.can(super_ta, reads, channel) and resolve_role(super_ta).role == "ta"
    SuperTaNda.objects.create(user=super_ta, channel=channel, signed_on=date(2025, 9, 1))
    assert access.can(super_ta, reads, channel) and resolve_role(super_ta).role == "ta"
    assert not access.can(super_ta, reads, make_channel())  # the NDA is for that channel only


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


def test_every_check_asks_can_and_only_the_role_table_tests_for_the_platform_admin():
    """`is_platform_admin` is called only by channels_app.roles and channels_app.access (`can` and
    the quota class); every other module asks `can(user, permission, scope)`."""
    allowed = {ROOT / "channels_app" / "roles.py", ROOT / "channels_app" / "access.py"}
    callers = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if path in allowed or "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                name = getattr(node, "id", None) or getattr(node, "attr", None)
                if isinstance(node, (ast.Name, ast.Attribute)) and name == "is_platform_admin":
                    callers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not callers, f"checks that bypass channels_app.access.can: {callers}"
