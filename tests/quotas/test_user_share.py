"""No account can drain the platform's daily cap: every endpoint that calls a model needs channel
membership, and one account's metered calls stop at its share of the cap (429) while everyone
else's go on."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agent.llm_factory import CALL_BOUNDS
from quotas import services as quotas
from quotas.models import CostReservation
from tests.support.factories import make_channel

QUESTION = "請比較學習分析與布魯姆分類法在課程設計中的研究證據"


def post(client, path, body):
    return client.post(f"/api/deep_research/{path}", body, content_type="application/json")


@pytest.mark.parametrize("path", ["judge", "context_check"])
def test_a_metered_endpoint_needs_a_channel_the_user_is_in(client, db, personas, llm, path):
    other = make_channel(slug="elsewhere")
    client.force_login(personas.student)
    missing = post(client, path, {"question": QUESTION})
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "invalid"
    foreign = post(client, path, {"question": QUESTION, "channel_id": other.pk})
    unknown = post(client, path, {"question": QUESTION, "channel_id": 999_999})
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    client.force_login(personas.outsider)
    assert post(client, path, {"question": QUESTION, "channel_id": personas.channel.pk}).status_code == 404
    assert llm.calls("judge") == llm.calls("context") == []
    assert not CostReservation.objects.exists()
    client.force_login(personas.student)
    assert post(client, path, {"question": QUESTION, "channel_id": personas.channel.pk}).status_code == 200


def test_one_account_cannot_take_more_than_its_share_of_the_cap(client, db, personas, llm, settings):
    settings.UEDU_DR_RATE_JUDGE = "1000/m"  # the per-minute rate is not what is under test
    worst = CALL_BOUNDS["judge"].worst_case_usd()
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = worst * 40
    settings.UEDU_USER_DAILY_CAP_SHARE = Decimal("0.1")  # four judge calls' worst case each
    share = quotas.user_share_usd()
    client.force_login(personas.student)
    body = {"question": QUESTION, "channel_id": personas.channel.pk}
    answers = []
    for _ in range(200):  # a script that keeps asking, alternating the two light endpoints
        path = "judge" if len(answers) % 2 == 0 else "context_check"
        response = post(client, path, body)
        answers.append(response.status_code)
        if response.status_code != 200:
            break
    refused = response
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "user_budget_exceeded"
    assert int(refused["Retry-After"]) >= 60
    assert answers.count(200) >= 1
    day = quotas.platform_day()
    taken = quotas.user_committed_cost(personas.student, day)
    assert 0 < taken <= share  # never past its share ...
    calls_before = len(llm.calls("judge")) + len(llm.calls("context"))
    assert post(client, path, body).status_code == 429  # ... and the refusal calls no model
    assert len(llm.calls("judge")) + len(llm.calls("context")) == calls_before
    # Everyone else is still served: the platform's cap is far from reached.
    assert quotas.cost_status().committed < settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD
    client.force_login(personas.other_student)
    assert post(client, "judge", body).status_code == 200


def test_the_share_counts_every_kind_of_call_and_spares_admins(db, personas, settings):
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("10")
    settings.UEDU_USER_DAILY_CAP_SHARE = Decimal("0.1")
    quotas.settle_cost(quotas.reserve_call(personas.student, "chat", Decimal("0.6")), Decimal("0.9"))
    with pytest.raises(quotas.ServiceError) as refused:
        quotas.reserve_call(personas.student, "judge", Decimal("0.2"))  # 0.9 spent on chat + 0.2 > 1
    assert refused.value.code == "user_budget_exceeded"
    quotas.reserve_call(personas.student, "judge", Decimal("0.1"))  # exactly the share still fits
    for _ in range(3):
        quotas.reserve_call(personas.admin, "judge", Decimal("1"))  # admins set the cap; no share
