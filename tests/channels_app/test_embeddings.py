"""The embedding interface and its two backends; the openai one against a loopback fake server."""

from __future__ import annotations

import math
import threading
import time

import pytest
from django.core.management import call_command

from channels_app.models import Material, MaterialChunk
from materials import embeddings, vector_index
from materials.retrieval import hybrid_search
from tests.support.documents import pdf_bytes
from tests.support.fake_embeddings import bag_of_words_vector


def test_the_local_backend_is_the_default_and_embeds_offline_in_384_dimensions():
    assert (embeddings.model_name(), embeddings.dimension()) == (
        "sentence-transformers/all-MiniLM-L6-v2",
        384,
    )
    vectors = embeddings.embed_texts(
        [
            "students stopped submitting homework",
            "pupils quit handing in assignments",
            "photosynthesis in plants",
        ]
    )
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert math.isclose(sum(x * x for x in vectors[0]), 1.0, rel_tol=1e-4)  # normalised: cosine = dot product
    cos = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731
    assert cos(vectors[0], vectors[1]) > cos(vectors[0], vectors[2]) + 0.2
    assert embeddings.embed_texts([]) == []


def test_the_openai_backend_calls_the_endpoint_in_batches(db, fake_embeddings, settings):
    settings.UEDU_EMBEDDING_BATCH_SIZE = 2
    texts = ["learning analytics", "Bloom taxonomy", "IRB consent"]

    vectors = embeddings.embed_texts(texts)

    assert (embeddings.model_name(), embeddings.dimension()) == ("fake-embedding-32", 32)
    assert vectors == [
        pytest.approx(bag_of_words_vector(t, 32)) for t in texts
    ]  # in input order, though answered reversed
    assert [r["body"]["input"] for r in fake_embeddings.requests] == [texts[:2], texts[2:]]
    assert {r["body"]["model"] for r in fake_embeddings.requests} == {"fake-embedding-32"}
    assert fake_embeddings.requests[0]["auth"] == "Bearer sk-test-embeddings"


def test_a_wrong_dimension_from_the_server_is_a_clear_error(db, fake_embeddings):
    fake_embeddings.answer_dimension = 16
    with pytest.raises(
        embeddings.EmbeddingError, match="returned 16-dimension vectors but UEDU_EMBEDDING_DIMENSIONS is 32"
    ):
        embeddings.embed_texts(["x"])


def test_a_server_error_is_an_embedding_error(db, fake_embeddings):
    fake_embeddings.fail_with = 503  # retried by the client, then reported
    with pytest.raises(embeddings.EmbeddingError, match="the embedding service failed"):
        embeddings.embed_texts(["x"])
    assert len(fake_embeddings.requests) == 3


@pytest.mark.django_db
def test_materials_indexed_with_the_openai_backend_are_searchable_at_its_dimension(
    personas, index_file, fake_embeddings
):
    material = index_file(
        personas.channel, personas.teacher, "w.pdf", pdf_bytes(["Bloom taxonomy levels", "IRB consent forms"])
    )
    assert material.status == Material.Status.READY and material.embedding_model == "fake-embedding-32"
    assert set(MaterialChunk.objects.values_list("embedding_dim", flat=True)) == {32}

    results = hybrid_search(personas.channel.pk, "consent forms", k=1, use_lexical=False)

    assert results[0].page == 2 and results[0].vector_rank == 1


@pytest.mark.django_db
def test_reembed_switches_backend_and_dimension_without_a_migration(
    personas, index_file, settings, fake_embeddings, capsys
):
    # Indexed with the local model (384) ...
    settings.UEDU_EMBEDDING_BACKEND, settings.UEDU_EMBEDDING_MODEL = (
        "local",
        "sentence-transformers/all-MiniLM-L6-v2",
    )
    settings.UEDU_EMBEDDING_DIMENSIONS = 384
    material = index_file(
        personas.channel, personas.teacher, "w.pdf", pdf_bytes(["Bloom taxonomy levels", "IRB consent forms"])
    )
    chunk_ids = set(MaterialChunk.objects.values_list("pk", flat=True))
    assert set(MaterialChunk.objects.values_list("embedding_dim", flat=True)) == {384}

    # ... then the deployment moves to a 32-dimension OpenAI-compatible model.
    settings.UEDU_EMBEDDING_BACKEND, settings.UEDU_EMBEDDING_MODEL = "openai", "fake-embedding-32"
    settings.UEDU_EMBEDDING_DIMENSIONS = 32
    assert (
        hybrid_search(personas.channel.pk, "consent forms", k=2, use_lexical=False) == []
    )  # old vectors are not comparable

    call_command("reembed_materials")

    assert set(MaterialChunk.objects.values_list("pk", flat=True)) == chunk_ids  # same passages, new vectors
    assert set(MaterialChunk.objects.values_list("embedding_dim", "embedding_model")) == {
        (32, "fake-embedding-32")
    }
    material.refresh_from_db()
    assert material.embedding_model == "fake-embedding-32"
    assert vector_index.existing_dimensions() == {32}  # index for 32 created, unused 384 index dropped
    assert hybrid_search(personas.channel.pk, "consent forms", k=1, use_lexical=False)[0].page == 2
    assert "1 re-embedded" in capsys.readouterr().out

    call_command("reembed_materials")  # nothing left to do
    assert "0 re-embedded, 1 already current" in capsys.readouterr().out


def test_callers_queued_behind_the_local_encoder_are_encoded_together_each_with_its_own_vectors():
    backend = embeddings.get_backend()
    texts = [
        ["learning analytics dashboards"],
        ["Bloom's taxonomy", "IRB consent forms"],
        ["photosynthesis"],
        ["課程設計中的布魯姆分類法"],
    ]
    alone = [backend.embed_texts(t) for t in texts]  # one encoding each
    encodings = []
    encode = backend._model.encode

    def counted(sentences, **kwargs):
        encodings.append(list(sentences))
        return encode(sentences, **kwargs)

    results: dict[int, list] = {}
    backend._lock.acquire()  # the encoder is busy: every caller below queues up behind it
    try:
        backend._model.encode = counted
        threads = [
            threading.Thread(target=lambda i=i: results.__setitem__(i, backend.embed_texts(texts[i])))
            for i in range(len(texts))
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(backend._queued) < len(texts) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(backend._queued) == len(texts)
    finally:
        backend._lock.release()
    for thread in threads:
        thread.join(30)
    del backend._model.encode

    assert len(encodings) == 1 and sorted(encodings[0]) == sorted(t for group in texts for t in group)
    for i, group in enumerate(texts):
        assert len(results[i]) == len(group)
        for got, single in zip(results[i], alone[i]):
            assert got == pytest.approx(single, abs=1e-5)


def test_a_failed_batch_fails_every_caller_in_it_and_the_next_call_works_again():
    backend = embeddings.get_backend()
    backend.embed_texts(["warm"])

    def broken(sentences, **kwargs):
        raise RuntimeError("out of memory")

    backend._model.encode = broken
    try:
        with pytest.raises(RuntimeError, match="out of memory"):
            backend.embed_texts(["anything"])
    finally:
        del backend._model.encode
    assert len(backend.embed_texts(["anything"])[0]) == 384
