"""Hybrid retrieval over one channel's material chunks (a selector: reads only).

Two rankings, fused by reciprocal rank fusion (RRF, Cormack et al. 2009: score = Σ 1/(60 + rank)):
- semantic: pgvector cosine distance on the chunk embeddings, through the HNSW index of the
  configured dimension (see materials.vector_index), only over chunks embedded by the
  configured model (vectors of another model are not comparable);
- lexical: PostgreSQL full-text search over `search_vector`, in which Chinese text is stored as
  character bigrams (see materials.lexical), ranked by ts_rank_cd, with very common lexemes
  kept out of candidate selection (see _lexical_queries). This side finds exact terms the
  embedding model handles badly: all-MiniLM-L6-v2 turns most Han characters into [UNK].

Every query is bound to one channel id in SQL, on both sides and again on the final join; there is
no parameter by which a caller can widen it.
"""

from __future__ import annotations

import re
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from . import channel_text_index, embeddings, lexical, term_shares, vector_index

RRF_K = 60
MAX_K = 20


@dataclass(frozen=True)
class Passage:
    chunk_id: int
    material_id: int
    file_name: str
    kind: str
    page: int
    text: str
    score: float  # the fused RRF score
    vector_rank: int | None  # 1-based rank on the semantic side, None when it was not a candidate
    lexical_rank: int | None

    @property
    def unit_label(self) -> str:
        return {"pptx": "slide", "docx": "§"}.get(self.kind, "p.")

    @property
    def locator(self) -> str:
        return f"{self.file_name} {self.unit_label} {self.page}"


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


# The share of all chunks holding each of the most common lexemes, from the planner's statistics:
# ANALYZE (autovacuum runs it) keeps the most common elements of a tsvector column in pg_stats.
# A lexeme not listed there is rarer than every listed one. Read at most every few minutes per
# process: the statistics only change when ANALYZE runs.
_TERM_STATISTICS_SQL = """
SELECT e.elem, e.freq
FROM pg_stats s CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(elem, freq)
WHERE s.schemaname = current_schema() AND s.tablename = 'channels_app_materialchunk' AND s.attname = 'search_vector'
  AND e.elem IS NOT NULL
"""
_TERM_STATISTICS_SECONDS = 300
_term_statistics: tuple[float, dict[str, float]] = (0.0, {})
_term_statistics_lock = threading.Lock()


def forget_term_statistics() -> None:
    """Read pg_stats again at the next search (after an ANALYZE, e.g. in tests)."""
    global _term_statistics
    _term_statistics = (0.0, {})


def reload_term_statistics(cursor) -> None:
    """Read pg_stats now, through `cursor`: after an ANALYZE that only its own transaction sees
    (a test's), another thread's search must not be the one that fills the cache."""
    global _term_statistics
    with _term_statistics_lock:
        cursor.execute(_TERM_STATISTICS_SQL)
        _term_statistics = (time.monotonic(), dict(cursor.fetchall()))


def _lexeme_frequencies(cursor) -> dict[str, float]:
    global _term_statistics
    with _term_statistics_lock:
        loaded_at, frequencies = _term_statistics
        if time.monotonic() - loaded_at > _TERM_STATISTICS_SECONDS:
            cursor.execute(_TERM_STATISTICS_SQL)
            frequencies = dict(cursor.fetchall())
            _term_statistics = (time.monotonic(), frequencies)
    return frequencies


def _lexical_queries(cursor, query: str, channel_id: int) -> tuple[str, str] | None:
    """(candidates, ranking) tsquery texts for the lexical side, or None when the query has no lexeme.

    As in Elasticsearch's "common terms" query: lexemes in more than UEDU_RETRIEVAL_COMMON_TERM_CUTOFF
    of the chunks searched (words like "student" in a course platform) do not select candidates,
    they only rank the passages the rarer lexemes found. Matching on them would rank thousands of
    passages per query for almost no signal (their IDF is near zero); when every lexeme is common,
    a passage must hold all of them. "The chunks searched" are the channel's own when it is big
    enough to have shares of its own (materials.term_shares: a course about one subject holds
    its subject's words everywhere), else the whole platform's (the planner's statistics)."""
    lexemes, frequencies = term_shares.lexemes_and_shares(cursor, channel_id, lexical.search_text(query))
    if not lexemes:
        return None
    if frequencies is None:
        frequencies = _lexeme_frequencies(cursor)
    cutoff = settings.UEDU_RETRIEVAL_COMMON_TERM_CUTOFF
    rare = [lexeme for lexeme in lexemes if frequencies.get(lexeme, 0.0) <= cutoff]
    candidates = lexical.tsquery_text(rare, "|") if rare else lexical.tsquery_text(lexemes, "&")
    return candidates, lexical.tsquery_text(lexemes, "|")


