"""The token bounds reserved before model and embedding calls are counted per script: a Chinese
prompt is bounded at two tokens a character, not the "three characters a token" of English, so a
long Chinese prompt cannot settle above what it reserved."""

from __future__ import annotations

from decimal import Decimal

from agent.llm_factory import CALL_BOUNDS, prompt_bound
from quotas.models import CostReservation
from uedu_dr.token_estimate import messages_token_bound, script_counts, token_bound

ZH = "學習分析與布魯姆分類法在課程設計中的研究證據，"  # 23 characters, full-width comma included
EN = "Learning analytics and Bloom's taxonomy in course design. "


def test_each_script_is_counted_at_its_own_rate():
    assert script_counts(ZH) == (23, 0, 0)
    assert script_counts("café ω 注音ㄅ") == (3, 5, 2)  # é and ω are "other"; ㄅ is Bopomofo
    assert token_bound("學" * 1000) == 2000  # two tokens a character, bound
    assert token_bound("a" * 1000) == 400  # 2.5 characters a token
    # A fixed rule of three characters a token would count 1,000 Chinese characters as 333 tokens:
    # a sixth of this bound, and below even the best tokenizers' one token a character.
    assert token_bound("學" * 1000) >= 1000 > 1000 // 3


def test_a_chinese_prompt_reserves_for_its_length_where_the_fixed_bound_undercounted():
    long_zh = ZH * 200  # 4,600 characters: at least 4,600 tokens with any tokenizer
    messages = [{"role": "system", "content": "You answer."}, {"role": "user", "content": long_zh}]
    bound = prompt_bound(messages)
    assert bound >= 4_600 * 2 and bound > CALL_BOUNDS["judge"].prompt_tokens  # a fixed 2,000 would not
    assert messages_token_bound([{"role": "user", "content": ""}]) > 0  # each message's wrapping counts
    judge = CALL_BOUNDS["judge"]
    assert judge.worst_case_usd(prompt_bound(messages)) > judge.worst_case_usd(
        prompt_bound(
            [messages[0], {"role": "user", "content": EN * 80}]
        )  # as many characters (4,640), English
    )


def test_a_chat_message_reserves_by_its_script_and_settles_below_it(personas, llm):
    from chat.services import send_chat_message

    send_chat_message(user=personas.student, channel=personas.channel, message=EN * 30)
    english = CostReservation.objects.get(kind="chat", user=personas.student)
    send_chat_message(user=personas.other_student, channel=personas.channel, message=ZH * 70)
    chinese = CostReservation.objects.get(kind="chat", user=personas.other_student)
    assert chinese.reserved_usd > english.reserved_usd  # 1,610 Han characters weigh more than 1,740 ASCII
    for row in (english, chinese):
        assert row.settled and Decimal(0) < row.spent_usd <= row.reserved_usd
