"""Per-channel lexeme shares for the lexical side's common-terms rule (docs/retrieval.md).

`refresh(channel_id)` rewrites a channel's rows from its chunks' tsvectors (`ts_stat`) when the
channel holds at least UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS chunks, and removes them otherwise.
`shares(cursor, channel_id, lexemes)` reads them for one search in one round trip."""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction

TABLE = "channels_app_channeltermshare"
# Lexemes in fewer of the channel's chunks are not stored: they are rare under any cut-off in use.
FLOOR = 0.001


def refresh(channel_id: int) -> int:
    """Rewrite the channel's shares; returns how many lexemes were stored (0 for a small channel)."""
    channel_id = int(channel_id)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE channel_id = %s", [channel_id])
        cursor.execute("SELECT count(*) FROM channels_app_materialchunk WHERE channel_id = %s", [channel_id])
        chunks = cursor.fetchone()[0]
        if chunks < settings.UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS:
            return 0
        # ts_stat takes the query as text; the channel id is an int, so the literal is safe.
        cursor.execute(
            f"""
            INSERT INTO {TABLE} (channel_id, lexeme, share)
            SELECT %s, word, ndoc::float8 / %s
            FROM ts_stat('SELECT search_vector FROM channels_app_materialchunk WHERE channel_id = {channel_id}')
            WHERE ndoc::float8 / %s >= %s
            """,
            [channel_id, chunks, chunks, FLOOR],
        )
        return cursor.rowcount


def shares(cursor, channel_id: int, lexemes: list[str]) -> dict[str, float] | None:
    """{lexeme: share of the channel's chunks} for the given lexemes (a lexeme under the floor is
    absent), or None when the channel has no shares (a small channel: use the platform's)."""
    cursor.execute(
        f"""
        SELECT lexeme, share FROM {TABLE} WHERE channel_id = %s AND lexeme = ANY(%s)
        UNION ALL
        SELECT NULL, NULL WHERE EXISTS (SELECT 1 FROM {TABLE} WHERE channel_id = %s)
        """,
        [int(channel_id), list(lexemes), int(channel_id)],
    )
    rows = cursor.fetchall()
    if not rows:
        return None
    return {lexeme: share for lexeme, share in rows if lexeme is not None}
