"""The catalogue search is served by real indexes (GIN on the array of CJK bigrams, GIN on the
English full-text vector), and finds what it found before."""

from __future__ import annotations

from django.db import connection

from catalogue.models import PlatformDocument, TeamPaper
from catalogue.search import ranked
from catalogue.selectors import search_documents, team_papers
from tests.support.factories import make_user

FIELDS = ["title", "authors", "abstract", "keywords", "venue"]


def _index_names(table: str) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cursor.fetchall())


def _plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + queryset.model._meta.db_table)
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_migration_creates_the_bigram_and_full_text_indexes(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT uedu_cjk_bigrams('教育資料 and 學習')")
        assert sorted(cursor.fetchone()[0]) == sorted(["教育", "育資", "資料", "學習"])
    papers = _index_names(TeamPaper._meta.db_table)
    assert "USING gin (uedu_cjk_bigrams(" in papers["cat_teampaper_cjk"]
    assert "USING gin (to_tsvector('english'" in papers["cat_teampaper_fts"]
    assert {"cat_platformdoc_cjk", "cat_platformdoc_fts"} <= set(
        _index_names(PlatformDocument._meta.db_table)
    )


def test_a_search_on_a_large_table_reads_the_indexes_not_every_row(db):
    TeamPaper.objects.bulk_create(
        TeamPaper(
            slug=f"p-{n}",
            title=f"Paper {n} on topic {n % 97}",
            authors=f"Author {n}",
            abstract=f"Abstract number {n} about subject {n}.",
            keywords=f"kw{n}",
            venue="Uedu Reports",
            year=2020,
        )
        for n in range(20_000)
    )
    TeamPaper.objects.create(
        slug="needle",
        title="Learning analytics dashboards",
        authors="Chen",
        abstract="Dashboards for reflection.",
        keywords="dashboards",
        venue="LAK",
        year=2024,
    )

    TeamPaper.objects.create(slug="cjk", title="學習分析儀表板", authors="陳", abstract="反思", year=2024)

    english = _plan(ranked(TeamPaper.objects.all(), "dashboards reflection", FIELDS))
    chinese = _plan(ranked(TeamPaper.objects.all(), "分析儀表板 dashboards", FIELDS))

    assert "Bitmap Index Scan on cat_teampaper_fts" in english and "Seq Scan" not in english, english
    assert (
        "Bitmap Index Scan on cat_teampaper_cjk" in chinese
        and "Bitmap Index Scan on cat_teampaper_fts" in chinese
    ), chinese
    assert "Seq Scan" not in chinese, chinese
    assert [p.slug for p in team_papers(query="dashboards reflection")] == ["needle"]
    assert [p.slug for p in team_papers(query="儀表板")] == ["cjk"]


def test_search_results_are_unchanged_by_the_indexes(db):
    TeamPaper.objects.create(
        slug="a",
        title="Learning analytics in Taiwan",
        authors="Lin",
        abstract="Analytic dashboards.",
        year=2023,
    )
    TeamPaper.objects.create(
        slug="b", title="布魯姆分類法與提問", authors="王", abstract="教育資料科學的提問分析。", year=2022
    )
    TeamPaper.objects.create(slug="c", title="Unrelated", authors="X", abstract="Nothing here.", year=2021)
    assert [p.slug for p in team_papers(query="analytics")] == ["a"]  # stemming: "analytic" counts too
    assert [p.slug for p in team_papers(query="資料科學")] == [
        "b"
    ]  # CJK bigrams (two characters: index scanned whole)
    assert team_papers(query="zzzz") == []

    admin = make_user("docs_admin", superuser=True)
    PlatformDocument.objects.create(
        slug="guide", title="Deep Research guide", body="How to cite sources.", visibility="public"
    )
    assert [d.slug for d in search_documents(admin, channel_id=None, query="cite")] == ["guide"]
