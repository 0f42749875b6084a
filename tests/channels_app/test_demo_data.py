import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from channels_app.models import Channel, Membership


def _counts():
    return (get_user_model().objects.count(), Channel.objects.count(), Membership.objects.count())


def test_demo_data_is_idempotent_and_complete(db, settings, monkeypatch):
    settings.DEBUG = True
    monkeypatch.setenv("DEMO_PASSWORD", "demo-pass-xyz")
    call_command("load_demo_data")
    first = _counts()
    call_command("load_demo_data")
    assert _counts() == first

    users = get_user_model().objects
    assert set(users.values_list("username", flat=True)) >= {"admin", "teacher", "ta", "superta", "student1", "student2", "researcher"}
    assert users.get(username="admin").is_superuser
    assert users.get(username="student1").check_password("demo-pass-xyz")
    course = Channel.objects.get(slug="demo-course")
    assert course.deep_research_enabled and course.owner.username == "teacher"
    roles = dict(course.memberships.values_list("user__username", "role"))
    assert roles == {"teacher": "teacher", "ta": "ta", "superta": "super_ta", "student1": "student", "student2": "student"}
    assert Channel.objects.get(slug="demo-course-off").deep_research_enabled is False


def test_demo_data_refuses_with_debug_off_unless_forced(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="--force"):
        call_command("load_demo_data")
    assert get_user_model().objects.filter(username="admin").count() == 0
    call_command("load_demo_data", "--force")
    assert get_user_model().objects.filter(username="admin").exists()
