"""What the local embedding model cannot do, and the way out docs/retrieval.md gives: pointing
UEDU_EMBEDDING_BACKEND=openai at a multilingual model behind an OpenAI-compatible /v1/embeddings
server (bge-m3: 1024 dimensions), then re-embedding. The server here is a loopback double whose
concept table maps a few Chinese and English terms to the same dimensions (tests/support/
fake_embeddings.py); the product's client, command, index and search are the real ones."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from channels_app.models import MaterialChunk
from materials import bilingual, embeddings, vector_index
from materials.retrieval import hybrid_search
from tests.support.documents import pdf_bytes
from tests.support.fake_embeddings import FakeEmbeddingServer

ANSWER = (
    "A typical early-warning dashboard combines three signals: assignment submission and quiz performance."
)
PAGES = [
    ANSWER,
    "Research with student data needs review by an Institutional Review Board before data are collected.",
    "研究倫理審查委員會審查知情同意書，並確認資料如何去識別化。",
]
QUESTION = "典型的預警儀表板結合哪三種訊號？"
CONCEPTS = {
    "預警儀表板": "c:dashboard",
    "early-warning dashboard": "c:dashboard",
    "訊號": "c:signal",
    "signals": "c:signal",
    "三種": "c:three",
    "three": "c:three",
    "結合": "c:combine",
    "combines": "c:combine",
}


def cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


def test_the_local_model_reads_a_chinese_question_as_unknown_tokens():
    assert not embeddings.reads("zh") and embeddings.reads("en")
    question, other_chinese, answer, english_question = embeddings.embed_texts(
        [
            QUESTION,
            "鷹架是教師提供的暫時支持",
            ANSWER,
            "Which three signals does an early-warning dashboard combine?",
        ]
    )
    # The Chinese question is nearer an unrelated Chinese sentence than the English answer to it.
    assert cosine(question, other_chinese) > cosine(question, answer) + 0.3
    assert cosine(english_question, answer) > 0.6


@pytest.mark.django_db
def test_a_multilingual_embedding_server_of_another_dimension_finds_the_english_answer_to_a_chinese_question(
    personas, index_file, settings, capsys
):
    material = index_file(personas.channel, personas.teacher, "handout.pdf", pdf_bytes(PAGES))
    assert set(MaterialChunk.objects.values_list("embedding_dim", flat=True)) == {384}
    local = hybrid_search(personas.channel.pk, QUESTION, k=3, use_lexical=False)
    assert ANSWER not in local[0].text  # the local model's semantic side cannot find it

    with FakeEmbeddingServer(dimension=1024, concepts=CONCEPTS) as server:
        settings.UEDU_EMBEDDING_BACKEND, settings.UEDU_EMBEDDING_MODEL = "openai", "BAAI/bge-m3"
        settings.UEDU_EMBEDDING_DIMENSIONS = 1024
        settings.UEDU_EMBEDDING_BASE_URL, settings.UEDU_EMBEDDING_API_KEY = server.base_url, "local"

        call_command("reembed_materials")

        assert "1 re-embedded" in capsys.readouterr().out
        assert set(
            MaterialChunk.objects.filter(material=material).values_list("embedding_dim", "embedding_model")
        ) == {(1024, "BAAI/bge-m3")}
        assert vector_index.existing_dimensions() == {1024}
        assert embeddings.reads("zh")  # a remote model is taken to read every language
        # The semantic side alone now finds the English answer to the Chinese question.
        (top,) = hybrid_search(personas.channel.pk, QUESTION, k=1, use_lexical=False)
        assert ANSWER in top.text and top.vector_rank == 1
        # and the bilingual search ranks the Chinese query by its vector too
        outcome = bilingual.search(personas.channel.pk, QUESTION, 3)
        assert ANSWER in outcome.passages[0].text
        assert {"model": "BAAI/bge-m3", "encoding_format": "float"}.items() <= server.requests[-1][
            "body"
        ].items()
