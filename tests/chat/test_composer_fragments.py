"""The chat composer's server-rendered fragments: the auto-judge's suggestion, the clarify fields
before a research, and the quota line. Each is the channel members' only; the advisers answer 204
when they have nothing to say, and chat.js shows exactly what they render."""

from __future__ import annotations

import json

from django.db import transaction

from quotas import services as quotas

COMPLEX = "請比較學習分析與布魯姆分類法在課程設計中的角色"
VAGUE = "最近的學習分析研究有哪些重要發現？"


def post(client, personas, what, message, **headers):
    return client.post(f"/channels/{personas.channel.slug}/{what}", {"message": message}, **headers)


def test_a_complex_question_gets_the_judges_reasons_as_a_list(client, personas, llm):
    client.force_login(personas.student)
    response = post(client, personas, "suggestion", COMPLEX)
    assert response.status_code == 200
    assert (
        response.content.decode().strip()
        == '<ul class="reasons" data-role="reasons"><li>scripted: needs several sources</li></ul>'
    )


def test_a_simple_question_or_a_channel_without_deep_research_gets_no_suggestion(client, personas, llm):
    client.force_login(personas.student)
    assert post(client, personas, "suggestion", "what is 2+2").status_code == 204
    personas.channel.deep_research_enabled = False
    personas.channel.save()
    assert post(client, personas, "suggestion", COMPLEX).status_code == 204


def test_the_judge_escapes_what_the_model_says(client, personas, llm):
    llm.on(
        "judge",
        lambda body: {
            "content": '{"worth_it": true, "confidence": 0.99, "reasons": ["<img src=x onerror=alert(1)>"]}'
        },
    )
    client.force_login(personas.student)
    html = post(client, personas, "suggestion", COMPLEX).content.decode()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_an_empty_question_gets_the_apis_readable_error_which_the_page_takes_as_no_advice(
    client, personas, llm
):
    client.force_login(personas.student)
    for what in ("suggestion", "clarify"):
        response = post(client, personas, what, "  ", HTTP_ACCEPT_LANGUAGE="en")
        assert response.status_code == 400
        assert response.json()["error"]["message"] == "Please type a question."


def test_a_vague_question_gets_its_clarify_fields_prefilled_and_labelled_in_the_readers_language(
    client, personas, llm
):
    client.force_login(personas.student)
    response = post(client, personas, "clarify", VAGUE)
    assert response.status_code == 200
    html = response.content.decode()
    # The scripted model asks in English; the page labels the field itself, in the reader's language.
    assert '<label class="clarify-field" for="clarify-time_range">時間範圍</label>' in html
    assert "Which years" not in html
    assert (
        '<input type="text" maxlength="200" id="clarify-time_range" name="time_range" value="2021-2026">'
        in html
    )
    english = post(client, personas, "clarify", VAGUE, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<label class="clarify-field" for="clarify-time_range">Time range</label>' in english


def test_a_model_that_asks_the_same_thing_twice_gets_one_field(client, personas, llm):
    twice = {
        "needs_clarification": True,
        "questions": [
            {"key": "time_range", "question": "Student's question:", "default": "2021-2026"},
            {"key": "time_range", "question": "Student's question:", "default": "2024"},
            {"key": "subject", "question": "Student's question:", "default": "學習分析"},
        ],
    }
    llm.on("context", lambda body: {"content": json.dumps(twice)})
    client.force_login(personas.student)
    html = post(client, personas, "clarify", VAGUE).content.decode()
    assert html.count('name="time_range"') == 1 and 'value="2021-2026"' in html and 'value="2024"' not in html
    assert html.count("<label") == 2 and "Student&#x27;s question" not in html and "Student's" not in html


def test_a_complete_question_needs_no_clarification(client, personas, llm):
    client.force_login(personas.student)
    assert post(client, personas, "clarify", "2020 到 2024 年學習分析研究有哪些重要發現？").status_code == 204


def test_outsiders_get_404_from_the_advisers_and_no_model_is_asked(client, personas, llm):
    for who in (personas.outsider, personas.other_teacher):
        client.force_login(who)
        for what in ("suggestion", "clarify"):
            assert post(client, personas, what, COMPLEX).status_code == 404
    assert not llm.calls("judge") and not llm.calls("context")
    client.logout()
    assert post(client, personas, "suggestion", COMPLEX).status_code == 302  # to the log-in page
    client.force_login(personas.student)
    assert client.get(f"/channels/{personas.channel.slug}/suggestion").status_code == 405


def test_the_quota_line_counts_down_in_both_languages(client, personas):
    client.force_login(personas.student)
    assert "今日剩餘 20／20 次" in client.get("/chat/quota").content.decode()
    with transaction.atomic():
        quotas.charge(personas.student, "earlier-1")
    assert "19 of 20 left today" in client.get("/chat/quota", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    with transaction.atomic():
        for n in range(2, 21):
            quotas.charge(personas.student, f"earlier-{n}")
    line = client.get("/chat/quota", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'class="quota small muted empty"' in line and "No researches left today" in line
    assert "今日研究次數已用完" in client.get("/chat/quota").content.decode()


def test_the_quota_line_is_on_the_chat_page_and_for_each_user_their_own(client, personas):
    with transaction.atomic():
        quotas.charge(personas.student, "earlier")
    client.force_login(personas.other_student)
    assert "20 of 20 left today" in client.get("/chat/quota", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    client.force_login(personas.student)
    page = client.get(f"/channels/{personas.channel.slug}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert (
        'id="dr-quota"' in page
        and "19 of 20 left today" in page
        and 'hx-trigger="quota-changed from:body"' in page
    )
    client.force_login(personas.teacher)
    assert "No daily limit" in client.get("/chat/quota", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    client.logout()
    assert client.get("/chat/quota").status_code == 302
