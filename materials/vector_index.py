"""How chunk embeddings of any dimension are stored, indexed and compared.

MaterialChunk.embedding is an untyped pgvector `vector` column, with the dimension beside it
(`embedding_dim`). An HNSW index needs a fixed dimension, so each dimension in use gets its own
*partial expression* index:

    CREATE INDEX chunk_embedding_hnsw_384 ON channels_app_materialchunk
      USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE embedding_dim = 384

and every query repeats that expression and predicate (`vector_expression()`), which is what lets
the planner use the index. Switching backend (say to a 1536-dimension model) needs no schema
migration: `manage.py reembed_materials` re-embeds every chunk and creates the index for the new
dimension. Above 2,000 dimensions pgvector's HNSW cannot index `vector`, so those are indexed
(and compared) as `halfvec` (up to 4,000; settings refuse more).
"""

from __future__ import annotations

from django.db import connection

TABLE = "channels_app_materialchunk"
# Tuned with bench/retrieval.py (100,000 chunks × 384): with ef_construction 64 recall@10 at
# ef_search 100 varied between 0.96 and 0.99 from build to build; 128 gives 0.99–1.0 for twice the
# build time (about a minute on two cores), paid once per index. The migration uses the same values.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128


def _sql_type(dim: int) -> str:
    return "vector" if dim <= 2000 else "halfvec"


def index_name(dim: int) -> str:
    return f"chunk_embedding_hnsw_{int(dim)}"


def vector_expression(dim: int) -> str:
    """The indexed expression, e.g. `embedding::vector(384)`; use it verbatim in queries."""
    return f"embedding::{_sql_type(dim)}({int(dim)})"


def query_cast(dim: int) -> str:
    """The cast for a query vector parameter, matching vector_expression()."""
    return f"{_sql_type(dim)}({int(dim)})"


def create_index_sql(dim: int, *, concurrently: bool = False) -> str:
    ops = "vector_cosine_ops" if _sql_type(dim) == "vector" else "halfvec_cosine_ops"
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {index_name(dim)} ON {TABLE} "
        f"USING hnsw (({vector_expression(dim)}) {ops}) "
        f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) WHERE embedding_dim = {int(dim)}"
    )


def index_names(prefix: str) -> list[str]:
    """Names of the chunk table's indexes that start with `prefix` (taken literally)."""
    like = prefix.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%") + "%"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname LIKE %s", [TABLE, like]
        )
        return [name for (name,) in cursor.fetchall()]


def existing_dimensions() -> set[int]:
    """Dimensions that have an HNSW index on the chunk table."""
    return {int(name.rsplit("_", 1)[1]) for name in index_names("chunk_embedding_hnsw_")}


def ensure_index(dim: int) -> bool:
    """Create the HNSW index for `dim` if it is missing; True when it was created."""
    if dim in existing_dimensions():
        return False
    with connection.cursor() as cursor:
        # Inside a caller's transaction, deferred foreign-key checks of rows written earlier would
        # make PostgreSQL refuse DDL on the table ("pending trigger events"): run them now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(create_index_sql(dim))
    return True


def drop_unused_indexes(keep: int) -> list[int]:
    """Drop HNSW indexes of dimensions no chunk uses any more (after a re-embed)."""
    dropped = []
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # see ensure_index
        for dim in sorted(existing_dimensions() - {keep}):
            cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {TABLE} WHERE embedding_dim = %s)", [dim])
            if not cursor.fetchone()[0]:
                cursor.execute(f"DROP INDEX IF EXISTS {index_name(dim)}")
                dropped.append(dim)
    return dropped


# A course channel is a small part of a big platform's chunk table. Filtered through the shared
# index above, a search on a channel holding 0.1–1 % of the rows has to walk hundreds of graph
# nodes per row it keeps (pgvector's iterative scan gives up at hnsw.max_scan_tuples), so it
# starves or crawls; see docs/retrieval.md for the figures. Hence, per (dimension, channel):
# - below UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS chunks, the search is an exact scan of the
#   channel's own rows (through the (channel, embedding_dim) index): exact, and a few ms;
# - from that size on, the channel gets a partial HNSW index of its own, built after indexing.
def channel_index_name(dim: int, channel_id: int) -> str:
    return f"chunk_channel_hnsw_{int(dim)}_{int(channel_id)}"


def channel_predicate(dim: int, channel_id: int) -> str:
    """The partial index's predicate; queries repeat it with literals so the planner can match it."""
    return f"embedding_dim = {int(dim)} AND channel_id = {int(channel_id)}"


def create_channel_index_sql(dim: int, channel_id: int, *, concurrently: bool = False) -> str:
    ops = "vector_cosine_ops" if _sql_type(dim) == "vector" else "halfvec_cosine_ops"
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {channel_index_name(dim, channel_id)} "
        f"ON {TABLE} USING hnsw (({vector_expression(dim)}) {ops}) "
        f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) WHERE {channel_predicate(dim, channel_id)}"
    )


def channel_indexes() -> set[tuple[int, int]]:
    """(dimension, channel id) of every per-channel HNSW index."""
    out = set()
    for name in index_names("chunk_channel_hnsw_"):
        dim, channel_id = name.removeprefix("chunk_channel_hnsw_").split("_")
        out.add((int(dim), int(channel_id)))
    return out


def big_groups(*columns: str) -> set[tuple[int, ...]]:
    """The values of `columns` (e.g. embedding_dim, channel_id) whose chunks reach
    UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS: the groups that get an index of their own."""
    from django.conf import settings

    names = ", ".join(columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {names} FROM {TABLE} GROUP BY {names} HAVING count(*) >= %s",
            [settings.UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS],
        )
        return {tuple(int(value) for value in row) for row in cursor.fetchall()}


def channels_needing_own_index() -> list[tuple[int, int]]:
    """(dimension, channel id) pairs with enough chunks for an index of their own and none yet."""
    return sorted(big_groups("embedding_dim", "channel_id") - channel_indexes())


def ensure_channel_index(dim: int, channel_id: int) -> bool:
    """Give a channel its own HNSW index once it holds enough chunks; True when it was created."""
    if (dim, channel_id) in channel_indexes():
        return False
    return build_when_big(
        channel_predicate(dim, channel_id),
        lambda concurrently: create_channel_index_sql(dim, channel_id, concurrently=concurrently),
    )


def build_when_big(predicate: str, create_sql) -> bool:
    """Run `create_sql(concurrently)` for a per-channel index once the rows under `predicate` reach
    UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS; True when it ran. Inside a transaction the index is
    built there; outside (the indexing task) CONCURRENTLY, without blocking other channels' writes."""
    from django.conf import settings

    threshold = settings.UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS
    with connection.cursor() as cursor:
        # Counts at most the threshold's worth of rows, whatever the channel's size.
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {TABLE} WHERE {predicate} LIMIT %s) s", [threshold]
        )
        if cursor.fetchone()[0] < threshold:
            return False
        if connection.in_atomic_block:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # see ensure_index
            cursor.execute(create_sql(False))
        else:
            cursor.execute(create_sql(True))
    return True
