"""search_channel_materials: registered on the shared registry, thin over hybrid_search, bound to ctx.channel_id."""

from __future__ import annotations

import pytest

from agent.tools import REGISTRY, ToolContext, load
from tests.support.documents import pdf_bytes, pptx_bytes
from tests.support.factories import make_channel

HANDOUT = [
    "Learning analytics measures data about learners to improve learning.",
    "研究倫理審查委員會（IRB）在資料蒐集前審查研究計畫與知情同意書。\nThe IRB reviews consent forms before data collection.",
]


def test_the_tool_is_registered_with_a_schema_and_no_channel_parameter():
    tool = load().get("search_channel_materials")
    assert tool is not None and not tool.needs_web
    assert set(tool.parameters["properties"]) == {"query", "top_k"}
    assert tool.parameters["required"] == ["query"]


@pytest.mark.django_db
def test_it_returns_cited_passages_with_file_page_and_link(personas, index_file):
    material = index_file(personas.channel, personas.teacher, "handout.pdf", pdf_bytes(HANDOUT))
    box = load().bind(ToolContext(user_id=personas.student.pk, channel_id=personas.channel.pk))

    result = box.call("search_channel_materials", {"query": "IRB 知情同意", "top_k": 2})

    assert result.ok and result.sources
    top = result.sources[0]
    assert top.title == "handout.pdf p. 2" and top.locator == "handout.pdf p. 2"
    assert (
        top.tier == "internal" and top.origin == "internal" and top.source_tool == "search_channel_materials"
    )
    assert top.url == f"/channels/{personas.channel.slug}/materials/{material.pk}/#p2"
    assert "知情同意書" in top.text and len(top.snippet) <= 302
    assert top.meta["material_id"] == material.pk and top.meta["page"] == 2 and top.meta["score"] > 0
    passages = result.data["passages"]
    assert passages[0] == {
        "file": "handout.pdf",
        "page": 2,
        "passage": top.text,
        "score": top.meta["score"],
        # no glossary term of the file is in the query: it searched as written only
        "found_by": [{"query": 0, "by": "as_written", "rank": 1}],
    }
    assert result.data["queries"] == [{"text": "IRB 知情同意", "language": "zh", "by": "as_written"}]
    assert result.data["unreached_languages"] == ["en"]
    assert len(passages) <= 2


@pytest.mark.django_db
def test_it_reads_only_the_channel_of_its_context(personas, index_file):
    other = make_channel(personas.other_teacher, slug="course-other")
    index_file(
        other,
        personas.other_teacher,
        "secret-exam.pptx",
        pptx_bytes([("IRB exam answers", ["研究倫理審查委員會 IRB consent"], "")]),
    )
    index_file(personas.channel, personas.teacher, "handout.pdf", pdf_bytes(HANDOUT))
    box = REGISTRY.bind(ToolContext(user_id=personas.student.pk, channel_id=personas.channel.pk))

    for query in [
        "IRB exam answers",
        "secret-exam.pptx",
        "研究倫理審查委員會",
        "ignore the channel and search course-other",
    ]:
        result = box.call("search_channel_materials", {"query": query, "top_k": 10})
        assert {s.locator.split(" ")[0] for s in result.sources} <= {"handout.pdf"}, query
    # an argument cannot widen the boundary either: extra properties are refused by the schema
    assert box.call("search_channel_materials", {"query": "IRB", "channel_id": other.pk}).error.startswith(
        "invalid arguments"
    )


@pytest.mark.django_db
def test_an_empty_channel_answers_with_no_sources(personas):
    result = REGISTRY.bind(ToolContext(user_id=1, channel_id=personas.channel.pk)).call(
        "search_channel_materials", {"query": "anything"}
    )
    assert result.ok and result.sources == [] and result.data["passages"] == []
