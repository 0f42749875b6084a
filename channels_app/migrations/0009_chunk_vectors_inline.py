"""Chunk vectors stay in the chunk's row instead of the TOAST table.

A 384-dimension vector is 1,540 bytes; with the chunk's text, search text and tsvector the row
passes PostgreSQL's 2 kB TOAST threshold, and pgvector's `vector` type is stored EXTERNAL, so every
vector went out of line. An exact scan of a channel (every course below the index threshold) then
paid a TOAST index lookup and another page per row: on the retrieval bench's 1M-chunk platform the
TOAST table was 1.6 GB beside a 0.7 GB heap. MAIN storage keeps the vector in the row (it goes out
of line only when nothing else makes the row fit a page, e.g. thousands of dimensions), and a
tuple target near a page's size keeps the text columns inline too, so the lexical side's tsvector
is read from the same page. Applies to rows written from now on; `VACUUM FULL
channels_app_materialchunk` rewrites older rows (docs/retrieval.md)."""

from django.db import migrations

FORWARD = [
    "ALTER TABLE channels_app_materialchunk ALTER COLUMN embedding SET STORAGE MAIN",
    "ALTER TABLE channels_app_materialchunk SET (toast_tuple_target = 8160)",
]
BACKWARD = [
    "ALTER TABLE channels_app_materialchunk ALTER COLUMN embedding SET STORAGE EXTERNAL",
    "ALTER TABLE channels_app_materialchunk RESET (toast_tuple_target)",
]


class Migration(migrations.Migration):
    dependencies = [("channels_app", "0008_channel_term_shares")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
