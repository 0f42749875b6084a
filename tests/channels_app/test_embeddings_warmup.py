"""A Celery worker loads the local embedding model when it is ready, before its first task."""

from __future__ import annotations

from celery.signals import worker_ready

from materials import embeddings


def test_a_ready_worker_has_the_local_model_loaded(monkeypatch, settings):
    settings.UEDU_EMBEDDING_BACKEND = "local"
    monkeypatch.setattr(embeddings, "_backends", {})  # a process that never encoded anything
    worker_ready.send(sender=None)
    backend = embeddings.get_backend()
    assert isinstance(backend, embeddings.LocalBackend) and backend._model is not None


def test_a_remote_backend_is_not_called_when_the_worker_is_ready(monkeypatch, settings):
    settings.UEDU_EMBEDDING_BACKEND = "openai"
    settings.UEDU_EMBEDDING_BASE_URL = "http://127.0.0.1:9"  # nothing listens: a call would fail
    monkeypatch.setattr(embeddings, "_backends", {})
    worker_ready.send(sender=None)
    assert list(embeddings._backends) == []
