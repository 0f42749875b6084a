"""Retrieval benchmark: HNSW recall and hybrid-search latency against an exact vector scan.

    .venv/bin/python bench/retrieval.py [--n 100000] [--queries 60]

Runs with the project's own settings (the embedded PostgreSQL + pgvector when DATABASE_URL is
unset) in a scratch database of its own (`uedu_bench_<pid>`, migrated like a test database and
dropped at the end). It loads N chunks of 384-dimension synthetic vectors through binary COPY,
builds the same partial HNSW index the migration creates, and then, for each query, side by side:

- the exact scan: the same channel filter, ordered by the *uncast* column (no index can serve
  it), so PostgreSQL computes every distance: the ground truth and the baseline time;
- the HNSW search alone, at several ef_search values: recall@10 against the exact top 10;
- `channels_app.retrieval.hybrid_search` itself (HNSW + full-text + RRF, as the tool runs it).

Vectors are clustered (200 topics, Gaussian spread), like real chunk embeddings, rather than
uniform noise, on which no ANN index is meaningful. Each chunk's text has 45 words from a shared
20,000-word vocabulary with Zipf frequencies (the most common word is in ~40% of chunks, like
"student" in course notes) and 15 from its topic's own 40 words; a query has two topic words and
one shared word drawn by the same Zipf law, so about half the queries carry a common word.

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.dev")

DIM = 384
TOPICS = 200
SHARED_WORDS = 20_000
K = 10
EF_SEARCH_VALUES = (40, 64, 100, 200)
ROUNDS = 2


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def synthetic_corpus(n: int, rng):
    import numpy as np

    centres = rng.standard_normal((TOPICS, DIM)).astype(np.float32)
    topics = rng.integers(0, TOPICS, size=n)
    vectors = centres[topics] + 0.9 * rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    shared = [f"word{i}" for i in range(SHARED_WORDS)]
    # Zipf's law, offset by 10 ranks: the English stop words the 'english' configuration drops.
    weights = 1.0 / (np.arange(SHARED_WORDS) + 10.0)
    weights /= weights.sum()
    topic_words = [[f"t{t}w{i}" for i in range(40)] for t in range(TOPICS)]
    return centres, topics, vectors, shared, weights, topic_words


def chunk_text(rng, topic: int, shared, weights, topic_words) -> str:
    words = [shared[i] for i in rng.choice(len(shared), size=45, p=weights)]
    words += [topic_words[topic][i] for i in rng.integers(0, len(topic_words[topic]), size=15)]
    rng.shuffle(words)
    return " ".join(words)


def configured_ef_search() -> int:
    from django.conf import settings

    return settings.UEDU_RETRIEVAL_EF_SEARCH


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="chunks to load")
    parser.add_argument("--queries", type=int, default=60, help="queries to time")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--explain", action="store_true", help="print the hybrid query's EXPLAIN ANALYZE to stderr")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database (to inspect it); drop it by hand")
    args = parser.parse_args()

    import django

    django.setup()
    import numpy as np
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from channels_app import vector_index
    from channels_app.models import Channel, Material
    from channels_app.retrieval import _vector_literal, hybrid_search

    if settings.UEDU_EMBEDDING_DIMENSIONS != DIM:
        log(f"note: the configured backend has {settings.UEDU_EMBEDDING_DIMENSIONS} dimensions; the bench uses {DIM}")
        settings.UEDU_EMBEDDING_BACKEND, settings.UEDU_EMBEDDING_DIMENSIONS = "local", DIM
        settings.UEDU_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
    from channels_app import embeddings

    model = embeddings.model_name()  # no model is loaded: every query vector is given
    rng = np.random.default_rng(args.seed)

    scratch = f"uedu_bench_{os.getpid()}"
    connection.settings_dict["TEST"]["NAME"] = scratch  # a database of its own, never the dev one
    original_name = connection.settings_dict["NAME"]
    started = time.monotonic()
    log(f"creating scratch database {scratch} …")
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        owner = get_user_model().objects.create_user("bench-owner")
        channel = Channel.objects.create(slug="bench", name="Bench", owner=owner)
        # Neighbour channel: its rows share the index, so the channel filter is really exercised.
        neighbour = Channel.objects.create(slug="bench-neighbour", name="Neighbour", owner=owner)
        per_material = 1000
        materials = [
            Material.objects.create(
                channel=channel if i % 10 else neighbour, original_name=f"reader-{i}.pdf", kind="pdf",
                size_bytes=1, sha256=f"{i:064x}", status="ready", embedding_model=model,
            )
            for i in range(max(1, args.n // per_material))
        ]

        centres, topics, vectors, shared, weights, topic_words = synthetic_corpus(args.n, rng)
        log(f"loading {args.n} chunks × {DIM} dimensions (binary COPY) …")
        load_started = time.monotonic()
        from pgvector.psycopg import register_vector

        raw = connection.connection
        register_vector(raw)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX IF EXISTS {vector_index.index_name(DIM)}")
        with raw.cursor() as cursor:
            with cursor.copy(
                "COPY channels_app_materialchunk (material_id, channel_id, ordinal, page, text, search_text, "
                "embedding, embedding_model, embedding_dim) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["int8", "int8", "int4", "int4", "text", "text", "vector", "varchar", "int2"])
                for row in range(args.n):
                    material = materials[row // per_material % len(materials)]
                    text = chunk_text(rng, int(topics[row]), shared, weights, topic_words)
                    copy.write_row(
                        [material.pk, material.channel_id, row % per_material, row % 40 + 1, text, text, vectors[row], model, DIM]
                    )
        load_seconds = time.monotonic() - load_started

        log("building the HNSW index …")
        build_started = time.monotonic()
        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '1GB'")
            cursor.execute("SET max_parallel_maintenance_workers = 1")
            cursor.execute(vector_index.create_index_sql(DIM))
            cursor.execute("RESET maintenance_work_mem")
            cursor.execute("VACUUM ANALYZE channels_app_materialchunk")
        build_seconds = time.monotonic() - build_started

        in_channel = sum(1 for m in materials if m.channel_id == channel.pk) * per_material
        queries = []
        for _ in range(args.queries):
            topic = int(rng.integers(0, TOPICS))
            vector = centres[topic] + 0.9 * rng.standard_normal(DIM).astype(np.float32)
            vector /= np.linalg.norm(vector)
            words = [topic_words[topic][int(i)] for i in rng.integers(0, 40, size=2)] + [shared[int(rng.choice(SHARED_WORDS, p=weights))]]
            queries.append((vector.tolist(), " ".join(words)))

        exact_sql = (
            "SELECT id FROM channels_app_materialchunk WHERE channel_id = %s AND embedding_dim = 384 AND embedding_model = %s "
            "ORDER BY embedding <=> %s::vector LIMIT 10"
        )
        hnsw_sql = (
            f"SELECT id FROM channels_app_materialchunk WHERE channel_id = %s AND embedding_dim = 384 AND embedding_model = %s "
            f"ORDER BY {vector_index.vector_expression(DIM)} <=> %s::{vector_index.query_cast(DIM)} LIMIT 10"
        )

        def exact(vector) -> tuple[list[int], float]:
            t = time.perf_counter()
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL enable_indexscan = off")
                cursor.execute(exact_sql, [channel.pk, model, _vector_literal(vector)])
                ids = [r[0] for r in cursor.fetchall()]
            return ids, time.perf_counter() - t

        def hnsw(vector, ef: int) -> list[int]:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'strict_order', true)", [str(ef)])
                cursor.execute(hnsw_sql, [channel.pk, model, _vector_literal(vector)])
                return [r[0] for r in cursor.fetchall()]

        with connection.cursor() as cursor:  # the plans the figures are about
            cursor.execute("EXPLAIN " + hnsw_sql, [channel.pk, model, _vector_literal(queries[0][0])])
            hnsw_plan = " / ".join(r[0].strip() for r in cursor.fetchall())
        if vector_index.index_name(DIM) not in hnsw_plan:
            log(f"warning: the HNSW index is not in the plan: {hnsw_plan}")

        if args.explain:  # the plan of the hybrid query exactly as hybrid_search sends it
            captured = []

            def capture(execute, sql, params, many, context):
                if "WITH semantic" in sql:
                    captured.append((sql, params))
                return execute(sql, params, many, context)

            vector, text = queries[0]
            with connection.execute_wrapper(capture):
                hybrid_search(channel.pk, text, k=K, query_vector=vector)
            sql, params = captured[0]
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'strict_order', true)", [str(configured_ef_search())])
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                log("\n".join(re.sub(r"'\[[^']*\]'", "'[…]'", r[0]) for r in cursor.fetchall()))

        # Side by side in one run, in alternating blocks (exact, hybrid, exact, hybrid) rather than
        # interleaved per query: an exact scan reads the whole table and would evict the index pages
        # a hybrid search right after it needs, which no production search ever suffers.
        log(f"timing {len(queries)} queries × {ROUNDS} rounds, exact and hybrid side by side …")
        exact_times, hybrid_times, truths = [], [], {}
        for _ in range(ROUNDS):
            exact(queries[-1][0])  # warm the block
            for number, (vector, _) in enumerate(queries):
                ids, seconds = exact(vector)
                truths[number] = set(ids)
                exact_times.append(seconds)
            hybrid_search(channel.pk, queries[-1][1], k=K, query_vector=queries[-1][0])
            for vector, text in queries:
                t = time.perf_counter()
                hybrid_search(channel.pk, text, k=K, query_vector=vector)
                hybrid_times.append(time.perf_counter() - t)
        truths = [truths[number] for number in range(len(queries))]

        recall = {}
        for ef in EF_SEARCH_VALUES:
            found = [len(set(hnsw(vector, ef)) & truth) / K for (vector, _), truth in zip(queries, truths)]
            recall[ef] = round(statistics.mean(found), 4)
        configured_ef = settings.UEDU_RETRIEVAL_EF_SEARCH
        if configured_ef not in recall:
            found = [len(set(hnsw(vector, configured_ef)) & truth) / K for (vector, _), truth in zip(queries, truths)]
            recall[configured_ef] = round(statistics.mean(found), 4)

        result = {
            "bench": "retrieval",
            "n": args.n,
            "dim": DIM,
            "channel_rows": in_channel,
            "queries": len(queries),
            "ef_search": configured_ef,
            "hnsw_m": vector_index.HNSW_M,
            "hnsw_ef_construction": vector_index.HNSW_EF_CONSTRUCTION,
            "recall_at_10": recall[configured_ef],
            "recall_by_ef_search": {str(k): v for k, v in sorted(recall.items())},
            "p50_ratio": round(percentile(hybrid_times, 0.5) / percentile(exact_times, 0.5), 4),
            "p95_ratio": round(percentile(hybrid_times, 0.95) / percentile(exact_times, 0.95), 4),
            "hybrid_ms_p50": round(percentile(hybrid_times, 0.5) * 1000, 2),
            "hybrid_ms_p95": round(percentile(hybrid_times, 0.95) * 1000, 2),
            "exact_ms_p50": round(percentile(exact_times, 0.5) * 1000, 2),
            "exact_ms_p95": round(percentile(exact_times, 0.95) * 1000, 2),
            "load_seconds": round(load_seconds, 1),
            "index_build_seconds": round(build_seconds, 1),
            "total_seconds": round(time.monotonic() - started, 1),
        }
    finally:
        if args.keep:
            log(f"kept the scratch database {scratch}")
        else:
            log("dropping the scratch database …")
            connection.creation.destroy_test_db(original_name, verbosity=0)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
