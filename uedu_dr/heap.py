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


def freeze_startup_heap(**_signal) -> None:
    """Collect once, then freeze what is left. Connected to Celery's `worker_ready` after the
    embedding model's warm-up (research/apps.py), so the model is part of the frozen heap."""
    gc.collect()
    gc.freeze()
