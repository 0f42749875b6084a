"""Oversized and malformed input on every API endpoint and every form: a clear 4xx (the API's
`{"error": {"code", "message"}}`, a readable page for browsers), never a 500, and nothing half
written (row counts before and after)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from django.test import Client

from channels_app.models import Channel, ChatLog, Material, MaterialChunk
from quotas.models import UsageEntry
from research.models import AnswerFeedback, ResearchEvent, ResearchTask
from tests.support.documents import pdf_bytes
from tests.support.research_fixtures import stored_research

MB = 1024 * 1024


@pytest.fixture
def browser_client(personas, settings):
    """Django's client with production's error handling: DEBUG off (its error pages, not the debug
    ones) and exceptions turned into responses (a view bug is a 500 here, as in production)."""
    settings.DEBUG = False
    client = Client(raise_request_exception=False)
    client.force_login(personas.student)
    return client


def counts() -> dict:
    models = (ResearchTask, ResearchEvent, ChatLog, UsageEntry, AnswerFeedback, Material, MaterialChunk)
    return {model.__name__: model.objects.count() for model in models}


def assert_api_error(response, status: int | tuple, code: str | None = None, what: str = ""):
    statuses = status if isinstance(status, tuple) else (status,)
    assert response.status_code in statuses, (what, response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert isinstance(error["code"], str) and isinstance(error["message"], str) and error["message"]
    if code:
        assert error["code"] == code, error


# --------------------------------------------------------------------------- the API

VALID = {  # a well-formed body of each endpoint; the bad ones below are made from it
    "/api/deep_research/start": {
        "question": "比較學習分析與布魯姆分類法",
        "channel_id": 0,
        "trigger_mode": "forced",
    },
    "/api/deep_research/cancel": {"task_uuid": "{uuid}"},
    "/api/deep_research/judge": {"question": "比較學習分析與布魯姆分類法", "channel_id": 0},
    "/api/deep_research/context_check": {"question": "最近的學習分析研究", "channel_id": 0},
    "/api/deep_research/task/{uuid}/review": {"note": "Checked against the handout."},
    "/api/deep_research/task/{uuid}/plan": {
        "sub_questions": ["什麼是學習分析？", "布魯姆分類法有哪些層次？"]
    },
    "/api/deep_research/task/{uuid}/feedback": {
        "useful": False,
        "reason": "",
        "citation_number": 1,
        "note": "wrong page",
    },
}
WRONG_TYPES = {
    "/api/deep_research/start": {"question": ["a"], "channel_id": {"id": 1}, "trigger_mode": 5},
    "/api/deep_research/cancel": {"task_uuid": ["not", "a", "uuid"]},
    "/api/deep_research/judge": {"question": {"text": "q"}, "channel_id": "one"},
    "/api/deep_research/context_check": {"question": None},
    "/api/deep_research/task/{uuid}/review": {"note": ["n"]},
    "/api/deep_research/task/{uuid}/plan": {"sub_questions": "one question"},
    "/api/deep_research/task/{uuid}/feedback": {"useful": "maybe", "citation_number": "first", "reason": 7},
}


def _with_nul(body: dict) -> dict:
    def spoil(value):
        if isinstance(value, str):
            return value + "\u0000"
        if isinstance(value, list):
            return [spoil(v) for v in value]
        return value

    return {key: spoil(value) for key, value in body.items()}


def _bodies(endpoint: str, valid: dict) -> dict[str, tuple[str, bytes | str, int, str | None]]:
    """name → (content type, body, expected status, expected code)."""
    return {
        "a 1.5 MB field": (
            "application/json",
            json.dumps({**valid, next(iter(valid)): "x" * (3 * MB // 2)}),
            413,
            "request_too_large",
        ),
        "nesting 100,000 deep": ("application/json", "[" * 100_000 + "]" * 100_000, 400, "parse_error"),
        "a field nested deeply": (
            "application/json",
            json.dumps(valid)[:-1] + ', "x": ' + "[" * 5000 + "]" * 5000 + "}",
            400,
            "parse_error",
        ),
        "invalid JSON": ("application/json", json.dumps(valid)[:-2], 400, "parse_error"),
        "NaN": (
            "application/json",
            json.dumps({**valid, next(iter(valid)): float("nan")}),
            400,
            "parse_error",
        ),
        "a list, not an object": ("application/json", json.dumps([valid]), 400, "invalid"),
        "plain text": ("text/plain", "question=hello", 415, "unsupported_media_type"),
        "XML": ("application/xml", "<question>hello</question>", 415, "unsupported_media_type"),
        "wrong types": ("application/json", json.dumps(WRONG_TYPES[endpoint]), 400, "invalid"),
        "an unknown field": ("application/json", json.dumps({**valid, "channelId": 1}), 400, "invalid"),
        "a NUL character": ("application/json", json.dumps(_with_nul(valid)), 400, "invalid"),
        "a lone surrogate": (
            "application/json",
            json.dumps(valid)[:-1] + ', "' + next(iter(valid)) + '": "\\ud800"}',
            400,
            "invalid",
        ),
    }


@pytest.mark.parametrize("endpoint", list(VALID))
def test_every_api_endpoint_refuses_bad_bodies_with_a_clear_4xx_and_writes_nothing(
    personas, browser_client, endpoint, llm
):
    task = stored_research(personas.student, personas.channel)
    browser_client.force_login(personas.teacher)  # the teacher may use every endpoint (review included)
    path = endpoint.format(uuid=task.task_uuid)
    valid = json.loads(json.dumps(VALID[endpoint]).replace("{uuid}", str(task.task_uuid)))
    if "channel_id" in valid:
        valid["channel_id"] = personas.channel.pk
    before = counts()
    for name, (content_type, body, status, code) in _bodies(endpoint, valid).items():
        response = browser_client.generic(
            "POST", path, body, content_type=content_type, HTTP_ACCEPT="application/json"
        )
        assert_api_error(response, status, code, name)
        assert counts() == before, (endpoint, name)


def test_an_unknown_field_is_named_in_the_error(personas, browser_client):
    response = browser_client.post(
        "/api/deep_research/start",
        {"question": "比較學習分析", "channel_id": personas.channel.pk, "channelId": 3},
        content_type="application/json",
        HTTP_ACCEPT="application/json",
    )
    assert_api_error(response, 400, "invalid")
    assert "channelId" in response.json()["error"]["message"]
    assert ResearchTask.objects.count() == 0


def test_a_bad_content_length_is_a_400_before_anything_is_read(personas, browser_client):
    for value in ("abc", "-5"):
        response = browser_client.generic(
            "POST", "/api/deep_research/start", "{}", content_type="application/json", CONTENT_LENGTH=value
        )
        assert_api_error(response, 400, "bad_content_length")


@pytest.mark.parametrize(
    "query", ["limit=abc", "limit=0", "limit=100000", "status=unknown", "status=%00", "limit=1e309"]
)
def test_bad_query_parameters_are_a_400(personas, browser_client, query):
    assert_api_error(browser_client.get(f"/api/deep_research/my_tasks?{query}"), 400, "invalid")


@pytest.mark.parametrize("after", ["abc", "-1", "1.5", "9" * 40])
def test_bad_event_cursors_are_a_400_or_an_empty_page(personas, browser_client, after):
    task = stored_research(personas.student, personas.channel)
    response = browser_client.get(f"/api/deep_research/task/{task.task_uuid}/events?after={after}")
    if after == "9" * 40:  # a valid, very large number: nothing comes after it
        assert response.status_code == 200 and response.json() == []
    else:
        assert_api_error(response, 400, "invalid")
    assert_api_error(
        browser_client.get(f"/api/deep_research/task/{task.task_uuid}/stream", HTTP_LAST_EVENT_ID="abc"),
        400,
        "invalid",
    )


def test_a_huge_body_is_refused_by_its_declared_size_not_after_reading_it(personas, browser_client, settings):
    settings.UEDU_MAX_REQUEST_BYTES = 10_000
    body = json.dumps(
        {"question": "比較學習分析", "channel_id": personas.channel.pk, "trigger_mode": "forced"}
    ).encode()
    ok = browser_client.generic(
        "POST",
        "/api/deep_research/judge",
        body,
        content_type="application/json",
        HTTP_ACCEPT="application/json",
    )
    assert ok.status_code == 400  # under the limit: read and validated (trigger_mode is no judge field)
    padded = body[:-1] + b', "x": "' + b"y" * 20_000 + b'"}'
    assert_api_error(
        browser_client.generic("POST", "/api/deep_research/judge", padded, content_type="application/json"),
        413,
        "request_too_large",
    )


# --------------------------------------------------------------------------- the pages


def big_form(field: str, size: int = 3 * MB // 2) -> dict:
    return {field: "x" * size}


def test_the_chat_form_refuses_bad_input_readably_and_stores_nothing(personas, browser_client, llm):
    send = f"/channels/{personas.channel.slug}/send"
    before = counts()

    for encoding in (
        "multipart",
        "urlencoded",
    ):  # the form's field over the limit: by Content-Length, or by Django's parser
        post = (
            (lambda data, **kw: browser_client.post(send, data, **kw))
            if encoding == "multipart"
            else (
                lambda data, **kw: browser_client.post(
                    send, urlencode(data), content_type="application/x-www-form-urlencoded", **kw
                )
            )
        )
        too_big = post(big_form("message"))
        assert too_big.status_code == 413 and "請求太大" in too_big.content.decode(), (
            encoding,
            too_big.status_code,
        )
        assert_api_error(post(big_form("message"), HTTP_X_REQUESTED_WITH="fetch"), 413, "request_too_large")
    empty = browser_client.post(send, {"message": "   "})
    assert empty.status_code == 400 and "請輸入問題" in empty.content.decode()
    as_json = browser_client.post(send, {"message": "hello"}, content_type="application/json")
    assert as_json.status_code == 400 and "請輸入問題" in as_json.content.decode()
    too_long = browser_client.post(send, {"message": "長" * 5000})
    assert too_long.status_code == 400 and "問題太長" in too_long.content.decode()
    assert counts() == before

    nul = browser_client.post(send, {"message": "什麼是\u0000學習分析？"})
    assert nul.status_code == 302  # stored, without the control character PostgreSQL would refuse
    assert ChatLog.objects.filter(kind="request").get().content == "什麼是學習分析？"


def test_the_settings_form_refuses_bad_input_readably_and_changes_nothing(personas, browser_client):
    browser_client.force_login(personas.teacher)
    url = f"/channels/{personas.channel.slug}/settings/"
    channel_before = Channel.objects.filter(pk=personas.channel.pk).values().get()
    assert browser_client.post(url, big_form("system_prompt")).status_code == 413
    for data, message in [
        ({}, "請輸入 0 到 1 之間的數字"),  # an empty POST is an invalid submission, not a fresh form
        ({"auto_suggest_threshold": "abc"}, "請輸入 0 到 1 之間的數字"),
        ({"auto_suggest_threshold": "nan"}, "請輸入 0 到 1 之間的數字"),
        ({"auto_suggest_threshold": "1e309"}, "請輸入 0 到 1 之間的數字"),
        ({"auto_suggest_threshold": "0.5", "system_prompt": "長" * 4001}, "4000"),
        ({"auto_suggest_threshold": "0.5", "system_prompt": "a\u0000b"}, "空（null）字元"),
    ]:
        response = browser_client.post(url, data)
        assert response.status_code == 400 and message in response.content.decode(), (
            data,
            response.status_code,
        )
    as_json = browser_client.post(
        url, {"auto_suggest_threshold": 0.2, "deep_research_enabled": False}, content_type="application/json"
    )
    assert as_json.status_code == 400
    assert Channel.objects.filter(pk=personas.channel.pk).values().get() == channel_before


def test_the_upload_form_refuses_bad_input_readably_and_keeps_no_partial_file(
    personas, browser_client, settings, celery_eager, fake_embeddings
):
    browser_client.force_login(personas.teacher)
    url = f"/channels/{personas.channel.slug}/materials/"
    settings.UEDU_MATERIALS_MAX_UPLOAD_BYTES = 200_000
    settings.UEDU_MAX_REQUEST_BYTES = 100_000

    no_file = browser_client.post(url, {"title": "x"})
    assert no_file.status_code == 400 and "此為必需欄位" in no_file.content.decode()
    as_json = browser_client.post(url, {"file": "x"}, content_type="application/json")
    assert as_json.status_code == 400
    huge = pdf_bytes(["Learning analytics."]) + b"%" * 400_000  # over the file limit and the request limit
    refused = browser_client.post(url, {"file": _upload("handout.pdf", huge)})
    assert refused.status_code == 413 and "請求太大" in refused.content.decode()
    assert Material.objects.count() == 0 and MaterialChunk.objects.count() == 0

    # Over the file limit but within the request limit: recorded as failed with the reason, no bytes kept.
    over = pdf_bytes(["Learning analytics."]) + b"%" * 220_000
    assert browser_client.post(url, {"file": _upload("big.pdf", over)}).status_code == 302
    material = Material.objects.get()
    assert (material.status, material.error_code, bool(material.file)) == ("failed", "too_large", False)
    assert MaterialChunk.objects.count() == 0
    wrong = browser_client.post(url, {"file": _upload("notes.pdf", b"PK\x03\x04 a zip named .pdf")})
    assert wrong.status_code == 302
    mismatch = Material.objects.get(original_name="notes.pdf")
    assert (mismatch.status, mismatch.error_code, bool(mismatch.file)) == (
        "failed",
        "wrong_type",
        False,
    ) and mismatch.error
    assert MaterialChunk.objects.count() == 0


def _upload(name: str, data: bytes):
    from tests.support.documents import upload

    return upload(name, data)


def test_login_and_language_forms_refuse_bad_input(personas, settings):
    settings.DEBUG = False
    client = Client(raise_request_exception=False)
    assert client.post("/accounts/login/", big_form("password")).status_code == 413
    wrong = client.post("/accounts/login/", {"username": personas.student.username, "password": "nope"})
    assert (
        wrong.status_code == 200 and "_auth_user_id" not in client.session
    )  # Django's form again, with its error
    assert 'class="error" role="alert"' in wrong.content.decode()
    as_json = client.post("/accounts/login/", {"username": "x"}, content_type="application/json")
    assert as_json.status_code == 200 and "_auth_user_id" not in client.session
    assert 'class="error" role="alert"' in as_json.content.decode()
    assert client.post("/i18n/setlang/", big_form("language")).status_code == 413
    bad_language = client.post("/i18n/setlang/", {"language": "xx-evil", "next": "https://evil.example/"})
    assert bad_language.status_code in (302, 204) and "evil.example" not in bad_language.get("Location", "")
    assert "django_language" not in bad_language.cookies


def test_an_api_url_that_matches_nothing_answers_in_the_error_shape(personas, browser_client):
    for path in ("/api/deep_research/task/not-a-uuid", "/api/deep_research/nothing-here", "/api/other"):
        assert_api_error(browser_client.get(path), 404, "not_found")
    page = browser_client.get("/no-such-page/")
    assert (
        page.status_code == 404
        and page["Content-Type"].startswith("text/html")
        and "找不到" in page.content.decode()
    )
