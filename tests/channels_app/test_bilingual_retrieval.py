"""Bilingual material search: chunks and channels record their languages, files give
the channel a glossary, and a search in one language also runs in the channel's other languages,
from the engine's model translation or else the glossary, fused by RRF.

The cross-language slice of dataset v3 (questions whose only gold passage is in the other
language) is searched over one channel holding every file of the slice and the demo course's
materials, with the real local embedding model: as written (the question in its own language), with
the glossary alone, and with the scripted model's translations asked for by the engine's own
translation call over HTTP."""

from __future__ import annotations

import json
from importlib import import_module

import pytest
from django.apps import apps as django_apps

from agent.tools import load
from agent.tools.registry import ToolContext
from channels_app import materials
from channels_app.models import Channel, GlossaryTerm, MaterialChunk
from materials import bilingual, glossary, languages
from materials.retrieval import hybrid_search
from research.services.questions import question_language
from tests.support.bilingual_slice import (
    build_channel,
    cross_language_slice,
    engine_translations,
    found_at_5,
    recall_at_5,
)
from tests.support.documents import pdf_bytes

HANDOUT_EN = "A typical early-warning dashboard combines three signals"


# --------------------------------------------------------------------------- languages and glossary


def test_a_texts_languages_are_told_by_its_script():
    assert languages.languages_of("Learning analytics is the measurement of data about learners.") == ["en"]
    assert languages.languages_of("學習分析是蒐集並分析學習者資料的做法。") == ["zh"]
    assert languages.languages_of(
        "Week 1 · Learning analytics 學習分析導論。學習分析（learning analytics）是蒐集資料。"
    ) == [
        "en",
        "zh",
    ]
    # a Chinese term quoted in an English paragraph does not make it Chinese
    assert languages.languages_of(
        "Keyword matching on character bigrams still finds exact terms such as 倒數排名融合 in the text."
    ) == ["en"]
    assert languages.main_language("IRB 審查要多久") == "zh"
    assert languages.main_language("What is RAG?") == "en"
    assert languages.main_language("2026") == ""


def test_term_pairs_are_mined_from_brackets_titles_and_lists():
    text = (
        "Week 1 · Learning analytics 學習分析導論\n"
        "使用學生資料前，必須先通過研究倫理審查委員會（IRB）的審查。\n"
        "A typical early-warning dashboard (預警儀表板) combines three signals.\n"
        "記憶 Remember → 理解 Understand\n"
        "本課程把向量存入 pgvector。"
    )
    pairs = {(t.zh, t.en) for t in glossary.mine(text)}
    assert {
        ("學習分析導論", "Learning analytics"),
        ("研究倫理審查委員會", "IRB"),
        ("預警儀表板", "early-warning dashboard"),
        ("記憶", "Remember"),
        ("理解", "Understand"),
    } <= pairs
    assert not any(en == "pgvector" for _, en in pairs)  # a clause beside a word is not a term


def test_a_query_is_carried_over_term_by_term_and_the_longer_term_wins():
    terms = [
        glossary.Term("學習分析", "learning analytics"),
        glossary.Term("分析", "Analyze"),
        glossary.Term("預警儀表板", "early-warning dashboard"),
        glossary.Term("效果量", "effect size"),
    ]
    assert glossary.expand("典型的預警儀表板和學習分析有什麼關係？", terms, "en") == (
        "early-warning dashboard learning analytics"
    )
    assert (
        glossary.expand("What does an effect size of 0.5 mean for IRB review?", terms, "zh")
        == "效果量 0.5 IRB"
    )
    assert glossary.expand("photosynthesis", terms, "zh") == ""


# --------------------------------------------------------------------------- indexing


LA_PAGE = "Week 1 · Learning analytics 學習分析導論\nLearning analytics measures data about learners and their contexts."
ZH_PAGE = (
    "二、IRB 審查流程\n研究計畫需送交研究倫理審查委員會（IRB）。一般流程為線上送審、委員審查、修正後核准。"
)


