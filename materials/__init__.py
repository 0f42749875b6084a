"""The retrieval pipeline of course materials: a file's text (extraction), its passages (chunking),
their vectors (embeddings) and lexemes (lexical), the indexes that serve them, and the search that
fuses both sides across the channel's languages (retrieval, bilingual); docs/retrieval.md.

Below `channels_app` in .importlinter: it imports no model. The tables it reads and writes
(`channels_app_materialchunk`, `_channel`, `_glossaryterm`, `_channeltermshare`) belong to
`channels_app`, whose `materials` service runs indexing and owns the rows' rules; SQL here names
their columns by hand (tests/test_hand_written_sql.py holds them to the models)."""
