"""CPU per query of the local embedding model on its two runtimes, side by side, and whether they
give the same vectors.

    .venv/bin/python bench/embedding.py [--repeat 15] [--wait 0.5]

The case a research meets: one search query encoded alone, after the research's thread waited
for the model (`--wait` seconds asleep before each encoding), for the demo questions (English,
and a Chinese one of 28 word pieces). Also timed back to back, and eight queries in one batch
(what the backend's queue does under a burst). Both runtimes (materials.local_encoders) are
loaded in this process with one intra-op thread, as workers run them, and timed in turns, query
by query, so that a slow moment of the machine falls on both. CPU is the process's (the
tokenizer's own threads included), the median per query.

Prints per runtime, then one JSON line. Exits non-zero unless ONNX Runtime's CPU per query after
a wait is at most half of torch's, and the two runtimes' vectors differ by at most 1e-5 in any
coordinate (the demo questions and a text past the model's 256-word-piece limit).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from _stack import uptime
from tokens import QUESTIONS  # the demo questions the token bench runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CPU_RATIO_TARGET = 0.5
MAX_DIFF_TARGET = 1e-5


def _cpu_ms(encode, texts: list[str]) -> float:
    started = time.process_time()
    encode(texts)
    return (time.process_time() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--repeat", type=int, default=15, help="encodings of each question per runtime and case"
    )
    parser.add_argument(
        "--wait", type=float, default=0.5, help="seconds asleep before each 'after a wait' encoding"
    )
    args = parser.parse_args()

    from materials import local_encoders

    cache = Path(os.environ.get("UEDU_EMBEDDING_CACHE_DIR", ROOT / "var" / "models"))
    runtimes = {
        "torch": local_encoders.load("torch", 1, 64, cache),
        "onnx": local_encoders.load("onnx", 1, 64, cache),
    }
    if runtimes["onnx"].runtime != "onnx":
        raise SystemExit("the ONNX encoder could not be loaded (see the warning above)")
    for encoder in runtimes.values():  # warm: first calls allocate
        encoder.encode(list(QUESTIONS))

    after_wait: dict[str, list[float]] = {name: [] for name in runtimes}
    back_to_back: dict[str, list[float]] = {name: [] for name in runtimes}
    batch8: dict[str, list[float]] = {name: [] for name in runtimes}
    for _ in range(args.repeat):
        for question in QUESTIONS:
            for name, encoder in runtimes.items():
                time.sleep(args.wait)
                after_wait[name].append(_cpu_ms(encoder.encode, [question]))
                back_to_back[name].append(_cpu_ms(encoder.encode, [question]))
        for name, encoder in runtimes.items():
            batch8[name].append(
                _cpu_ms(encoder.encode, [QUESTIONS[i % len(QUESTIONS)] for i in range(8)]) / 8
            )

    probes = [*QUESTIONS, "word " * 400]
    reference, exported = runtimes["torch"].encode(probes), runtimes["onnx"].encode(probes)
    max_diff = max(abs(a - b) for ref, got in zip(reference, exported) for a, b in zip(ref, got))

    figures = {
        name: {
            "cpu_ms_per_query_after_wait": round(statistics.median(after_wait[name]), 2),
            "cpu_ms_per_query_back_to_back": round(statistics.median(back_to_back[name]), 2),
            "cpu_ms_per_query_in_batch_of_8": round(statistics.median(batch8[name]), 2),
        }
        for name in runtimes
    }
    for name, values in figures.items():
        print(name, json.dumps(values), file=sys.stderr)
    ratio = figures["onnx"]["cpu_ms_per_query_after_wait"] / figures["torch"]["cpu_ms_per_query_after_wait"]
    failures = []
    if ratio > CPU_RATIO_TARGET:
        failures.append(f"ONNX/torch CPU per query after a wait {ratio:.2f} > {CPU_RATIO_TARGET}")
    if max_diff > MAX_DIFF_TARGET:
        failures.append(f"vectors differ by {max_diff:.2e} > {MAX_DIFF_TARGET:.0e}")
    for failure in failures:
        print("target missed:", failure, file=sys.stderr)
    print(
        json.dumps(
            {
                "bench": "embedding",
                "queries": len(QUESTIONS) * args.repeat,
                "wait_s": args.wait,
                "torch": figures["torch"],
                "onnx": figures["onnx"],
                "cpu_ratio_after_wait": round(ratio, 3),
                "max_abs_diff": max_diff,
                "uptime": uptime(),
                "ok": not failures,
            }
        )
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
