"""get_internal_docs shows each user only the platform documents they may read, decided on the
server from the research's user and channel (ToolContext), never from tool arguments."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from agent.tools import ToolContext
from catalogue.models import PlatformDocument
from tests.catalogue.conftest import call
from tests.support.factories import make_channel, make_user


@pytest.fixture
def docs(personas):
    other_channel = make_channel(personas.other_teacher, slug="course-b-docs")
    make = PlatformDocument.objects.create
    return {
        "public": make(
            slug="guide",
            title="Deep Research guide",
            body="How the rubric and quota work for everyone.",
            visibility="public",
        ),
        "mine": make(
            slug="rubric-a",
            title="Course A rubric",
            body="The rubric for course A projects.",
            visibility="channel",
            channel=personas.channel,
        ),
        "theirs": make(
            slug="rubric-b",
            title="Course B rubric",
            body="The rubric for course B projects.",
            visibility="channel",
            channel=other_channel,
        ),
        "staff": make(
            slug="staff-rubric",
            title="Grading rubric moderation",
            body="Staff-only rubric moderation steps.",
            visibility="staff",
        ),
    }


def titles(user, channel, query="rubric") -> set[str]:
    result = call("get_internal_docs", ToolContext(user_id=user.pk, channel_id=channel.pk), query=query)
    assert result.ok, result.error
    return {s.title for s in result.sources}


def test_a_student_sees_public_and_own_channel_documents(personas, docs):
    assert titles(personas.student, personas.channel) == {"Deep Research guide", "Course A rubric"}


def test_an_outsider_sees_only_public_documents_even_in_a_channel_context(personas, docs):
    assert titles(personas.outsider, personas.channel) == {"Deep Research guide"}


def test_a_research_in_one_channel_never_reads_another_channels_documents(personas, docs):
    # other_super_ta belongs to course B only; in course A's context they get none of B's documents either.
    assert titles(personas.other_super_ta, personas.channel) == {"Deep Research guide"}
    assert titles(personas.other_teacher, docs["theirs"].channel) == {
        "Deep Research guide",
        "Course B rubric",
    }


def test_staff_documents_need_staff(personas, docs):
    staff = make_user("ops", staff=True)
    assert "Grading rubric moderation" in titles(staff, personas.channel)
    assert "Grading rubric moderation" in titles(personas.admin, personas.channel)
    assert "Grading rubric moderation" not in titles(personas.student, personas.channel)


def test_an_inactive_user_gets_nothing(personas, docs):
    personas.student.is_active = False
    personas.student.save()
    result = call(
        "get_internal_docs",
        ToolContext(user_id=personas.student.pk, channel_id=personas.channel.pk),
        query="rubric",
    )
    assert result.error == "the asking user no longer exists or is inactive"


def test_sources_are_internal_link_to_the_document_page_and_show_the_matching_passage(personas, docs):
    result = call(
        "get_internal_docs",
        ToolContext(user_id=personas.student.pk, channel_id=personas.channel.pk),
        query="course A",
    )
    source = next(s for s in result.sources if s.title == "Course A rubric")
    assert source.tier == "internal" and source.source_tool == "get_internal_docs"
    assert source.url == "/catalogue/documents/rubric-a/"
    assert source.locator == "uedu://catalogue/document/rubric-a"
    assert "rubric for course A" in source.snippet
    assert source.meta == {
        "origin": "uedu",
        "kind": "platform_document",
        "is_demo": False,
        "visibility": "channel",
    }


def test_chinese_queries_match_inside_longer_text(personas):
    PlatformDocument.objects.create(
        slug="zh", title="期末專題規範", body="期末專題以小組進行，需分析學習資料集。", visibility="public"
    )
    assert titles(personas.student, personas.channel, query="專題的分析") == {"期末專題規範"}


def test_the_document_page_checks_the_same_visibility(client, personas, docs):
    client.force_login(personas.outsider)
    assert client.get("/catalogue/documents/rubric-a/").status_code == 404
    assert client.get("/catalogue/documents/guide/").status_code == 200
    client.force_login(personas.student)
    page = client.get("/catalogue/documents/rubric-a/")
    assert page.status_code == 200 and "The rubric for course A projects." in page.content.decode()
    assert client.get("/catalogue/documents/staff-rubric/").status_code == 404


def test_a_channel_document_without_a_channel_is_refused_by_the_database(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        PlatformDocument.objects.create(slug="orphan", title="x", body="y", visibility="channel")
    assert not PlatformDocument.objects.filter(slug="orphan").exists()
