"""What the channel's materials answered in each completed research: the parts of a report, the
material pages it cites, and the gaps grouped into topics (research.services.material_coverage)."""

from __future__ import annotations

import pytest

from agent.engine.report_legacy import from_v1
from agent.engine.report_types import integrity_problems
from research.models import MaterialCoverage, MaterialGap, ResearchTask
from research.services import material_coverage
from research.services.material_coverage import cited_pages, parts_of
from tests.support.research_fixtures import stored_research
from tests.support.typed_reports import WEB_TOOL, ReportBuilder

SUBS = ["學習分析的定義是什麼？", "學習分析有哪些倫理問題？", "布魯姆分類法有哪些層次？"]


def test_a_part_is_answered_only_by_a_fact_from_a_channel_material():
    b = ReportBuilder("比較學習分析與布魯姆分類法", SUBS)
    slides, web = b.material("course-a", 7, 3), b.source(WEB_TOOL, url="https://example.org/ethics")
    b.fact(0, slides)  # the materials answer the first sub-question
    b.fact(1, web)  # the second only from the web
    b.fact(2, slides, superseded=True)  # the third from a material that lost a settled conflict
    report = b.build()
    assert integrity_problems(report) == []
    parts = parts_of(report)
    assert [(p.index, p.text, p.by_model, p.answered) for p in parts] == [
        (0, SUBS[0], True, True),
        (1, SUBS[1], True, False),
        (2, SUBS[2], True, False),
    ]


def test_a_report_without_sub_questions_is_one_part_the_students_question():
    b = ReportBuilder("什麼是形成性評量？")
    b.fact(-1, b.source(WEB_TOOL))
    assert [(p.index, p.text, p.by_model, p.answered) for p in parts_of(b.build())] == [
        (-1, "什麼是形成性評量？", False, False)
    ]
    b.fact(-1, b.material("course-a", 2))
    assert parts_of(b.build())[0].answered


def test_a_sub_question_the_report_does_not_show_is_worded_by_the_question():
    b = ReportBuilder("學生的問題", ["", "第二個子問題"])
    assert [(p.text, p.by_model) for p in parts_of(b.build())] == [
        ("學生的問題", False),
        ("第二個子問題", True),
    ]


def test_the_cited_pages_are_this_channels_material_pages_that_a_fact_rests_on():
    b = ReportBuilder("q", ["a"])
    p3, p5, other, uncited = (
        b.material("course-a", 7, 3),
        b.material("course-a", 7, 5),
        b.material("course-b", 9, 1),  # a link into another channel is not this channel's page
        b.material("course-a", 8, 2),
    )
    for source in (p3, p5, other, p3):
        b.fact(0, source)
    b.source(WEB_TOOL, url="https://example.org")
    assert uncited and cited_pages(b.build(), "course-a") == [[7, "3"], [7, "5"]]


def _completed(personas, report: dict, *, user=None, question="比較學習分析與布魯姆分類法") -> ResearchTask:
    task = stored_research(user or personas.student, personas.channel, question=question)
    ResearchTask.objects.filter(pk=task.pk).update(report_json=report)
    return task


def _gaps(task):
    return list(
        MaterialGap.objects.filter(coverage__task=task)
        .order_by("part")
        .values_list("part", "text", "by_model")
    )


@pytest.mark.django_db
def test_recording_a_research_stores_its_parts_its_pages_and_its_gaps(personas):
    b = ReportBuilder("比較學習分析與布魯姆分類法", SUBS)
    b.fact(0, b.material("course-a", 7, 3))
    b.fact(2, b.source(WEB_TOOL))
    task = _completed(personas, b.json())
    coverage = material_coverage.record(task.pk)
    assert (coverage.parts, coverage.answered, coverage.cited_pages) == (3, 1, [[7, "3"]])
    assert coverage.asked_at == task.created_at and coverage.channel_id == personas.channel.pk
    assert _gaps(task) == [(1, SUBS[1], True), (2, SUBS[2], True)]
    # Once only: a second call (the sweep meeting the finishing worker) changes nothing.
    assert material_coverage.record(task.pk) is None
    assert MaterialGap.objects.filter(coverage__task=task).count() == 2


@pytest.mark.django_db
def test_only_completed_researches_are_recorded_and_a_report_less_one_has_no_parts(personas):
    failed = stored_research(personas.student, personas.channel, status="failed")
    replay = _completed(personas, ReportBuilder("q", ["a"]).json())
    ResearchTask.objects.filter(pk=replay.pk).update(is_replay=True)
    old = stored_research(personas.student, personas.channel)  # finished before reports were stored
    assert material_coverage.record(failed.pk) is None and material_coverage.record(replay.pk) is None
    coverage = material_coverage.record(old.pk)
    assert (coverage.parts, coverage.answered) == (0, 0) and not coverage.gaps.exists()
    assert set(MaterialCoverage.objects.values_list("task_id", flat=True)) == {old.pk}


