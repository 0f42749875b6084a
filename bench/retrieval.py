"""Retrieval at platform scale: a course inside a big platform, and a platform that grows.

    .venv/bin/python bench/retrieval.py [--queries 40] [--rounds 3] [--rebuild] [--build-only]

Two platforms, 100,000 and 1,000,000 chunks, each over 500 channels; in each, three searched
channels holding 0.1 %, 1 % and 10 % of all chunks (one case each, six cases). Text and vectors come from the product's local embedding model
over generated course-like text, extended to a million rows by a fitted near-duplicate
perturbation: bench/retrieval_corpus.py says exactly how. The data set is built once into a
database of its own per platform size on the embedded PostgreSQL
(`uedu_bench_retrieval_<fingerprint>`, under var/pgdata) with the product's schema and indexes,
and reused by later runs (`--rebuild` drops them). The two platforms are measured in alternating
rounds, so a change in the machine's load falls on both.

For each case and query, side by side in one run:
- exact scan: the channel filter with the vectors ordered by the *uncast* column, index scans
  off, so PostgreSQL computes the distance of every chunk of the channel: the vector ground truth
  and the baseline time;
- exact hybrid ranking, the slow way: exact vector ranking of the channel's pool, the lexical
  ranking (the GIN index is exact), fused by the same RRF in Python;
- `materials.retrieval.hybrid_search` as the tool runs it: its recall@10 against the exact
  hybrid ranking, and its vector side alone (`use_lexical=False`) against the exact scan.

The 10 % channel of the 1M platform is made of as many distinct passages as chunks, each with
its real vector (bench/retrieval_corpus.py, point 5): its recall measures the index, not a data
set of near-copies. Its build timings and the nearest-neighbour cosines of a sample of its
passages are printed with the build.

Exits non-zero unless every case has recall@10 ≥ 0.95 (hybrid output), hybrid p95 ≤ 10 ms
(0.1 % and 1 % channels) or ≤ 20 ms (10 %) when the reference work reads ≤ 12 ms (at another
speed the p95s are printed, not judged), and the same course's p95 on the 1M platform is at most
1.3 × its p95 on the 100k one (`p95_growth_same_rows_from_100k`: a 1M case against the 100k
case whose channel has as many chunks, the platform grown around the same course). The exact
scan is printed as a reference only, and so is `p95_growth_from_100k` (the same share, a channel
ten times bigger). The last line printed is one JSON object; `uptime` goes with it (the machine
is shared).
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

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "uedu_dr.settings.dev")
# A connection per process, no pool: use_database() switches platforms by closing it, which a
# pool would answer with the old database's connection.
os.environ["UEDU_DB_POOL"] = "false"

import retrieval_corpus as corpus  # noqa: E402
from _stack import reference_cpu_ms, uptime  # noqa: E402

SIZES = (100_000, 1_000_000)
CHANNELS = 500
SHARES = (0.001, 0.01, 0.1)  # channel i holds SHARES[i] of the platform's chunks
K = 10
PER_MATERIAL = 200
RECALL_TARGET = 0.95
P95_MS_TARGET = {0.001: 10.0, 0.01: 10.0, 0.1: 20.0}
GROWTH_TARGET = 1.3
REFERENCE_TARGET_MS = 12.0  # the absolute p95 targets are judged only at the machine's usual speed


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# Raised when the chunk table's physical layout changes (2: vectors stored in the row, migration
# channels_app 0009), so that a cached data set loaded under the old layout is built again.
LAYOUT = 2


def database_name(n: int) -> str:
    return f"uedu_bench_retrieval_{corpus.fingerprint(n, CHANNELS, SHARES)}_l{LAYOUT}"


def start_postgres() -> str:
    """Start the embedded PostgreSQL (unless DATABASE_URL names one); returns its admin URL."""
    from uedu_dr import devstack

    db = devstack.ensure_postgres()
    os.environ["UEDU_BENCH_PG"] = json.dumps(db)
    return devstack.postgres_url(dict(db, NAME="postgres"))


def use_database(db_name: str) -> None:
    """Point Django (and the subprocesses it starts) at one platform's database. The per-process
    caches of the retrieval code are keyed by channel id, which the two databases share."""
    use_database_env_only(db_name)
    from django.db import connection

    if connection.settings_dict.get("NAME") != db_name:
        connection.close()
        connection.settings_dict["NAME"] = db_name
    from materials import retrieval

    retrieval.forget_strategies()
    retrieval.forget_term_statistics()


def database_state(admin_url: str, db_name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db_name]).fetchone():
            return "absent"
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        ready = conn.execute("SELECT to_regclass('bench_corpus_ready')").fetchone()[0]
    return "ready" if ready else "partial"


def build(admin_url: str, db_name: str, state: str, n: int) -> dict:
    """Create, migrate and fill one platform's cached database; returns build timings."""
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

    from django.contrib.auth import get_user_model
    from django.db import connection

    from channels_app.models import Channel, Material
    from materials import embeddings, lexical, vector_index

    t = time.monotonic()
    log("embedding the real passages with the local model (cached under var/bench) …")
    real = corpus.real_embeddings(ROOT, embeddings.embed_texts)
    timings["embed_seconds"] = round(time.monotonic() - t, 1)
    log(f"deriving {n:,} vectors …")
    owner_of, channel_subject, vectors, a, b, alpha, duplicate = corpus.derive(real, n, CHANNELS, SHARES)
    np.save(corpus._cache_dir(ROOT) / f"channel_subject_{n}.npy", channel_subject)
    # Channels made of distinct passages (the 10 % channel of the 1M platform): their rows get a
    # passage each, its text and its real vector, in place of the derived mixes.
    distinct_text: dict[int, str] = {}
    for index in corpus.distinct_channels(n):
        rows = np.flatnonzero(owner_of == index)
        t = time.monotonic()
        log(f"writing and embedding {len(rows):,} distinct passages for channel {index} (cached) …")
        made = corpus.distinct_embeddings(
            ROOT,
            embeddings.embed_texts,
            corpus.subjects()[int(channel_subject[index])],
            len(rows),
            seed=index,
        )
        vectors[rows] = made["vectors"]
        distinct_text.update(zip(rows.tolist(), made["texts"]))
        timings[f"distinct_{index}_seconds"] = round(time.monotonic() - t, 1)
        timings[f"distinct_{index}"] = corpus.distinct_report(made["vectors"])

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
            for row in range(n):
                c = int(owner_of[row])
                position = int(seen[c])
                seen[c] += 1
                text = distinct_text.get(row) or corpus.chunk_text(
                    texts, int(a[row]), int(b[row]), float(alpha[row])
                )
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
                if row % 100_000 == 0 and row:
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
    shares indexing would have given it (materials.term_shares); only the missing ones."""
    from django.conf import settings
    from django.db import connection

    from materials import term_shares

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


def ensure_channel_text_indexes() -> None:
    """The big channels' own GIN indexes (materials.channel_text_index), as indexing their
    materials would have built them; only the missing ones."""
    from django.db import connection

    from materials import channel_text_index

    missing = channel_text_index.channels_needing_one()
    with connection.cursor() as cursor:
        for channel_id in missing:
            log(f"building the full-text index of channel {channel_id} …")
            cursor.execute(channel_text_index.create_sql(channel_id))
        if missing:
            cursor.execute("ANALYZE channels_app_materialchunk")  # once, for all the new indexes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=40, help="queries per case")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, alternating the two platforms")
    parser.add_argument(
        "--rebuild", action="store_true", help="drop the cached data sets and build them again"
    )
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument(
        "--strategy",
        choices=["exact", "channel_index", "shared_index"],
        help="force the semantic side's strategy (to compare designs); default: the product's choice",
    )
    args = parser.parse_args()

    admin_url = start_postgres()
    use_database_env_only(database_name(SIZES[0]))
    import django

    django.setup()
    build_timings, term_timings = {}, {}
    for n in SIZES:
        db_name = database_name(n)
        use_database(db_name)
        # Any state but "absent" makes build() drop the database first.
        state = "rebuild" if args.rebuild else database_state(admin_url, db_name)
        if state != "ready":
            log(f"building the cached data set {db_name} ({state}) …")
            build(admin_url, db_name, state, n)
        term_timings[str(n)] = ensure_term_shares(db_name)
        ensure_channel_text_indexes()
        build_timings[str(n)] = stored_build_timings()
    if args.build_only:
        print(
            json.dumps(
                {
                    "bench": "retrieval",
                    "built": build_timings,
                    "term_shares": term_timings,
                    "uptime": uptime(),
                }
            )
        )
        return 0

    from materials import embeddings, retrieval

    if args.strategy:
        retrieval.semantic_strategy = lambda channel_id, dim: args.strategy

    real = corpus.real_embeddings(ROOT, None)
    subjects = corpus.subjects()
    # The same seed lays out both platforms: channel i has the same subject in each, so a case's
    # queries are the same at 100k and at 1M.
    channel_subject = np.load(corpus._cache_dir(ROOT) / f"channel_subject_{SIZES[-1]}.npy")
    plans = []
    for index, share in enumerate(SHARES):
        subject = subjects[int(channel_subject[index])]
        texts = corpus.queries(subject, args.queries, seed=100 + index)
        plans.append((index, share, subject, texts, embeddings.embed_texts(texts)))

    reference_before = reference_cpu_ms()
    samples: dict[tuple[int, float], dict] = {}
    for round_ in range(args.rounds):
        for n in SIZES:
            use_database(database_name(n))
            for index, share, subject, texts, vectors in plans:
                sample = samples.setdefault((n, share), {"exact": [], "hybrid": [], "pools": []})
                channel_id = channel_pk(index)
                if round_ == 0:
                    sample["rows"] = channel_rows(channel_id)
                    sample["strategy"] = retrieval.semantic_strategy(channel_id, corpus.DIM)
                    log(
                        f"{n:,} chunks, {share:.1%}: {sample['rows']:,} chunks ({subject[0]}), "
                        f"strategy {sample['strategy']} …"
                    )
                exact_scan(channel_id, vectors[-1])  # warm
                for vector in vectors:
                    ids, seconds = exact_scan(channel_id, vector)
                    sample["exact"].append(seconds)
                    if round_ == 0:
                        sample["pools"].append(ids)
                retrieval.hybrid_search(channel_id, texts[-1], k=K, query_vector=vectors[-1])  # warm
                for text, vector in zip(texts, vectors):
                    t = time.perf_counter()
                    retrieval.hybrid_search(channel_id, text, k=K, query_vector=vector)
                    sample["hybrid"].append(time.perf_counter() - t)

    cases = []
    for n in SIZES:
        use_database(database_name(n))
        for index, share, _subject, texts, vectors in plans:
            sample = samples[(n, share)]
            channel_id = channel_pk(index)
            hybrid_recall, vector_recall = [], []
            for text, vector, vector_pool in zip(texts, vectors, sample["pools"]):
                truth = exact_hybrid(channel_id, text, vector_pool)
                got = [
                    p.chunk_id for p in retrieval.hybrid_search(channel_id, text, k=K, query_vector=vector)
                ]
                hybrid_recall.append(passage_recall(got, truth))
                vector_only = retrieval.hybrid_search(
                    channel_id, text, k=K, query_vector=vector, use_lexical=False
                )
                vector_recall.append(distance_recall([p.chunk_id for p in vector_only], vector_pool, vector))
            case = {
                "n": n,
                "channel_share": share,
                "channel_rows": sample["rows"],
                "strategy": sample["strategy"],
                "recall_at_10": round(statistics.mean(hybrid_recall), 4),
                "vector_recall_at_10": round(statistics.mean(vector_recall), 4),
                "hybrid_ms_p50": ms(percentile(sample["hybrid"], 0.5)),
                "hybrid_ms_p95": ms(percentile(sample["hybrid"], 0.95)),
                "exact_ms_p50": ms(percentile(sample["exact"], 0.5)),
                "exact_ms_p95": ms(percentile(sample["exact"], 0.95)),
            }
            if n != SIZES[0]:
                smaller = next(c for c in cases if c["n"] == SIZES[0] and c["channel_share"] == share)
                case["p95_growth_from_100k"] = round(case["hybrid_ms_p95"] / smaller["hybrid_ms_p95"], 3)
                # The same channel size on the smaller platform (1M's 0.1 % is 100k's 1 %): how the
                # cost of one course's search moves when only the platform around it grows.
                same = [c for c in cases if c["n"] == SIZES[0] and c["channel_rows"] == sample["rows"]]
                if same:
                    case["p95_growth_same_rows_from_100k"] = round(
                        case["hybrid_ms_p95"] / same[0]["hybrid_ms_p95"], 3
                    )
            case["load_average"] = load_average()
            log(json.dumps(case))
            cases.append(case)

    reference_after = reference_cpu_ms()
    failures = []
    for c in cases:
        name = f"{c['n']:,} chunks, {c['channel_share']:.1%}"
        if c["recall_at_10"] < RECALL_TARGET:
            failures.append(f"{name}: recall@10 {c['recall_at_10']} < {RECALL_TARGET}")
        if c["hybrid_ms_p95"] > P95_MS_TARGET[c["channel_share"]]:
            failures.append(f"{name}: p95 {c['hybrid_ms_p95']} ms > {P95_MS_TARGET[c['channel_share']]} ms")
        if c.get("p95_growth_same_rows_from_100k", 0) > GROWTH_TARGET:
            failures.append(
                f"{name}: the same course's p95 grew {c['p95_growth_same_rows_from_100k']}x from the 100k "
                f"platform > {GROWTH_TARGET}x"
            )
    # The absolute times are targets at the machine's usual speed only (docs/retrieval.md).
    reference = max(reference_before, reference_after)
    if reference > REFERENCE_TARGET_MS:
        timing = [f for f in failures if ": p95 " in f and "grew" not in f]
        failures = [f for f in failures if f not in timing]
        if timing:
            log(
                f"p95 targets not judged (the reference work read {reference} ms, judged at ≤ "
                f"{REFERENCE_TARGET_MS} ms): " + "; ".join(timing)
            )
    result = {
        "bench": "retrieval",
        "n": SIZES[-1],
        "sizes": list(SIZES),
        "channels": CHANNELS,
        "queries_per_case": args.queries,
        "rounds": args.rounds,
        "ef_search": retrieval.settings.UEDU_RETRIEVAL_EF_SEARCH,
        "forced_strategy": args.strategy,
        "corpus_fit": corpus.fit_report(real),
        "build": build_timings,
        "term_shares": term_timings,
        "cases": cases,
        # A fixed piece of Python work timed before and after the measurements: the machine's
        # speed at the time (10.5-11.8 ms at its usual speed); the absolute targets assume it.
        "reference_cpu_ms_before": reference_before,
        "reference_cpu_ms_after": reference_after,
        "uptime": uptime(),
        "ok": not failures,
    }
    if failures:
        log("targets missed: " + "; ".join(failures))
    print(json.dumps(result))
    return 0 if not failures else 1


# Recall where the data set has exact copies. 3 % of chunks are re-uploads of a passage (the same
# text and vector); in the 10 % channel of the 1M platform each passage has ~50 copies, so the
# exact top 10 is often one passage's copies in id order, and any other 10 of them are as right.
# The vector side counts a result as found when its distance is within the 10th exact distance
# (the rule of ann-benchmarks); the hybrid output counts passages by their text.
def distance_recall(got: list[int], exact_pool: list[int], vector) -> float:
    from django.db import connection

    from materials import retrieval

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, embedding <=> %s::vector FROM channels_app_materialchunk WHERE id = ANY(%s)",
            [retrieval._vector_literal(vector), list(set(got) | set(exact_pool[:K]))],
        )
        distance = dict(cursor.fetchall())
    tenth = distance[exact_pool[K - 1]]
    return sum(1 for chunk_id in got[:K] if distance[chunk_id] <= tenth + 1e-6) / K


def passage_recall(got: list[int], truth: list[int]) -> float:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, md5(text) FROM channels_app_materialchunk WHERE id = ANY(%s)",
            [list(set(got) | set(truth))],
        )
        text_of = dict(cursor.fetchall())
    wanted = {text_of[chunk_id] for chunk_id in truth}
    return len(wanted & {text_of[chunk_id] for chunk_id in got}) / len(wanted)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def use_database_env_only(db_name: str) -> None:
    """DATABASE_URL for Django's settings, before Django is set up."""
    from uedu_dr import devstack

    db = json.loads(os.environ["UEDU_BENCH_PG"])
    os.environ["DATABASE_URL"] = devstack.postgres_url(dict(db, NAME=db_name))


