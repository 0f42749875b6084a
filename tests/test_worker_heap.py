"""A ready worker freezes its start-up heap after the embedding model is loaded."""

from __future__ import annotations

import gc
import weakref

import pytest
from celery.signals import worker_ready

from materials import embeddings
from uedu_dr.heap import YOUNG_GENERATION_THRESHOLD, freeze_startup_heap


@pytest.fixture
def unfrozen():
    threshold = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()  # the test process keeps collecting everything, as often as before
    gc.set_threshold(*threshold)


def test_a_ready_worker_freezes_what_it_holds_after_the_models_warm_up(unfrozen, monkeypatch, settings):
    settings.UEDU_EMBEDDING_BACKEND = "local"
    monkeypatch.setattr(embeddings, "_backends", {})  # a process that never encoded anything
    receivers = [r for r in worker_ready._live_receivers(None)]
    names = [getattr(r, "__name__", "") for r in receivers]
    assert names.index("warm_local_model") < names.index("freeze_startup_heap")

    worker_ready.send(sender=None)

    model = embeddings.get_backend()._model
    assert model is not None
    assert gc.get_freeze_count() > 100_000  # Django, the tools and the model
    assert all(o is not model for o in gc.get_objects())  # frozen: no collection walks it any more


def test_objects_made_after_the_freeze_are_still_collected(unfrozen):
    freeze_startup_heap()
    assert gc.get_freeze_count() > 0

    class Cycle:
        pass

    a, b = Cycle(), Cycle()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    assert gc.get_threshold()[0] == YOUNG_GENERATION_THRESHOLD
    # Reclaimed by the automatic collections, once enough new objects have been made (no explicit
    # collect): the youngest generation is collected less often, not never. Enough for the middle
    # generation's turn too, in case a young collection had moved the pair there already.
    made = [[] for _ in range(2 * (gc.get_threshold()[1] + 1) * YOUNG_GENERATION_THRESHOLD)]
    assert gone() is None
    del made