@pytest.mark.django_db
def test_the_sweep_records_every_completed_research_without_a_row_oldest_first(personas):
    tasks = [_completed(personas, ReportBuilder(f"問題 {n}", [f"子問題 {n}"]).json()) for n in range(3)]
    material_coverage.record(tasks[1].pk)
    assert list(material_coverage.missing()) == [tasks[0].pk, tasks[2].pk]
    assert material_coverage.sweep(limit=1) == {"recorded": 1, "failed": 0}
    assert list(material_coverage.missing()) == [tasks[2].pk]
    assert material_coverage.sweep() == {"recorded": 1, "failed": 0}
    assert not material_coverage.missing().exists()


def _topics(channel):
    """{text: the text of its topic's first gap}."""
    return {
        gap.text: gap.topic.text
        for gap in MaterialGap.objects.filter(channel=channel).select_related("topic")
    }


@pytest.mark.django_db
def test_gaps_of_similar_wording_share_a_topic_in_chinese(personas):
    for subs in (
        ["學習分析的定義是什麼？", "布魯姆分類法有哪些層次？"],
        ["什麼是學習分析？", "形成性評量與總結性評量的差異？"],
        ["總結性評量和形成性評量有何不同", "檢索增強生成如何減少幻覺？"],
    ):
        task = _completed(personas, ReportBuilder("問題", subs).json())
        material_coverage.record(task.pk)
    topics = _topics(personas.channel)
    assert topics["什麼是學習分析？"] == "學習分析的定義是什麼？"
    assert topics["總結性評量和形成性評量有何不同"] == "形成性評量與總結性評量的差異？"
    # Unrelated questions, which the English-only local model would put close together, stay apart.
    assert topics["布魯姆分類法有哪些層次？"] == "布魯姆分類法有哪些層次？"
    assert topics["檢索增強生成如何減少幻覺？"] == "檢索增強生成如何減少幻覺？"
    assert len(set(topics.values())) == 4


@pytest.mark.django_db
def test_gaps_in_english_are_grouped_by_the_local_models_embeddings(personas):
    for subs in (
        ["What is learning analytics?", "What are the levels of Bloom's taxonomy?"],
        ["How is learning analytics defined?", "What ethical issues does learning analytics raise?"],
        ["Which cognitive levels does Bloom's taxonomy include?"],
    ):
        task = _completed(
            personas, ReportBuilder("question", subs, language="en").json(), question="question"
        )
        material_coverage.record(task.pk)
    gaps = MaterialGap.objects.filter(channel=personas.channel)
    assert all(g.embedding is not None and g.embedding_model for g in gaps)
    topics = _topics(personas.channel)
    assert topics["How is learning analytics defined?"] == "What is learning analytics?"
    assert (
        topics["Which cognitive levels does Bloom's taxonomy include?"]
        == "What are the levels of Bloom's taxonomy?"
    )
    # Same subject, another question: its own topic.
    assert (
        topics["What ethical issues does learning analytics raise?"]
        == "What ethical issues does learning analytics raise?"
    )


@pytest.mark.django_db
def test_without_the_embedding_service_gaps_are_grouped_by_wording(personas, fake_embeddings):
    fake_embeddings.fail_with = 503
    for subs in (
        ["What is learning analytics?"],
        ["What is learning analytics, exactly?"],
        ["Bloom taxonomy levels"],
    ):
        material_coverage.record(_completed(personas, ReportBuilder("q", subs, language="en").json()).pk)
    gaps = MaterialGap.objects.filter(channel=personas.channel)
    assert all(g.embedding is None for g in gaps)
    topics = _topics(personas.channel)
    assert topics["What is learning analytics, exactly?"] == "What is learning analytics?"
    assert topics["Bloom taxonomy levels"] == "Bloom taxonomy levels"


@pytest.mark.django_db
def test_each_channel_has_topics_of_its_own(personas):
    from channels_app.models import Channel

    other = Channel.objects.get(slug="course-b")
    material_coverage.record(_completed(personas, ReportBuilder("q", ["什麼是學習分析？"]).json()).pk)
    task = stored_research(personas.other_teacher, other)
    ResearchTask.objects.filter(pk=task.pk).update(
        report_json=ReportBuilder("q", ["學習分析的定義是什麼？"]).json()
    )
    material_coverage.record(task.pk)
    gap = MaterialGap.objects.get(channel=other)
    assert gap.topic_id == gap.pk


def test_a_report_stored_in_schema_1_is_read_as_one_part():
    pytest.importorskip("agent.engine.report_legacy")  # arrives with the typed renderings
    v1 = {
        "schema_version": "1.3",
        "question": "什麼是學習分析？",
        "citations": [
            {
                "id": 1,
                "title": "week1.pdf 頁 3",
                "url": "/channels/course-a/materials/7/#p3",
                "source_tool": material_coverage.MATERIALS_TOOL,
                "tier": "internal",
                "quote": "學習分析是蒐集與分析學習者資料的方法。",
                "location": {"start": 0, "end": 19},
            }
        ],
        "findings": [{"claims": [{"id": 1, "citations": [1]}]}],
    }
    report = from_v1(v1)
    assert [(p.index, p.answered) for p in parts_of(report)] == [(-1, True)]
    assert cited_pages(report, "course-a") == [[7, "3"]]
