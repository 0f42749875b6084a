"""Fixtures for channel materials, imported by tests/conftest.py: eager Celery (the real task,
run inline on commit), the fake OpenAI-compatible embeddings server, and a helper that uploads
and indexes through the service."""

from __future__ import annotations

import pytest

from channels_app import materials
from channels_app.models import Material
from tests.support.documents import upload
from tests.support.fake_embeddings import FakeEmbeddingServer
from uedu_dr.celery import app as celery_app


@pytest.fixture
def celery_eager():
    """`.delay()` runs the task in-process, so on-commit enqueues really index."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield celery_app
    celery_app.conf.task_always_eager = previous


@pytest.fixture
def fake_embeddings(settings):
    """The `openai` backend, pointed at a loopback fake that answers 32-dimension vectors."""
    with FakeEmbeddingServer(dimension=32) as server:
        settings.UEDU_EMBEDDING_BACKEND = "openai"
        settings.UEDU_EMBEDDING_MODEL = "fake-embedding-32"
        settings.UEDU_EMBEDDING_DIMENSIONS = 32
        settings.UEDU_EMBEDDING_BASE_URL = server.base_url
        settings.UEDU_EMBEDDING_API_KEY = "sk-test-embeddings"
        yield server


@pytest.fixture
def index_file(celery_eager, django_capture_on_commit_callbacks):
    """Upload through the service; the on-commit enqueue then runs the real Celery task inline."""

    def run(channel, user, name: str, data: bytes) -> Material:
        with django_capture_on_commit_callbacks(execute=True):
            material, _ = materials.material_upload(
                channel=channel, user=user, uploaded_file=upload(name, data)
            )
        material.refresh_from_db()
        return material

    return run
