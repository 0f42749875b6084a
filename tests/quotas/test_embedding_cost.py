"""The paid embedding backend is metered like a model call: each batch reserves its token bound
against the daily cap before the request and settles at the tokens the server reports; a reached
cap stops it before anything is sent."""

from __future__ import annotations

from decimal import Decimal

import pytest

from materials import embeddings
from quotas.models import CostReservation
from uedu_dr.token_estimate import token_bound

TEXTS = ["學習分析與布魯姆分類法" * 20, "learning analytics and Bloom's taxonomy"]


def test_each_batch_is_reserved_then_settled_at_the_reported_tokens(db, fake_embeddings, settings):
    settings.UEDU_EMBEDDING_PRICE_USD_PER_MTOK = Decimal("1000")  # large enough to see in 6 decimals
    settings.UEDU_EMBEDDING_BATCH_SIZE = 1
    vectors = embeddings.embed_texts(TEXTS)
    assert len(vectors) == 2 and len(fake_embeddings.requests) == 2
    rows = list(CostReservation.objects.filter(kind="embedding").order_by("created_at"))
    assert len(rows) == 2 and all(row.settled for row in rows)
    expected = [Decimal(token_bound(text)) * 1000 / 1_000_000 for text in TEXTS]
    assert [row.reserved_usd for row in rows] == [e.quantize(Decimal("0.000001")) for e in expected]
    # The fake reports one token a request: what is settled is what the server counted.
    assert [row.spent_usd for row in rows] == [Decimal("0.001000")] * 2


def test_a_reached_cap_stops_the_embedding_service_before_any_request(db, fake_embeddings, settings):
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("0")
    with pytest.raises(embeddings.EmbeddingError, match="platform_cap_reached"):
        embeddings.embed_texts(TEXTS)
    assert fake_embeddings.requests == [] and not CostReservation.objects.exists()


def test_a_failed_batch_is_settled_at_nothing(db, fake_embeddings):
    fake_embeddings.fail_with = 500
    with pytest.raises(embeddings.EmbeddingError):
        embeddings.embed_texts(TEXTS)
    row = CostReservation.objects.get(kind="embedding")
    assert row.settled and row.spent_usd == 0
