"""Material search across the channel's languages: a query in one language also finds the
passages written in the other (docs/retrieval.md, "Questions in one language, materials in
another").

The local embedding model (all-MiniLM-L6-v2) reads most Han characters as [UNK], and the lexical
side matches Chinese bigrams against Chinese text only: a Chinese question over English slides
finds nothing by either side, and an English question over a Chinese handout finds little. So
when the query's language is not the only language of the channel's materials, the search also
runs in each other language the channel holds, and the rankings are fused by the same RRF as the
two sides of one search (score = Σ 1/(60 + rank)). The query in the other language is, in order:

- one the caller gives (`translations`): the research engine's model translation of the
  question or sub-question the query comes from, or that question itself when it is already in
  that language (agent/engine/translation.py);
- else the channel's glossary (materials.glossary) carrying the query over term by term.

With neither, the query searches as written only. Every query that ran, and which passages each
one found at which rank, is returned with the passages, so the research's steps can show which
query found which passage.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection

from . import embeddings, glossary, languages
from .retrieval import MAX_K, RRF_K, Passage, hybrid_search

AS_WRITTEN, TRANSLATION, QUESTION, GLOSSARY = "as_written", "model_translation", "question", "glossary"
MAX_QUERY_CHARS = 300


@dataclass(frozen=True)
class Query:
    text: str
    language: str
    by: str  # AS_WRITTEN, TRANSLATION (a model wrote it), QUESTION (the research's own) or GLOSSARY

    def as_dict(self) -> dict:
        return {"text": self.text, "language": self.language, "by": self.by}


@dataclass
class Found:
    passage: Passage
    score: float
    ranks: dict[int, int] = field(default_factory=dict)  # query index -> 1-based rank in its search


@dataclass
class Outcome:
    queries: list[Query]
    found: list[Found]
    # Languages the channel holds that no query reached (no translation given, no glossary term).
    unreached: list[str] = field(default_factory=list)

    @property
    def passages(self) -> list[Passage]:
        return [f.passage for f in self.found]


# --------------------------------------------------------------------------- what the channel holds


def refresh_languages(channel_id: int) -> list[str]:
    """Store the set of languages the channel's passages are written in; returns it."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE channels_app_channel SET material_languages = ARRAY(
                SELECT DISTINCT language
                FROM channels_app_materialchunk c CROSS JOIN LATERAL unnest(c.languages) AS language
                WHERE c.channel_id = %s ORDER BY language
            )::varchar(8)[] WHERE id = %s RETURNING material_languages
            """,
            [int(channel_id), int(channel_id)],
        )
        row = cursor.fetchone()
    return list(row[0]) if row else []


def channel_languages(channel_id: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT material_languages FROM channels_app_channel WHERE id = %s", [int(channel_id)])
        row = cursor.fetchone()
    return list(row[0] or []) if row else []


def channel_terms(channel_id: int) -> list[glossary.Term]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT zh, en FROM channels_app_glossaryterm WHERE channel_id = %s ORDER BY zh, en",
            [int(channel_id)],
        )
        rows = cursor.fetchall()
    return [glossary.Term(zh=zh, en=en) for zh, en in rows]


# --------------------------------------------------------------------------- the search


def queries_for(
    channel_id: int,
    query: str,
    *,
    translations: list[dict] | None = None,
    held: tuple[str, ...] | list[str] | None = None,
) -> tuple[list[Query], list[str]]:
    """The queries one search runs: as written, then one per other language the channel holds
    (`held`, read from the channel when not given; a given translation, else the glossary's).
    Also the languages no query could reach."""
    query = (query or "").strip()
    language = languages.main_language(query)
    written = Query(query, language, AS_WRITTEN)
    held = channel_languages(channel_id) if held is None else list(held)
    others = [other for other in held if other != language] if language else []
    if not others:
        return [written], []
    queries, unreached, terms = [written], [], None
    for other in others:
        given = next(
            (
                t
                for t in translations or []
                if isinstance(t, dict)
                and t.get("language") == other
                and isinstance(t.get("text"), str)
                and t["text"].strip()
            ),
            None,
        )
        if given is not None:
            by = TRANSLATION if given.get("by") == "model" else QUESTION
            queries.append(Query(given["text"].strip()[:MAX_QUERY_CHARS], other, by))
            continue
        if terms is None:
            terms = channel_terms(channel_id)
        expanded = glossary.expand(query, terms, other)
        if expanded:
            queries.append(Query(expanded[:MAX_QUERY_CHARS], other, GLOSSARY))
        else:
            unreached.append(other)
    return queries, unreached


def search(
    channel_id: int,
    query: str,
    k: int = 6,
    *,
    translations: list[dict] | None = None,
    held: tuple[str, ...] | None = None,
) -> Outcome:
    """The `k` best passages for `query` over the channel's languages, best first.

    `translations`: [{"language", "text", "by"}] where "by" is "model" for a model's translation;
    the first one of each language the query needs is used. `held`: the channel's material
    languages when the caller read them already (a research reads them with its channel)."""
    k = max(1, min(int(k), MAX_K))
    queries, unreached = queries_for(channel_id, query, translations=translations, held=held)
    # A query in a language the embedding model cannot read is searched by the lexical side
    # only: the local model's vector of a Chinese query is [UNK]s, and its ranking would push
    # the exact bigram matches down (docs/retrieval.md). One encoding for the rest (the local
    # encoder batches them in one forward pass).
    readable = [i for i, q in enumerate(queries) if q.text and embeddings.reads(q.language)]
    encoded = embeddings.embed_texts([queries[i].text for i in readable]) if readable else []
    vectors = dict(zip(readable, encoded))
    if len(queries) == 1:
        passages = _ranked(channel_id, queries[0], k, vectors.get(0))
        return Outcome(
            queries=queries,
            found=[Found(p, p.score, {0: rank}) for rank, p in enumerate(passages, 1)],
            unreached=unreached,
        )
    depth = min(MAX_K, 2 * k)  # RRF needs more of each list than the k it keeps
    fused: dict[int, Found] = {}
    for index, q in enumerate(queries):
        for rank, passage in enumerate(_ranked(channel_id, q, depth, vectors.get(index)), 1):
            found = fused.setdefault(passage.chunk_id, Found(passage, 0.0))
            found.score += 1.0 / (RRF_K + rank)
            found.ranks[index] = rank
    best = sorted(fused.values(), key=lambda f: (-f.score, f.passage.chunk_id))[:k]
    return Outcome(queries=queries, found=best, unreached=unreached)


def _ranked(channel_id: int, query: Query, k: int, vector: list[float] | None) -> list[Passage]:
    if vector is None:
        return hybrid_search(channel_id, query.text, k, use_vectors=False)
    return hybrid_search(channel_id, query.text, k, query_vector=vector)
