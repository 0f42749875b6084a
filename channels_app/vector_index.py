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


def existing_dimensions() -> set[int]:
    """Dimensions that have an HNSW index on the chunk table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname LIKE 'chunk_embedding_hnsw_%%'", [TABLE]
        )
        return {int(name.rsplit("_", 1)[1]) for (name,) in cursor.fetchall()}


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
