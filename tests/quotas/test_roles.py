import pytest

from channels_app.models import Membership
from quotas.roles import resolve_role
from tests.support.factories import add_member, make_channel, make_user


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.UEDU_DEEP_RESEARCH_QUOTA = {"admin": None, "teacher": None, "ta": 40, "student": 20}


def test_platform_admin_is_unlimited_even_when_also_a_student(db):
    admin = make_user(superuser=True)
    add_member(make_channel(), admin, Membership.Role.STUDENT)
    role = resolve_role(admin)
    assert (role.role, role.daily_limit, role.unlimited) == ("admin", None, True)


def test_channel_owner_is_a_teacher(db):
    owner = make_user()
    make_channel(owner)
    assert resolve_role(owner).role == "teacher"
    assert resolve_role(owner).unlimited


def test_teacher_role_in_one_channel_outranks_ta_in_another(db):
    user = make_user()
    add_member(make_channel(), user, Membership.Role.TA)
    add_member(make_channel(), user, Membership.Role.TEACHER)
    assert resolve_role(user).role == "teacher"


@pytest.mark.parametrize("membership_role", [Membership.Role.TA, Membership.Role.SUPER_TA])
def test_teaching_assistants_get_forty(db, membership_role):
    user = make_user()
    add_member(make_channel(), user, Membership.Role.STUDENT)
    add_member(make_channel(), user, membership_role)
    assert (resolve_role(user).role, resolve_role(user).daily_limit) == ("ta", 40)


def test_students_and_users_without_channels_get_twenty(db):
    student = add_member(make_channel())
    loner = make_user()
    assert (resolve_role(student).role, resolve_role(student).daily_limit) == ("student", 20)
    assert resolve_role(loner).daily_limit == 20


def test_limits_come_from_settings(db, settings):
    settings.UEDU_DEEP_RESEARCH_QUOTA = {"admin": None, "teacher": None, "ta": 7, "student": 3}
    user = make_user()
    add_member(make_channel(), user, Membership.Role.TA)
    assert resolve_role(user).daily_limit == 7
