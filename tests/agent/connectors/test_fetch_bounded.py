"""A page or PDF a student links is parsed in the same bounded child process as course materials
(uedu_dr/bounded_process.py): a crafted file that makes the parser slow or hungry fails that one
fetch within the fetch's own time limit, and the parsing process is killed, never the worker."""

from __future__ import annotations

import multiprocessing
import threading
import time

from tests.agent.connectors.conftest import call
from tests.support.documents import pdf_bytes, slow_single_page_pdf
from tests.support.fake_http import Reply


def test_a_crafted_slow_pdf_cannot_hold_a_worker_past_the_fetch_limit(site, loopback_allowed, settings):
    settings.UEDU_FETCH_TIMEOUT_SECONDS = 3
    # A few kilobytes whose one page takes pypdf tens of seconds: checking the deadline between
    # pages (as the fetch did in the worker's thread) cannot stop it; killing the child does.
    data = slow_single_page_pdf()
    assert len(data) < 20_000
    site.route("/crafted.pdf", Reply(headers={"Content-Type": "application/pdf"}, body=data))
    threads_before = threading.active_count()

    started = time.monotonic()
    fetched = call("fetch_url", url=f"{site.url}/crafted.pdf")
    elapsed = time.monotonic() - started

    assert not fetched.ok and "took longer than the 3 s limit" in fetched.error
    assert elapsed < 3 + 2  # the limit, and the kill
    assert multiprocessing.active_children() == []  # the parser was killed and reaped
    assert threading.active_count() <= threads_before  # nothing left running in the worker


def test_a_page_that_needs_more_memory_than_the_ceiling_fails_alone(site, loopback_allowed, settings):
    # Below what the child holds once trafilatura is loaded: any growth is refused.
    settings.UEDU_EXTRACTION_MAX_MEMORY_MB = 40
    page = "<html><body>" + "<div><p>learning analytics</p>" * 30_000 + "</div>" * 30_000 + "</body></html>"
    site.route("/hungry.html", Reply.html(page))

    fetched = call("fetch_url", url=f"{site.url}/hungry.html")

    assert not fetched.ok and "needs more than 40 MB of memory" in fetched.error
    assert multiprocessing.active_children() == []


def test_pages_and_pdfs_within_the_bounds_are_read_in_the_child(site, loopback_allowed):
    site.route(
        "/ok.html",
        Reply.html(
            "<html><head><title>Spacing</title></head><body><p>Spaced review helps.</p></body></html>"
        ),
    )
    site.route("/ok.pdf", Reply(headers={"Content-Type": "application/pdf"}, body=pdf_bytes(["One page."])))
    page = call("fetch_url", url=f"{site.url}/ok.html")
    pdf = call("fetch_url", url=f"{site.url}/ok.pdf")
    assert page.ok and "Spaced review helps." in page.sources[0].text and page.sources[0].title == "Spacing"
    assert pdf.ok and "One page." in pdf.sources[0].text