# How the semantic side is searched, per channel (see materials.vector_index and docs/retrieval.md).
EXACT, CHANNEL_INDEX, SHARED_INDEX = "exact", "channel_index", "shared_index"
_STRATEGY_SECONDS = 300
_strategies: dict[tuple[int, int], tuple[float, str]] = {}
_strategies_lock = threading.Lock()


def forget_strategies() -> None:
    """Decide every channel's strategy again at its next search (after indexing, e.g. in tests)."""
    with _strategies_lock:
        _strategies.clear()


def semantic_strategy(channel_id: int, dim: int) -> str:
    """EXACT for a channel below UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS chunks, CHANNEL_INDEX when it
    has its own HNSW index, else SHARED_INDEX (a big channel whose own index is not built yet).
    Decided at most every few minutes per process: a count over the channel's index entries."""
    key = (int(channel_id), int(dim))
    with _strategies_lock:
        decided = _strategies.get(key)
    if decided and time.monotonic() - decided[0] < _STRATEGY_SECONDS:
        return decided[1]
    with connection.cursor() as cursor:
        # Counts at most the threshold's worth of index entries, whatever the channel's size.
        cursor.execute(
            "SELECT count(*) FROM (SELECT 1 FROM channels_app_materialchunk WHERE channel_id = %s AND embedding_dim = %s LIMIT %s) s",
            [key[0], key[1], settings.UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS],
        )
        if cursor.fetchone()[0] < settings.UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS:
            strategy = EXACT
        else:
            cursor.execute(
                "SELECT 1 FROM pg_indexes WHERE tablename = %s AND indexname = %s",
                [vector_index.TABLE, vector_index.channel_index_name(dim, channel_id)],
            )
            strategy = CHANNEL_INDEX if cursor.fetchone() else SHARED_INDEX
    with _strategies_lock:
        _strategies[key] = (time.monotonic(), strategy)
    return strategy


def _semantic_sql(dim: int, channel_id: int, strategy: str) -> str:
    if strategy == EXACT:
        # The uncast column: no HNSW index can serve this order, so PostgreSQL reads the channel's
        # rows through (channel, embedding_dim) and computes every distance: exact, and cheap
        # for a channel this size.
        order, where = (
            "embedding <=> %(vector)s::vector",
            f"channel_id = %(channel)s AND embedding_dim = {int(dim)}",
        )
    else:
        expression, cast = vector_index.vector_expression(dim), vector_index.query_cast(dim)
        order = f"{expression} <=> %(vector)s::{cast}"
        # `embedding_dim = <literal>` (and the channel id as a literal for its own index), not
        # parameters, so that the planner can match the partial index's predicate.
        where = (
            vector_index.channel_predicate(dim, channel_id)
            if strategy == CHANNEL_INDEX
            else f"channel_id = %(channel)s AND embedding_dim = {int(dim)}"
        )
    return f"""
        SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM (
            SELECT id, {order} AS distance
            FROM channels_app_materialchunk
            WHERE {where} AND embedding_model = %(model)s
            ORDER BY distance LIMIT %(pool)s
        ) nearest"""


def _channel_scan_sql(dim: int) -> str:
    """Both sides of a search on a channel below the index threshold, in one pass over its rows.

    The channel's rows are read once through the (channel, embedding_dim) btree; each gets its
    distance (only a vector of the configured model and dimension) and, when it matches the
    candidate query, its rank. Nothing here reads the platform-wide GIN index, whose posting lists
    grow with every other channel's chunks: the cost is the channel's own size."""
    return f"""
    WITH scored AS MATERIALIZED (
        SELECT id,
               CASE WHEN embedding_dim = {int(dim)} AND embedding_model = %(model)s
                    THEN embedding <=> %(vector)s::vector END AS distance,
               CASE WHEN search_vector @@ %(candidates)s::tsquery
                    THEN ts_rank_cd(search_vector, %(ranking)s::tsquery, 1) END AS score
        FROM channels_app_materialchunk
        WHERE channel_id = %(channel)s
    ),
    semantic AS (
        SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM (
            SELECT id, distance FROM scored WHERE distance IS NOT NULL ORDER BY distance, id LIMIT %(pool)s
        ) nearest
    ),
    lexical AS (
        SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM (
            SELECT id, score FROM scored WHERE score IS NOT NULL ORDER BY score DESC, id LIMIT %(pool)s
        ) matched
    ),
    {_FUSED_SQL}"""


# RRF over the two ranked lists, the k best kept before the chunk rows are read for their text.
# The channel id is checked once more on the rows returned.
_FUSED_SQL = """
    fused AS (
        SELECT COALESCE(s.id, l.id) AS id,
               COALESCE(1.0 / (%(rrf_k)s + s.rank), 0) + COALESCE(1.0 / (%(rrf_k)s + l.rank), 0) AS score,
               s.rank AS vector_rank, l.rank AS lexical_rank
        FROM semantic s FULL OUTER JOIN lexical l ON s.id = l.id
        ORDER BY score DESC, id
        LIMIT %(k)s
    )
    SELECT c.id, c.material_id, m.original_name, m.kind, c.page, c.text, f.score, f.vector_rank, f.lexical_rank
    FROM fused f
    JOIN channels_app_materialchunk c ON c.id = f.id
    JOIN channels_app_material m ON m.id = c.material_id
    WHERE c.channel_id = %(channel)s
    ORDER BY f.score DESC, c.id
    """


