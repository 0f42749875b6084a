"""A big channel's own full-text index (docs/retrieval.md).

The platform-wide GIN index on `search_vector` holds every channel's chunks: the posting list of
a word grows with the whole platform, and a search of one channel reads the other channels'
entries before its channel filter drops them. A channel from UEDU_RETRIEVAL_CHANNEL_INDEX_MIN_ROWS
chunks on (the size that gives it its own HNSW index, materials.vector_index) also gets a partial
GIN index of its own, which its lexical side reads instead. Smaller channels need none: both sides
of their search read their rows once (retrieval._channel_scan_sql)."""

from __future__ import annotations

from . import vector_index
from .vector_index import TABLE

_PREFIX = "chunk_channel_gin_"


def index_name(channel_id: int) -> str:
    return f"{_PREFIX}{int(channel_id)}"


def predicate(channel_id: int) -> str:
    """The partial index's predicate; queries repeat it with the literal so the planner can match it."""
    return f"channel_id = {int(channel_id)}"


def create_sql(channel_id: int, *, concurrently: bool = False) -> str:
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {index_name(channel_id)} "
        f"ON {TABLE} USING gin (search_vector) WHERE {predicate(channel_id)}"
    )


def existing() -> set[int]:
    """Channel ids that have their own GIN index."""
    return {int(name.removeprefix(_PREFIX)) for name in vector_index.index_names(_PREFIX)}


def channels_needing_one() -> list[int]:
    """Channels with enough chunks for an index of their own and none yet."""
    return sorted({channel_id for (channel_id,) in vector_index.big_groups("channel_id")} - existing())


def ensure(channel_id: int) -> bool:
    """Give a channel its own GIN index once it holds enough chunks; True when it was created."""
    if channel_id in existing():
        return False
    return vector_index.build_when_big(
        predicate(channel_id), lambda concurrently: create_sql(channel_id, concurrently=concurrently)
    )
