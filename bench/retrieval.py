"""Retrieval at platform scale: a small course inside a big platform.

    .venv/bin/python bench/retrieval.py [--queries 40] [--rebuild] [--build-only]

1,000,000 chunks over 500 channels; two searched channels, one holding 1 % of all chunks and one
holding 0.1 % (one case each). Text and vectors come from the product's local embedding model
over generated course-like text, extended to a million rows by a fitted near-duplicate
perturbation: bench/retrieval_corpus.py says exactly how. The data set is built once into a
database of its own on the embedded PostgreSQL (`uedu_bench_retrieval_<fingerprint>`, under
var/pgdata) with the product's schema and indexes, and reused by later runs (`--rebuild` drops it).

For each case and query, side by side in one run:
- exact scan: the channel filter with the vectors ordered by the *uncast* column, index scans
  off, so PostgreSQL computes the distance of every chunk of the channel: the vector ground truth
  and the baseline time;
- exact hybrid ranking, the slow way: exact vector ranking of the channel's pool, the lexical
  ranking (the GIN index is exact), fused by the same RRF in Python;
- `channels_app.retrieval.hybrid_search` as the tool runs it: its recall@10 against the exact
  hybrid ranking, and its vector side alone (`use_lexical=False`) against the exact scan.

Exits non-zero unless every case has recall@10 ≥ 0.95 (hybrid output) and p95 ≤ 5 % of the exact
scan. The last line printed is one JSON object; `uptime` goes with it (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.dev")

import retrieval_corpus as corpus  # noqa: E402
from _stack import uptime  # noqa: E402

N = 1_000_000
CHANNELS = 500
SHARES = (0.01, 0.001)  # channel 0 holds 1 %, channel 1 holds 0.1 %
K = 10
PER_MATERIAL = 200
RECALL_TARGET = 0.95
P95_RATIO_TARGET = 0.05


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def point_django_at(db_name: str) -> str:
    from uedu_dr import devstack

    db = devstack.ensure_postgres()
    admin_url = devstack.postgres_url(dict(db, NAME="postgres"))
    os.environ["DATABASE_URL"] = devstack.postgres_url(dict(db, NAME=db_name))
    return admin_url


def database_state(admin_url: str, db_name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db_name]).fetchone():
            return "absent"
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        ready = conn.execute("SELECT to_regclass('bench_corpus_ready')").fetchone()[0]
    return "ready" if ready else "partial"


def build(admin_url: str, db_name: str, state: str) -> dict:
    """Create, migrate and fill the cached database; returns build timings."""
    import numpy as np
    import psycopg

    timings = {}
    if state != "absent":  # partial, or a rebuild asked for
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db_name}"')
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True, env=dict(os.environ)
    )

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection

    from channels_app import embeddings, lexical, vector_index
    from channels_app.models import Channel, Material

    t = time.monotonic()
    log("embedding the real passages with the local model (cached under var/bench) …")
    real = corpus.real_embeddings(ROOT, embeddings.embed_texts)
    timings["embed_seconds"] = round(time.monotonic() - t, 1)
    log("deriving 1,000,000 vectors …")
    owner_of, channel_subject, vectors, a, b, alpha, duplicate = corpus.derive(real, N, CHANNELS, SHARES)
    np.save(corpus._cache_dir(ROOT) / "channel_subject.npy", channel_subject)

    model = embeddings.model_name()
    owner = get_user_model().objects.create_user("bench-owner")
    channels = Channel.objects.bulk_create(
        [Channel(slug=f"bench-{i}", name=f"Course {i}", owner=owner) for i in range(CHANNELS)]
    )
    counts = np.bincount(owner_of, minlength=CHANNELS)
    materials: list[list[int]] = []
    for i, channel in enumerate(channels):
        rows = Material.objects.bulk_create(
            [
                Material(
                    channel=channel,
                    original_name=f"course-{i}-reader-{m}.pdf",
                    kind="pdf",
                    size_bytes=1,
                    sha256=f"{i:032x}{m:032x}",
                    status="ready",
                    embedding_model=model,
                )
                for m in range((int(counts[i]) + PER_MATERIAL - 1) // PER_MATERIAL)
            ]
        )
        materials.append([row.pk for row in rows])

    log("loading the chunks (binary COPY) …")
    t = time.monotonic()
    from pgvector.psycopg import register_vector

    raw = connection.ensure_connection() or connection.connection
    register_vector(raw)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {vector_index.index_name(corpus.DIM)}")
    seen = np.zeros(CHANNELS, dtype=np.int64)
    texts = real["texts"]
    with raw.cursor() as cursor:
        with cursor.copy(
            "COPY channels_app_materialchunk (material_id, channel_id, ordinal, page, text, search_text, "
            "embedding, embedding_model, embedding_dim) FROM STDIN WITH (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int8", "int8", "int4", "int4", "text", "text", "vector", "varchar", "int2"])
            for row in range(N):
                c = int(owner_of[row])
                position = int(seen[c])
                seen[c] += 1
                text = corpus.chunk_text(texts, int(a[row]), int(b[row]), float(alpha[row]))
                copy.write_row(
                    [
                        materials[c][position // PER_MATERIAL],
                        channels[c].pk,
                        position % PER_MATERIAL,
                        position % 40 + 1,
                        text,
                        lexical.search_text(text),
                        vectors[row],
                        model,
                        corpus.DIM,
                    ]
                )
                if row % 100_000 == 0:
                    log(f"  {row:,} rows")
    raw.commit()
    timings["load_seconds"] = round(time.monotonic() - t, 1)

    log("building the indexes (HNSW over 1M rows takes a while on two shared cores) …")
    t = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '3GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        cursor.execute(vector_index.create_index_sql(corpus.DIM))
    timings["hnsw_build_seconds"] = round(time.monotonic() - t, 1)
    t = time.monotonic()
    with connection.cursor() as cursor:
        for dim, channel_id in vector_index.channels_needing_own_index():
            cursor.execute(vector_index.create_channel_index_sql(dim, channel_id))
        cursor.execute("RESET maintenance_work_mem")
    timings["channel_index_build_seconds"] = round(time.monotonic() - t, 1)
    raw.commit()
    # VACUUM cannot run inside a transaction block. The connection goes back to the mode Django
    # set it to (autocommit): left out of it, the next statement through Django opened a
    # transaction that the term shares' atomic block then could not start from, so a fresh
    # build failed right after building.
    django_mode = raw.autocommit
    raw.autocommit = True
    with raw.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE channels_app_materialchunk")
        cursor.execute("CREATE TABLE bench_corpus_ready (built_at timestamptz, timings jsonb)")
        cursor.execute("INSERT INTO bench_corpus_ready VALUES (now(), %s)", [json.dumps(timings)])
    raw.autocommit = django_mode
    return timings


def ensure_term_shares(db_name: str) -> dict:
    """Bring a cached data set up to the current schema and give every big channel the lexeme
    shares indexing would have given it (channels_app.term_shares); only the missing ones."""
    from django.conf import settings
    from django.db import connection

    from channels_app import term_shares

    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True, env=dict(os.environ)
    )
    t = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT channel_id FROM channels_app_materialchunk GROUP BY channel_id HAVING count(*) >= %s "
            f"EXCEPT SELECT DISTINCT channel_id FROM {term_shares.TABLE}",
            [settings.UEDU_RETRIEVAL_CHANNEL_TERMS_MIN_ROWS],
        )
        missing = [row[0] for row in cursor.fetchall()]
    if missing:
        log(f"computing the lexeme shares of {len(missing)} channels …")
    for channel_id in missing:
        term_shares.refresh(channel_id)
    return {"channels": len(missing), "seconds": round(time.monotonic() - t, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=40, help="queries per case")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rebuild", action="store_true", help="drop the cached data set and build it again")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument(
        "--strategy",
        choices=["exact", "channel_index", "shared_index"],
        help="force the semantic side's strategy (to compare designs); default: the product's choice",
    )
    args = parser.parse_args()

    db_name = f"uedu_bench_retrieval_{corpus.fingerprint(N, CHANNELS, SHARES)}"
    admin_url = point_django_at(db_name)
    # Any state but "absent" makes build() drop the database first.
    state = "rebuild" if args.rebuild else database_state(admin_url, db_name)
    build_timings = None
    if state != "ready":
        log(f"building the cached data set {db_name} ({state}) …")
        build_timings = build(admin_url, db_name, state)
    else:
        import django

        django.setup()
    term_timings = ensure_term_shares(db_name)
    if args.build_only:
        print(
            json.dumps({"bench": "retrieval", "built": db_name, "timings": build_timings, "uptime": uptime()})
        )
        return 0

    import numpy as np
    from django.db import connection, transaction

    from channels_app import embeddings, retrieval
    from channels_app.models import Channel

    if args.strategy:
        retrieval.semantic_strategy = lambda channel_id, dim: args.strategy

    with connection.cursor() as cursor:
        cursor.execute("SELECT timings FROM bench_corpus_ready")
        stored = cursor.fetchone()[0]
        build_timings = json.loads(stored) if isinstance(stored, str) else stored
    real = corpus.real_embeddings(ROOT, None)
    channel_subject = np.load(corpus._cache_dir(ROOT) / "channel_subject.npy")
    subjects = corpus.subjects()
    model = embeddings.model_name()
    pool = max(4 * K, 40)  # as hybrid_search asks each side for

    exact_sql = (
        "SELECT id FROM channels_app_materialchunk WHERE channel_id = %s AND embedding_dim = 384 AND embedding_model = %s "
        "ORDER BY embedding <=> %s::vector, id LIMIT %s"
    )

    def exact(channel_id: int, vector) -> tuple[list[int], float]:
        t = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute(exact_sql, [channel_id, model, retrieval._vector_literal(vector), pool])
            ids = [r[0] for r in cursor.fetchall()]
        return ids, time.perf_counter() - t

    def exact_hybrid(channel_id: int, text: str, vector_pool: list[int]) -> list[int]:
        """RRF over the exact vector pool and the lexical ranking, computed in Python."""
        scores: dict[int, float] = {}
        for rank, chunk_id in enumerate(vector_pool, 1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (retrieval.RRF_K + rank)
        with transaction.atomic(), connection.cursor() as cursor:
            queries_ = retrieval._lexical_queries(cursor, text, channel_id)
            if queries_:
                candidates, ranking = queries_
                cursor.execute(
                    "SELECT id FROM channels_app_materialchunk WHERE channel_id = %s AND search_vector @@ %s::tsquery "
                    "ORDER BY ts_rank_cd(search_vector, %s::tsquery, 1) DESC, id LIMIT %s",
                    [channel_id, candidates, ranking, pool],
                )
                for rank, (chunk_id,) in enumerate(cursor.fetchall(), 1):
                    scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (retrieval.RRF_K + rank)
        return [chunk_id for chunk_id, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:K]]

    cases = []
    for index, share in enumerate(SHARES):
        channel = Channel.objects.get(slug=f"bench-{index}")
        subject = subjects[int(channel_subject[index])]
        texts = corpus.queries(subject, args.queries, seed=100 + index)
        vectors = embeddings.embed_texts(texts)
        rows = channel_rows(connection, channel.pk)
        strategy = retrieval.semantic_strategy(channel.pk, corpus.DIM)
        log(
            f"case {share:.1%}: channel {channel.slug} with {rows:,} chunks ({subject[0]}), strategy {strategy} …"
        )
        exact_times, hybrid_times, vector_pools, _truth_hybrid = [], [], [], []
        for round_ in range(args.rounds):
            exact(channel.pk, vectors[-1])  # warm
            for vector in vectors:
                ids, seconds = exact(channel.pk, vector)
                exact_times.append(seconds)
                if round_ == 0:
                    vector_pools.append(ids)
            retrieval.hybrid_search(channel.pk, texts[-1], k=K, query_vector=vectors[-1])
            for text, vector in zip(texts, vectors):
                t = time.perf_counter()
                retrieval.hybrid_search(channel.pk, text, k=K, query_vector=vector)
                hybrid_times.append(time.perf_counter() - t)
        hybrid_recall, vector_recall = [], []
        for text, vector, vector_pool in zip(texts, vectors, vector_pools):
            truth = exact_hybrid(channel.pk, text, vector_pool)
            got = [p.chunk_id for p in retrieval.hybrid_search(channel.pk, text, k=K, query_vector=vector)]
            hybrid_recall.append(len(set(got) & set(truth)) / len(truth))
            vector_only = [
                p.chunk_id
                for p in retrieval.hybrid_search(
                    channel.pk, text, k=K, query_vector=vector, use_lexical=False
                )
            ]
            vector_recall.append(len(set(vector_only) & set(vector_pool[:K])) / K)
        case = {
            "channel_share": share,
            "channel_rows": rows,
            "strategy": strategy,
            "recall_at_10": round(statistics.mean(hybrid_recall), 4),
            "vector_recall_at_10": round(statistics.mean(vector_recall), 4),
            "hybrid_ms_p50": round(percentile(hybrid_times, 0.5) * 1000, 2),
            "hybrid_ms_p95": round(percentile(hybrid_times, 0.95) * 1000, 2),
            "exact_ms_p50": round(percentile(exact_times, 0.5) * 1000, 2),
            "exact_ms_p95": round(percentile(exact_times, 0.95) * 1000, 2),
            "p50_ratio": round(percentile(hybrid_times, 0.5) / percentile(exact_times, 0.5), 4),
            "p95_ratio": round(percentile(hybrid_times, 0.95) / percentile(exact_times, 0.95), 4),
            "load_average": load_average(),
        }
        log(json.dumps(case))
        cases.append(case)

    failures = [
        f"{c['channel_share']:.1%}: "
        + ", ".join(
            (
                [f"recall@10 {c['recall_at_10']} < {RECALL_TARGET}"]
                if c["recall_at_10"] < RECALL_TARGET
                else []
            )
            + (
                [f"p95 ratio {c['p95_ratio']} > {P95_RATIO_TARGET}"]
                if c["p95_ratio"] > P95_RATIO_TARGET
                else []
            )
        )
        for c in cases
        if c["recall_at_10"] < RECALL_TARGET or c["p95_ratio"] > P95_RATIO_TARGET
    ]
    result = {
        "bench": "retrieval",
        "n": N,
        "channels": CHANNELS,
        "queries_per_case": args.queries,
        "ef_search": retrieval.settings.UEDU_RETRIEVAL_EF_SEARCH,
        "forced_strategy": args.strategy,
        "corpus_fit": corpus.fit_report(real),
        "build": build_timings,
        "term_shares": term_timings,
        "cases": cases,
        "uptime": uptime(),
        "ok": not failures,
    }
    if failures:
        log("targets missed: " + "; ".join(failures))
    print(json.dumps(result))
    return 0 if not failures else 1


def channel_rows(connection, channel_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM channels_app_materialchunk WHERE channel_id = %s", [channel_id])
        return cursor.fetchone()[0]


if __name__ == "__main__":
    sys.exit(main())