@pytest.mark.django_db
def test_indexing_records_languages_per_chunk_and_channel_and_the_files_glossary(personas, index_file):
    channel = personas.channel
    english = index_file(
        channel, personas.teacher, "en.pdf", pdf_bytes(["Only English text about learning analytics here."])
    )
    channel.refresh_from_db()
    assert channel.material_languages == ["en"]
    assert [
        row for row in MaterialChunk.objects.filter(material=english).values_list("languages", flat=True)
    ] == [["en"]]

    mixed = index_file(channel, personas.teacher, "mixed.pdf", pdf_bytes([LA_PAGE, ZH_PAGE]))
    channel.refresh_from_db()
    assert channel.material_languages == ["en", "zh"]
    by_page = {row.page: row.languages for row in MaterialChunk.objects.filter(material=mixed)}
    assert by_page[1] == ["en", "zh"] and by_page[2] == ["zh"]
    pairs = set(GlossaryTerm.objects.filter(material=mixed).values_list("zh", "en"))
    assert ("學習分析導論", "Learning analytics") in pairs and ("研究倫理審查委員會", "IRB") in pairs
    assert set(GlossaryTerm.objects.values_list("channel_id", flat=True)) == {channel.pk}

    materials.material_delete(mixed)  # its terms go with it, and so does Chinese
    channel.refresh_from_db()
    assert channel.material_languages == ["en"] and not GlossaryTerm.objects.exists()


@pytest.mark.django_db
def test_the_migration_backfills_languages_and_glossaries_of_chunks_indexed_before_it(personas, index_file):
    material = index_file(personas.channel, personas.teacher, "mixed.pdf", pdf_bytes([LA_PAGE, ZH_PAGE]))
    MaterialChunk.objects.update(languages=[])
    GlossaryTerm.objects.all().delete()
    Channel.objects.update(material_languages=[])

    import_module("channels_app.migrations.0010_bilingual_materials").backfill(django_apps, None)

    assert Channel.objects.get(pk=personas.channel.pk).material_languages == ["en", "zh"]
    assert all(row.languages for row in MaterialChunk.objects.filter(material=material))
    assert GlossaryTerm.objects.filter(material=material, zh="研究倫理審查委員會", en="IRB").exists()


# --------------------------------------------------------------------------- one search


def _toolbox(channel):
    return load().bind(
        ToolContext(user_id=channel.owner_id, channel_id=channel.pk, channel_slug=channel.slug)
    )


@pytest.mark.django_db
def test_a_search_runs_in_the_other_language_and_says_which_query_found_each_passage(personas, index_file):
    channel = personas.channel
    index_file(
        channel,
        personas.teacher,
        "handout.pdf",
        pdf_bytes(
            [
                "Key terms\nearly-warning dashboard 預警儀表板",
                HANDOUT_EN
                + ": assignment submission, quiz performance and activity in the learning management system.",
                "研究計畫需送交研究倫理審查委員會審查。一般流程為線上送審、委員審查、修正後核准。",
            ]
        ),
    )
    box = _toolbox(channel)
    question = "預警儀表板結合哪三種訊號？"

    by_glossary = box.call("search_channel_materials", {"query": question, "top_k": 3})
    queries = by_glossary.data["queries"]
    assert [(q["language"], q["by"]) for q in queries] == [("zh", "as_written"), ("en", "glossary")]
    assert queries[1]["text"] == "early-warning dashboard"
    found = next(s for s in by_glossary.sources if HANDOUT_EN in s.text)
    assert {f["by"] for f in found.meta["found_by"]} >= {"glossary"}

    translated = [
        {"language": "zh", "text": question, "by": "question"},
        {
            "language": "en",
            "text": "Which three signals does an early-warning dashboard combine?",
            "by": "model",
        },
    ]
    by_model = box.call("search_channel_materials", {"query": question, "top_k": 3}, translations=translated)
    assert [q["by"] for q in by_model.data["queries"]] == ["as_written", "model_translation"]
    found = next(s for s in by_model.sources if HANDOUT_EN in s.text)
    assert "model_translation" in {f["by"] for f in found.meta["found_by"]}
    assert "early-warning dashboard" in found.snippet  # cut around the terms of the query that found it

    # The model cannot send translations: the schema it reads has no such parameter.
    refused = box.call("search_channel_materials", {"query": question, "translations": translated})
    assert "invalid arguments" in refused.error