def stored_build_timings() -> dict | None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT timings FROM bench_corpus_ready")
        stored = cursor.fetchone()[0]
    return json.loads(stored) if isinstance(stored, str) else stored


def channel_pk(index: int) -> int:
    from channels_app.models import Channel

    return Channel.objects.get(slug=f"bench-{index}").pk


POOL = max(4 * K, 40)  # as hybrid_search asks each side for
EXACT_SQL = (
    "SELECT id FROM channels_app_materialchunk WHERE channel_id = %s AND embedding_dim = 384 "
    "AND embedding_model = %s ORDER BY embedding <=> %s::vector, id LIMIT %s"
)


def exact_scan(channel_id: int, vector) -> tuple[list[int], float]:
    """The channel's vectors ordered by the uncast column with index scans off: every distance
    computed; the vector ground truth and the reference time."""
    from django.db import connection, transaction

    from materials import embeddings, retrieval

    t = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(
            EXACT_SQL, [channel_id, embeddings.model_name(), retrieval._vector_literal(vector), POOL]
        )
        ids = [r[0] for r in cursor.fetchall()]
    return ids, time.perf_counter() - t


def exact_hybrid(channel_id: int, text: str, vector_pool: list[int]) -> list[int]:
    """RRF over the exact vector pool and the lexical ranking, computed in Python."""
    from django.db import connection, transaction

    from materials import retrieval

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
                [channel_id, candidates, ranking, POOL],
            )
            for rank, (chunk_id,) in enumerate(cursor.fetchall(), 1):
                scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (retrieval.RRF_K + rank)
    return [chunk_id for chunk_id, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:K]]


def channel_rows(channel_id: int) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM channels_app_materialchunk WHERE channel_id = %s", [channel_id])
        return cursor.fetchone()[0]


if __name__ == "__main__":
    sys.exit(main())
