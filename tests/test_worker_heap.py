"""A ready worker freezes its start-up heap after the embedding model is loaded."""

from __future__ import annotations

import gc
import weakref

import pytest
from celery.signals import worker_ready

from channels_app import embeddings
from uedu_dr.heap import freeze_startup_heap


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # the test process keeps collecting everything


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
    gc.collect()
    assert gone() is None  # the cycle made after the freeze is reclaimed
