"""Hybrid retrieval on real PostgreSQL + pgvector: semantic, lexical (Chinese bigrams), RRF, channel walls."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from channels_app import materials
from channels_app.models import ChannelTermShare
from materials import channel_text_index, lexical, retrieval, vector_index
from materials.retrieval import hybrid_search, snippet
from tests.support.documents import docx_bytes, pdf_bytes
from tests.support.factories import make_channel

pytestmark = pytest.mark.django_db

# Several Chinese passages: all-MiniLM-L6-v2 reads most Han characters as [UNK], so to the
# embedding they all look alike; only the lexical side can tell which one says 倒數排名融合.
SECTIONS = [
    (
        "Learning analytics",
        ["Learning analytics dashboards show teachers which students stopped submitting assignments."],
    ),
    ("Bloom", ["The revised Bloom's taxonomy orders cognitive processes from remembering to creating."]),
    ("倫理", ["使用學生資料進行研究前，必須先通過研究倫理審查委員會的審查。"]),
    ("去識別化", ["去識別化應移除姓名與學號，並以研究代碼取代。"]),
    ("融合", ["檢索結果以倒數排名融合合併向量與關鍵詞兩種排序。"]),
    ("知情同意", ["知情同意書應清楚說明研究目的與可能風險。"]),
    ("分組", ["期末報告以三人一組進行，每組需上台簡報十五分鐘。"]),
]


@pytest.fixture
def course(personas, index_file):
    material = index_file(personas.channel, personas.teacher, "eds-notes.docx", docx_bytes(SECTIONS))
    assert material.status == "ready", material.error
    return personas.channel, material


def test_postgres_default_parser_cannot_find_a_chinese_term_but_bigrams_can(db):
    passage = "檢索結果以倒數排名融合合併向量與關鍵詞兩種排序。"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_tsvector('english', %s) @@ plainto_tsquery('english', %s)", [passage, "倒數排名融合"]
        )
        assert cursor.fetchone()[0] is False  # the whole run of Han characters is ONE lexeme
        cursor.execute(
            "SELECT to_tsvector('english', %s) @@ plainto_tsquery('english', %s)",
            [lexical.search_text(passage), lexical.search_text("倒數排名融合")],
        )
        assert cursor.fetchone()[0] is True  # 倒數 & 數排 & 排名 & 名融 & 融合


def test_a_chinese_query_is_found_by_the_lexical_side_only(course):
    channel, material = course
    query = "去識別化"  # four [UNK] tokens to all-MiniLM-L6-v2

    semantic = hybrid_search(channel.pk, query, k=3, use_lexical=False)
    lexical_only = hybrid_search(channel.pk, query, k=3, use_vectors=False)
    hybrid = hybrid_search(channel.pk, query, k=3)

    assert query not in semantic[0].text  # the embedding cannot tell the Chinese passages apart
    assert [query in r.text for r in lexical_only] == [True]  # only the one passage holds the term
    assert hybrid[0].text.startswith("去識別化\n去識別化應移除姓名與學號")
    assert hybrid[0].lexical_rank == 1 and hybrid[0].vector_rank != 1
    assert hybrid[0].page == 4 and hybrid[0].locator == "eds-notes.docx § 4"


def test_an_english_paraphrase_is_found_by_the_semantic_side(course):
    channel, _ = course
    # No word of the question occurs in the passage about dashboards ("stopped submitting assignments").
    results = hybrid_search(channel.pk, "Which pupils quit handing in homework?", k=3)
    assert "dashboards" in results[0].text and results[0].vector_rank == 1


def test_hybrid_results_carry_file_page_score_and_both_ranks(course):
    channel, material = course
    results = hybrid_search(channel.pk, "Bloom taxonomy 認知", k=4)
    assert 1 <= len(results) <= 4
    assert all(r.material_id == material.pk and r.file_name == "eds-notes.docx" for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    top = results[0]
    assert "Bloom" in top.text and top.vector_rank is not None and top.lexical_rank is not None
    assert top.score == pytest.approx(1 / (60 + top.vector_rank) + 1 / (60 + top.lexical_rank))


def test_search_never_returns_another_channels_passages(personas, index_file):
    mine = personas.channel
    theirs = make_channel(personas.other_teacher, slug="course-theirs")
    same_text = pdf_bytes(["研究倫理審查委員會（IRB）審查學生資料研究。Institutional Review Board review."])
    index_file(theirs, personas.other_teacher, "theirs.pdf", same_text)
    index_file(
        theirs, personas.other_teacher, "more.pdf", pdf_bytes(["IRB protocol numbers and consent forms."])
    )
    index_file(
        mine, personas.teacher, "mine.pdf", pdf_bytes(["Bloom's taxonomy: remember, understand, apply."])
    )

    for query in ["IRB 研究倫理審查委員會", "Institutional Review Board", "theirs.pdf", "' OR 1=1 --"]:
        results = hybrid_search(mine.pk, query, k=10)
        assert {r.file_name for r in results} <= {"mine.pdf"}, query
    assert {r.file_name for r in hybrid_search(theirs.pk, "IRB", k=10)} == {"theirs.pdf", "more.pdf"}


@pytest.fixture
def fresh_term_statistics():
    retrieval.forget_term_statistics()
    yield
    retrieval.forget_term_statistics()  # the ANALYZE below is rolled back with the test


def test_common_terms_rank_passages_but_do_not_select_them(
    personas, index_file, settings, fresh_term_statistics
):
    # 30 passages say "student"; one also says "rubric". After ANALYZE the planner's statistics
    # know "student" is in (nearly) every chunk, so it no longer pulls passages into the lexical list.
    pages = [f"Student note {n}: the student reads chapter {n}." for n in range(30)] + [
        "A rubric for the student essay."
    ]
    index_file(personas.channel, personas.teacher, "notes.pdf", pdf_bytes(pages))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE channels_app_materialchunk")
        # The statistics are read through this transaction, the only one that sees the ANALYZE:
        # a search on another thread would otherwise cache the platform's older ones for minutes.
        retrieval.reload_term_statistics(cursor)

    lexical_hits = hybrid_search(personas.channel.pk, "student rubric", k=10, use_vectors=False)
    assert [hit.page for hit in lexical_hits] == [31]
    # a query of common terms only must match all of them: page 31 has "student" but not "reads"
    common_only = {
        hit.page for hit in hybrid_search(personas.channel.pk, "student reads", k=20, use_vectors=False)
    }
    assert len(common_only) == 20 and 31 not in common_only

    settings.UEDU_RETRIEVAL_COMMON_TERM_CUTOFF = 1.0  # cut-off off: every passage with "student" matches
    assert len(hybrid_search(personas.channel.pk, "student rubric", k=20, use_vectors=False)) == 20


def test_a_big_channels_own_term_shares_decide_which_terms_are_common_in_it(
    personas, index_file, settings, fresh_term_statistics
):
    # A course about counterpoint: the word is in every passage, though (with no platform
    # statistics at all here) the platform counts it as rare. Only the channel's own shares
    # reveal that selecting on it would pull in the whole course.
    pages = [
        f"Counterpoint exercise {n}: two voices move against each other in counterpoint." for n in range(30)
    ]
    pages.append("Counterpoint and the fugue: a subject answered in another voice.")
    settings.UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS = 10_000  # a small channel: platform statistics
    material = index_file(personas.channel, personas.teacher, "counterpoint.pdf", pdf_bytes(pages))
    assert not ChannelTermShare.objects.filter(channel=personas.channel).exists()
    assert len(hybrid_search(personas.channel.pk, "counterpoint fugue", k=20, use_vectors=False)) == 20

    settings.UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS = 20  # now it is big enough for shares of its own
    index_file(
        personas.channel,
        personas.teacher,
        "more.pdf",
        pdf_bytes(["Species counterpoint, first species."] * 2),
    )
    shares = dict(ChannelTermShare.objects.filter(channel=personas.channel).values_list("lexeme", "share"))
    assert shares["counterpoint"] == 1.0 and 0 < shares["fugu"] < 0.05
    # Both words are common in this channel, so a passage must hold both to be a candidate.
    assert [
        hit.page for hit in hybrid_search(personas.channel.pk, "counterpoint fugue", k=20, use_vectors=False)
    ] == [31]

    # Deleting materials brings the channel under the size again: its shares go.
    materials.material_delete(material)
    assert not ChannelTermShare.objects.filter(channel=personas.channel).exists()


def test_a_query_full_of_tsquery_operators_is_just_words(course):
    channel, _ = course
    results = hybrid_search(channel.pk, "Bloom' | !(taxonomy & <-> ''creating\\", k=3, use_vectors=False)
    assert results and "Bloom" in results[0].text
    assert lexical.tsquery_text(["it's", "a\\b"]) == "'it''s' | 'a\\\\b'"


def test_an_empty_channel_or_query_returns_nothing(personas):
    assert hybrid_search(personas.channel.pk, "learning analytics") == []
    assert hybrid_search(personas.channel.pk, "   ") == []


def test_the_semantic_side_uses_the_hnsw_index(course):
    channel, _ = course
    dim = 384
    sql = (
        f"EXPLAIN SELECT id FROM channels_app_materialchunk WHERE channel_id = %s AND embedding_dim = {dim} "
        f"ORDER BY {vector_index.vector_expression(dim)} <=> %s::{vector_index.query_cast(dim)} LIMIT 10"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a 7-row table would otherwise be scanned
        # ...or read through the (channel, dim) b-tree and sorted, when other tests left it its statistics
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(sql, [channel.pk, "[" + ",".join(["0.05"] * dim) + "]"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "chunk_embedding_hnsw_384" in plan, plan


def test_snippet_centres_on_the_first_query_term():
    text = (
        "Opening words. " * 40
        + "The IRB reviews consent forms before data collection. "
        + "Closing words. " * 40
    )
    short = snippet(text, "IRB consent", width=120)
    assert "IRB reviews consent" in short and short.startswith("…") and short.endswith("…")
    assert len(short) <= 122
    assert snippet("short text", "anything") == "short text"


def test_the_migrations_index_is_the_one_vector_index_creates(db):
    # reembed_materials creates indexes with materials.vector_index; the migration wrote its own
    # SQL. Both must be the same index, or a re-created one would differ from a migrated one.
    def definition():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = %s", [vector_index.index_name(384)]
            )
            return cursor.fetchone()[0]

    migrated = definition()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {vector_index.index_name(384)}")
    assert vector_index.ensure_index(384) is True
    assert definition() == migrated
    assert vector_index.ensure_index(384) is False


def _sets_hnsw(captured: CaptureQueriesContext) -> bool:
    return any(
        "hnsw.ef_search" in query["sql"] and "hnsw.iterative_scan" in query["sql"]
        for query in captured.captured_queries
    )


def _plan(sql: str, channel_id: int, query: str = "", *setup: str) -> str:
    """EXPLAIN of one of retrieval's statements on a channel (lexical queries made from `query`),
    with the `setup` statements run first in the same transaction."""
    params = {
        "vector": "[" + ",".join(["0.05"] * 384) + "]",
        "channel": channel_id,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "pool": 40,
        "rrf_k": retrieval.RRF_K,
        "k": 10,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        if query:
            params["candidates"], params["ranking"] = retrieval._lexical_queries(cursor, query, channel_id)
        cursor.execute("SET LOCAL enable_seqscan = off")  # a 7-row table would otherwise be scanned
        # ...or read through the (channel, dim) b-tree and sorted, when other tests left it its statistics
        cursor.execute("SET LOCAL enable_sort = off")
        for statement in setup:
            cursor.execute(statement)
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def _semantic_plan(channel_id: int, strategy: str) -> str:
    return _plan(retrieval._semantic_sql(384, channel_id, strategy), channel_id)


def test_a_small_channel_is_searched_exactly_and_a_big_one_through_its_own_index(
    course, settings, personas, index_file
):
    channel, _ = course
    retrieval.forget_strategies()
    # Below the threshold: an exact scan of the channel's own rows, no HNSW index in the plan.
    assert retrieval.semantic_strategy(channel.pk, 384) == retrieval.EXACT
    assert "hnsw" not in _semantic_plan(channel.pk, retrieval.EXACT)
    with CaptureQueriesContext(connection) as small:
        exact = [p.chunk_id for p in hybrid_search(channel.pk, "Bloom's taxonomy", k=5, use_lexical=False)]
    # No graph is walked, so none of its settings are sent (nor a transaction to hold them).
    assert exact and not _sets_hnsw(small)
    hybrid_search(channel.pk, "Bloom's taxonomy", k=5)  # reads the platform's term statistics, kept a while
    with CaptureQueriesContext(connection) as both:
        assert hybrid_search(channel.pk, "Bloom's taxonomy", k=5)
    assert len(both) == 2  # the query's lexemes with their shares in the channel, then the search

    # Past the threshold, indexing the next material gives the channel its own partial HNSW index.
    settings.UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS = 3
    material = index_file(channel, personas.teacher, "more-notes.docx", docx_bytes(SECTIONS[:2]))
    assert material.status == "ready", material.error
    assert (384, channel.pk) in vector_index.channel_indexes()
    assert retrieval.semantic_strategy(channel.pk, 384) == retrieval.CHANNEL_INDEX
    assert vector_index.channel_index_name(384, channel.pk) in _semantic_plan(
        channel.pk, retrieval.CHANNEL_INDEX
    )
    # ... and a full-text index of its own, which its lexical side reads instead of the platform's.
    assert channel.pk in channel_text_index.existing()
    lexical_sql = retrieval._hybrid_sql(
        384, semantic=False, lexical_side=True, channel_id=channel.pk, strategy=retrieval.CHANNEL_INDEX
    )
    # A few rows would otherwise be read through the channel's btree or scanned: left with the two
    # GIN indexes, the planner must choose the channel's own. The drop is rolled back with the test.
    lexical_plan = _plan(lexical_sql, channel.pk, "Bloom taxonomy", "DROP INDEX chunk_channel_dim")
    assert channel_text_index.index_name(channel.pk) in lexical_plan, lexical_plan
    assert "chunk_search_vector_gin" not in lexical_plan
    # Another channel's rows never come back through it, and the old passages are still found.
    other = make_channel(owner=personas.teacher)
    assert retrieval.semantic_strategy(other.pk, 384) == retrieval.EXACT
    with CaptureQueriesContext(connection) as big:
        found = hybrid_search(channel.pk, "Bloom's taxonomy", k=5, use_lexical=False)
    assert {p.chunk_id for p in found} >= set(exact[:1])
    assert _sets_hnsw(big)  # the walk of its own index gets ef_search and the strict-order scan
    retrieval.forget_strategies()


def test_a_small_channel_is_searched_in_one_pass_over_its_own_rows(course):
    # Below the index threshold both sides read the channel's rows once, through its btree: the
    # platform-wide GIN index (whose posting lists grow with every other channel) is not used,
    # and the fused ranks are the ranks each side gives on its own.
    channel, _ = course
    retrieval.forget_strategies()
    assert retrieval.semantic_strategy(channel.pk, 384) == retrieval.EXACT
    query = "倒數排名融合 Bloom taxonomy"
    both = hybrid_search(channel.pk, query, k=10)
    vector_only = [p.chunk_id for p in hybrid_search(channel.pk, query, k=20, use_lexical=False)]
    lexical_only = [p.chunk_id for p in hybrid_search(channel.pk, query, k=20, use_vectors=False)]
    assert both and any(p.lexical_rank for p in both) and all(p.vector_rank for p in both)
    for passage in both:
        assert passage.vector_rank == vector_only.index(passage.chunk_id) + 1
        if passage.lexical_rank:
            assert passage.lexical_rank == lexical_only.index(passage.chunk_id) + 1
        else:
            assert passage.chunk_id not in lexical_only

    sql = retrieval._hybrid_sql(
        384, semantic=True, lexical_side=True, channel_id=channel.pk, strategy="exact"
    )
    plan = _plan(sql, channel.pk, query)
    # One read of the channel's rows (through its btree, never the GIN index), then the k rows
    # returned fetched for their text (the table's alias `c`).
    reads = [
        line
        for line in plan.splitlines()
        if " on channels_app_materialchunk" in line and " on channels_app_materialchunk c " not in line
    ]
    assert len(reads) == 1 and "chunk_search_vector_gin" not in plan, plan


def test_a_chunks_vector_and_text_stay_in_its_row(personas, index_file):
    # A chunk's row passes PostgreSQL's 2 kB TOAST threshold (a 384-dimension vector alone is
    # 1,540 bytes). Out of line, every distance of an exact channel scan would cost a TOAST lookup
    # (migration channels_app 0009); in the row, the scan reads the channel's pages and nothing else.
    paragraph = " ".join(
        f"Week {n}: the seminar compares retrieval practice, spaced repetition and interleaving "
        f"in the {n}th cohort, with the grading rubric and the attendance record."
        for n in range(1, 9)
    )
    material = index_file(
        personas.channel, personas.teacher, "long.docx", docx_bytes([("Long", [paragraph])])
    )
    assert material.status == "ready", material.error
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_size(c.*), pg_column_toast_chunk_id(embedding), "
            "pg_column_toast_chunk_id(search_vector) FROM channels_app_materialchunk c WHERE material_id = %s",
            [material.pk],
        )
        rows = cursor.fetchall()
    assert rows and max(size for size, _, _ in rows) > 2100
    assert all(vector_chunk is None and tsvector_chunk is None for _, vector_chunk, tsvector_chunk in rows)