@pytest.mark.django_db
def test_another_channels_glossary_never_carries_a_query(personas, index_file):
    from tests.support.factories import make_channel

    other = make_channel(personas.other_teacher, slug="course-other")
    index_file(other, personas.other_teacher, "terms.pdf", pdf_bytes(["early-warning dashboard 預警儀表板"]))
    index_file(
        personas.channel,
        personas.teacher,
        "mixed.pdf",
        pdf_bytes([HANDOUT_EN + " in every course.", "學習分析蒐集學生的學習資料，協助教師改善教學。"]),
    )
    result = _toolbox(personas.channel).call(
        "search_channel_materials", {"query": "預警儀表板結合哪些訊號？"}
    )
    assert [q["by"] for q in result.data["queries"]] == ["as_written"]
    assert result.data["unreached_languages"] == ["en"]


@pytest.mark.django_db
def test_a_channel_in_the_querys_language_only_is_searched_once(personas, index_file):
    index_file(
        personas.channel,
        personas.teacher,
        "en.pdf",
        pdf_bytes(["Bloom's taxonomy orders cognitive processes."]),
    )
    outcome = bilingual.search(personas.channel.pk, "What does Bloom's taxonomy order?", 3)
    assert [q.by for q in outcome.queries] == ["as_written"] and outcome.passages


# --------------------------------------------------------------------------- the evaluation slice


@pytest.mark.django_db
def test_the_cross_language_slice_is_found_with_translations_and_with_the_glossary_alone(
    personas, llm, capsys
):
    items = cross_language_slice()
    asked = [languages.main_language(item.question) for item, _ in items]
    assert len(items) >= 12 and asked.count("zh") >= 6 and asked.count("en") >= 6
    channel = build_channel(personas.teacher)
    assert channel.material_languages == ["en", "zh"]
    box = _toolbox(channel)
    golds = [g for _, g in items]

    # the question as written, in its own language only: both sides of one hybrid search
    as_written = [[p.text for p in hybrid_search(channel.pk, item.question, 5)] for item, _ in items]

    by_glossary, glossary_queries = [], 0
    for item, _ in items:
        result = box.call("search_channel_materials", {"query": item.question, "top_k": 5})
        glossary_queries += any(q["by"] == "glossary" for q in result.data["queries"])
        by_glossary.append([s.text for s in result.sources])

    by_model = []
    for item, _ in items:
        run, translations = engine_translations(
            item.question, channel.material_languages, llm.url, question_language(item.question)
        )
        assert run.plan.translations["by"] == "model" and run.plan.translations["status"] == "ok"
        result = box.call(
            "search_channel_materials",
            {"query": item.question, "top_k": 5},
            translations=translations.for_query(item.question),
        )
        assert [q["by"] for q in result.data["queries"]] == ["as_written", "model_translation"]
        by_model.append([s.text for s in result.sources])
    assert len(llm.calls("translation")) == len(items)  # one call per research

    figures = {
        "items": len(items),
        "zh_over_en": asked.count("zh"),
        "en_over_zh": asked.count("en"),
        "recall_at_5_as_written": recall_at_5(as_written, golds),
        "recall_at_5_glossary": recall_at_5(by_glossary, golds),
        "recall_at_5_model_translation": recall_at_5(by_model, golds),
        "glossary_reached": glossary_queries,
        "missed_with_translation": [
            item.id for (item, wanted), texts in zip(items, by_model) if not found_at_5(texts, wanted)
        ],
        "missed_with_glossary": [
            item.id for (item, wanted), texts in zip(items, by_glossary) if not found_at_5(texts, wanted)
        ],
    }
    with capsys.disabled():
        print("\nbilingual slice: " + json.dumps(figures))
    assert figures["recall_at_5_model_translation"] >= 0.9, figures
    assert figures["recall_at_5_glossary"] >= 0.7, figures
