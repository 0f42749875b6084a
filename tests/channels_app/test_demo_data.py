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
    assert set(users.values_list("username", flat=True)) >= {
        "admin",
        "teacher",
        "ta",
        "superta",
        "student1",
        "student2",
        "researcher",
    }
    assert users.get(username="admin").is_superuser
    assert users.get(username="student1").check_password("demo-pass-xyz")
    course = Channel.objects.get(slug="demo-course")
    assert course.deep_research_enabled and course.owner.username == "teacher"
    roles = dict(course.memberships.values_list("user__username", "role"))
    assert roles == {
        "teacher": "teacher",
        "ta": "ta",
        "superta": "super_ta",
        "student1": "student",
        "student2": "student",
    }
    assert Channel.objects.get(slug="demo-course-off").deep_research_enabled is False


def test_demo_data_refuses_with_debug_off_unless_forced(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="--force"):
        call_command("load_demo_data")
    assert get_user_model().objects.filter(username="admin").count() == 0
    call_command("load_demo_data", "--force")
    assert get_user_model().objects.filter(username="admin").exists()


def test_demo_materials_are_indexed_once_and_answer_questions_with_file_and_page(db, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from agent.tools import REGISTRY, ToolContext
    from channels_app.models import Material, MaterialChunk
    from research.services import assistant_policy

    settings.DEBUG = True
    call_command("load_demo_data")
    course = Channel.objects.get(slug="demo-course")
    materials = {m.original_name: m for m in Material.objects.filter(channel=course)}
    assert set(materials) == {
        "EDS101_week1-4_handout.pdf",
        "EDS101_資料倫理與IRB講義.docx",
        "EDS101_Bloom與RAG投影片.pptx",
    }
    assert all(m.status == "ready" and m.chunk_count > 0 for m in materials.values()), [
        (m.original_name, m.error) for m in materials.values()
    ]
    chunks = MaterialChunk.objects.count()

    call_command("load_demo_data")  # the content hash makes the second run a no-op
    assert Material.objects.count() == 3 and MaterialChunk.objects.count() == chunks

    box = REGISTRY.bind(ToolContext(user_id=course.owner_id, channel_id=course.pk))
    english = box.call(
        "search_channel_materials", {"query": "What does an IRB check before data collection?"}
    )
    assert english.sources[0].locator == "EDS101_week1-4_handout.pdf p. 3"
    chinese = box.call("search_channel_materials", {"query": "去識別化要移除哪些資料？"})
    assert chinese.sources[0].locator == "EDS101_資料倫理與IRB講義.docx § 4"
    assert "學號" in chinese.sources[0].text
    slides = box.call("search_channel_materials", {"query": "reciprocal rank fusion"})
    assert slides.sources[0].locator == "EDS101_Bloom與RAG投影片.pptx slide 4"

    # A passage links to its page in the material; a research's context carries the channel's
    # slug for that link, a bare context has it looked up.
    handout = materials["EDS101_week1-4_handout.pdf"]
    assert (
        english.sources[0].url
        == reverse("material_detail", kwargs={"slug": "demo-course", "pk": handout.pk}) + "#p3"
    )
    research_box = REGISTRY.bind(
        assistant_policy.tool_context(user_id=course.owner_id, channel=course, language="en")
    )
    with CaptureQueriesContext(connection) as queries:
        again = research_box.call(
            "search_channel_materials", {"query": "What does an IRB check before data collection?"}
        )
    assert again.sources[0].url == english.sources[0].url
    assert not any('FROM "channels_app_channel"' in query["sql"] for query in queries.captured_queries)
