"""Per-channel lexeme shares for the lexical side's common-terms rule (docs/retrieval.md).

`refresh(channel_id)` rewrites a channel's rows from its chunks' tsvectors (`ts_stat`) when the
channel holds at least UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS chunks, and removes them otherwise.
`lexemes_and_shares(cursor, channel_id, text)` reads a query's lexemes and their shares in one
round trip."""

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


def lexemes_and_shares(cursor, channel_id: int, text: str) -> tuple[list[str], dict[str, float] | None]:
    """The lexemes of `text` (normalised as chunk text is: bigrams, stemming, stop words) and
    {lexeme: share of the channel's chunks} for them (a lexeme under the floor is absent), or
    None for the shares when the channel has none (a small channel: use the platform's). One
    round trip."""
    cursor.execute(
        f"""
        SELECT q.lexeme, s.share, EXISTS (SELECT 1 FROM {TABLE} WHERE channel_id = %s)
        FROM unnest(tsvector_to_array(to_tsvector('english', %s))) WITH ORDINALITY AS q(lexeme, n)
        LEFT JOIN {TABLE} s ON s.channel_id = %s AND s.lexeme = q.lexeme
        ORDER BY q.n
        """,
        [int(channel_id), text, int(channel_id)],
    )
    rows = cursor.fetchall()
    lexemes = [lexeme for lexeme, _, _ in rows]
    if not rows or not rows[0][2]:
        return lexemes, None
    return lexemes, {lexeme: share for lexeme, share, _ in rows if share is not None}