def _hybrid_sql(
    dim: int, *, semantic: bool, lexical_side: bool, channel_id: int = 0, strategy: str = SHARED_INDEX
) -> str:
    if semantic and lexical_side and strategy == EXACT:
        return _channel_scan_sql(dim)
    semantic_sql = _semantic_sql(dim, channel_id, strategy) if semantic else ""
    # A channel big enough for its own indexes has its own GIN index too
    # (materials.channel_text_index): the predicate with the literal lets the planner use it.
    channel = channel_text_index.predicate(channel_id)
    lexical_sql = f"""
        SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM (
            SELECT id, ts_rank_cd(search_vector, %(ranking)s::tsquery, 1) AS score
            FROM channels_app_materialchunk
            WHERE {channel} AND search_vector @@ %(candidates)s::tsquery
            ORDER BY score DESC, id LIMIT %(pool)s
        ) matched"""
    nothing = "SELECT NULL::bigint AS id, NULL::bigint AS rank WHERE false"
    return f"""
    WITH semantic AS ({semantic_sql if semantic else nothing}),
    lexical AS ({lexical_sql if lexical_side else nothing}),
    {_FUSED_SQL}"""


def hybrid_search(
    channel_id: int,
    query: str,
    k: int = 6,
    *,
    query_vector: list[float] | None = None,
    use_vectors: bool = True,
    use_lexical: bool = True,
) -> list[Passage]:
    """The `k` best passages of the channel's materials for `query`, best first.

    `query_vector` skips embedding the query (the benchmark passes synthetic vectors);
    `use_vectors` / `use_lexical` switch one side off (to compare the sides in tests)."""
    query = (query or "").strip()
    k = max(1, min(int(k), MAX_K))
    if not query and query_vector is None:
        return []
    dim = embeddings.dimension()
    if use_vectors and query_vector is None:
        query_vector = embeddings.embed_texts([query])[0]
    params = {
        "channel": int(channel_id),
        "vector": _vector_literal(query_vector) if use_vectors else None,
        "model": embeddings.model_name(),
        "pool": max(4 * k, 40),  # RRF needs deeper lists than the k it returns
        "rrf_k": RRF_K,
        "k": k,
    }
    strategy = semantic_strategy(params["channel"], dim) if use_vectors else EXACT
    # Only a walk of an HNSW graph reads the settings below, and they are set for one transaction.
    # An exact scan (every channel below the index threshold: most courses) needs neither, and
    # saves three round trips per search: BEGIN, the settings and COMMIT.
    walks_graph = strategy != EXACT
    with transaction.atomic() if walks_graph else nullcontext(), connection.cursor() as cursor:
        lexical_queries = (
            _lexical_queries(cursor, query, params["channel"]) if use_lexical and query else None
        )
        if lexical_queries:
            params["candidates"], params["ranking"] = lexical_queries
        if not use_vectors and not lexical_queries:
            return []
        if walks_graph:
            # SET LOCAL: only this transaction. strict_order iterative scans keep walking the HNSW
            # graph until enough rows pass the channel filter (pgvector >= 0.8), instead of
            # returning fewer than asked when the channel is a small part of the table.
            cursor.execute(
                "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'strict_order', true)",
                [str(max(settings.UEDU_RETRIEVAL_EF_SEARCH, params["pool"]))],
            )
        cursor.execute(
            _hybrid_sql(
                dim,
                semantic=use_vectors,
                lexical_side=bool(lexical_queries),
                channel_id=params["channel"],
                strategy=strategy,
            ),
            params,
        )
        rows = cursor.fetchall()
    return [
        Passage(
            chunk_id=row[0],
            material_id=row[1],
            file_name=row[2],
            kind=row[3],
            page=row[4],
            text=row[5],
            score=float(row[6]),
            vector_rank=row[7],
            lexical_rank=row[8],
        )
        for row in rows
    ]


def snippet(text: str, query: str, width: int = 300) -> str:
    """About `width` characters of `text`, around the first query term it contains."""
    if len(text) <= width:
        return text
    lowered = text.lower()
    positions = [lowered.find(term) for term in lexical.query_terms(query) if len(term) > 1]
    positions = [p for p in positions if p >= 0]
    start = max(0, min(positions) - width // 3) if positions else 0
    start = min(start, len(text) - width)
    if start > 0:  # begin at a word or sentence boundary when one is near
        boundary = re.search(r"[\s。！？；，]", text[start : start + 30])
        if boundary:
            start += boundary.end()
    piece = text[start : start + width].strip()
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(text) else "")
