"""A worker's start-up heap, kept out of the garbage collector's full passes.

A worker process holds about a million long-lived objects once Django, the tools and the
embedding model (torch, transformers) are loaded. Python's full (generation 2) collection walks
all of them: under a burst of fifty researches one such pass took 504 ms of CPU in the middle of
the batch, holding the GIL, so every research of the process stood still meanwhile
(bench/concurrency.py, docs/performance.md). `gc.freeze()` moves what exists at start-up into a
permanent generation that no collection walks; what the researches allocate afterwards is
collected as before. A start-up object that becomes garbage later is then never reclaimed: a
bounded cost, since start-up objects are modules, classes and the model."""

from __future__ import annotations

import gc

# A worker's researches allocate and drop many short-lived containers (rows, JSON, prompts). At
# Python's default (700 net allocations) the youngest generation was collected about twice per
# research in a burst, 1.1–1.3 ms of CPU per research with the collections of the middle one its
# survivors fed; at 10,000, about once per ten researches and 0.2–0.3 ms (measured:
# docs/bench-history.md). A cycle of young objects waits a little longer to be reclaimed: the memory held
# meanwhile is that of at most this many objects.
YOUNG_GENERATION_THRESHOLD = 10_000


def freeze_startup_heap(**_signal) -> None:
    """Collect once, then freeze what is left, and collect the youngest generation less often.
    Connected to Celery's `worker_ready` after the embedding model's warm-up (research/apps.py),
    so the model is part of the frozen heap."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)
