"""Smaller holes of the policy review, each with its test: /healthz details, the CSP's
connect-src, a chunked body counted as it streams, and bounded extraction of uploaded files."""

from __future__ import annotations

import time

import httpx
import pytest
from django.utils import translation

from materials.extraction import MaterialError, extract
from tests.support.documents import pdf_bytes
from tests.support.factories import make_user
from tests.support.stack import start_daphne

# --------------------------------------------------------------------------- /healthz


def test_healthz_shows_no_details_to_the_internet(client, db, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # a failing part, so there is an error to hide
    body = client.get("/healthz", REMOTE_ADDR="203.0.113.7").json()
    assert body["status"] == "unavailable"
    assert body["checks"]["redis"] == {"ok": False}
    assert body["checks"]["pgvector"] == {"ok": True}  # no version either


def test_healthz_shows_details_to_staff_and_to_loopback(client, db, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    assert "error" in client.get("/healthz", REMOTE_ADDR="127.0.0.1").json()["checks"]["redis"]
    client.force_login(make_user("ops", staff=True))
    assert "error" in client.get("/healthz", REMOTE_ADDR="203.0.113.7").json()["checks"]["redis"]
    client.force_login(make_user("student"))
    assert "error" not in client.get("/healthz", REMOTE_ADDR="203.0.113.7").json()["checks"]["redis"]


# --------------------------------------------------------------------------- CSP


def test_connect_src_names_this_site_only(client, db):
    policy = client.get("/accounts/login/", HTTP_HOST="localhost").headers["Content-Security-Policy"]
    connect = next(d for d in policy.split("; ") if d.startswith("connect-src"))
    assert connect == "connect-src 'self' ws://localhost"
    secure = client.get("/accounts/login/", HTTP_HOST="localhost", secure=True).headers[
        "Content-Security-Policy"
    ]
    assert "connect-src 'self' wss://localhost" in secure
    assert " ws: " not in policy + " " and " wss:" not in policy.replace("wss://", "")


# --------------------------------------------------------------------------- chunked bodies


@pytest.fixture(scope="module")
def small_body_daphne(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        process = start_daphne(UEDU_MAX_REQUEST_BYTES="4096")
    yield process
    process.stop()


def test_a_chunked_body_is_counted_against_the_limit_as_it_streams(small_body_daphne, transactional_db):
    sent = 0

    def body():
        nonlocal sent
        for _ in range(10_000):  # 10 MB in 1 KB chunks, no Content-Length
            sent += 1024
            yield b"x" * 1024

    url = f"{small_body_daphne.extra['url']}/api/deep_research/judge"
    try:
        response = httpx.post(url, content=body(), headers={"Content-Type": "application/json"}, timeout=30)
    except httpx.HTTPError:
        response = None  # the server may close before the client has finished sending
    if response is not None:
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "request_too_large"
        # answered before Django, yet with the site's security headers
        assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert sent < 10_000 * 1024  # the server stopped it long before the end
    small = httpx.post(
        url, content=iter([b'{"question": "hi"}']), headers={"Content-Type": "application/json"}, timeout=30
    )
    assert small.status_code != 413  # a small chunked body passes (and meets the log-in wall)


# --------------------------------------------------------------------------- extraction bounds


BIG_PDF_PAGES = [f"Page {n} " + "learning analytics " * 200 for n in range(1500)]


def test_extraction_past_its_deadline_fails_the_file_not_the_worker(settings):
    settings.UEDU_EXTRACTION_TIMEOUT_SECONDS = 1
    data = pdf_bytes(BIG_PDF_PAGES)
    started = time.monotonic()
    with pytest.raises(MaterialError) as failed, translation.override("en"):
        extract("pdf", data)
    assert failed.value.code == "too_large" and "longer than 1 seconds" in failed.value.message
    assert time.monotonic() - started < 10


def test_extraction_past_its_memory_ceiling_fails_the_file_not_the_worker(settings):
    # Below what the child already uses once its libraries are loaded: any growth is refused,
    # and reading 1,500 pages needs growth.
    settings.UEDU_EXTRACTION_MAX_MEMORY_MB = 40
    with pytest.raises(MaterialError) as failed, translation.override("en"):
        extract("pdf", pdf_bytes(BIG_PDF_PAGES))
    assert failed.value.code == "too_large" and "40 MB" in failed.value.message


def test_extraction_within_its_bounds_reads_the_file():
    units = extract("pdf", pdf_bytes(["Learning analytics measures learner data.", "Second page."]))
    assert [u.number for u in units] == [1, 2] and "Learning analytics" in units[0].text
