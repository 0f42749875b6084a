"""web_search against a fake SearxNG, fetch_url against a tiny local web server, and fetch_url's
refusals. The local server listens on 127.0.0.1, so tests that read real content allow-list
loopback (`loopback_allowed`); tests of refusals must not."""

from __future__ import annotations

import ipaddress
import socket
import time

import pytest

from agent.connectors.webfetch import address_problem
from agent.engine.boundaries import host_permitted as domain_permitted
from agent.tools import ToolContext
from tests.agent.connectors.conftest import WEB_CTX, call
from tests.support.fake_http import Reply
from tests.support.fake_searxng import result

ARTICLE = """<html><head><title>Spaced repetition works</title><script>alert('x')</script></head>
<body><nav>Home | About | Login</nav>
<article><h1>Spaced repetition works</h1>
<p>Students who reviewed material at growing intervals remembered 30 percent more after a month than students who crammed.</p>
<p>The effect held across mathematics, biology and language courses in three universities.</p></article>
<footer>Copyright footer text</footer></body></html>"""


def ctx(**rules) -> ToolContext:
    return ToolContext(user_id=1, channel_id=1, web_tools_enabled=True, **rules)


# --------------------------------------------------------------------------- web_search
def test_web_search_returns_web_tier_sources_with_links_and_snippets(searxng):
    searxng.results = [
        result(
            "Spaced repetition - Wikipedia",
            "https://en.wikipedia.org/wiki/Spaced_repetition",
            "Spaced repetition is an evidence-based learning technique.",
        ),
        result(
            "Spacing effect study",
            "https://journal.example/spacing",
            "A study of the spacing effect in classrooms.",
        ),
    ]

    found = call("web_search", query="spaced repetition")

    assert found.ok, found.error
    assert [s.url for s in found.sources] == ["https://en.wikipedia.org/wiki/Spaced_repetition"]
    source = found.sources[0]
    assert source.tier == "web" and source.source_tool == "web_search" and source.meta["external"] is True
    assert source.snippet == "Spaced repetition is an evidence-based learning technique."
    assert searxng.requests_to("/search")[0].query["format"] == "json"


def test_web_search_honours_the_channels_domain_rules(searxng):
    searxng.results = [
        result("A", "https://blog.spam.example/a", "learning"),
        result("B", "https://www.ntnu.edu.tw/b", "learning"),
        result("C", "https://news.example/c", "learning"),
    ]
    assert [
        s.url for s in call("web_search", ctx(denied_domains=("spam.example",)), query="learning").sources
    ] == [
        "https://www.ntnu.edu.tw/b",
        "https://news.example/c",
    ]
    assert [
        s.url for s in call("web_search", ctx(allowed_domains=("edu.tw",)), query="learning").sources
    ] == ["https://www.ntnu.edu.tw/b"]


def test_web_search_without_a_configured_provider_says_so(settings):
    settings.SEARXNG_URL = ""
    assert (
        call("web_search", query="x").error
        == "web search is not configured on this server (SEARXNG_URL is empty)"
    )


def test_web_search_reports_a_searxng_that_refuses_json(searxng):
    searxng.route("/search", Reply(status=403, body="Forbidden"))
    assert call("web_search", query="x").error.startswith("SearxNG refused the request (HTTP 403)")


# --------------------------------------------------------------------------- fetch_url: reading
def test_fetch_url_reads_a_page_as_clean_text(site, loopback_allowed):
    site.route("/article", Reply.html(ARTICLE))

    fetched = call("fetch_url", url=f"{site.url}/article")

    assert fetched.ok, fetched.error
    source = fetched.sources[0]
    assert source.tier == "web" and source.source_tool == "fetch_url"
    assert source.title == "Spaced repetition works"
    assert source.url == f"{site.url}/article"
    assert "remembered 30 percent more" in source.text
    assert "alert(" not in source.text and "Copyright footer" not in source.text
    assert len(source.snippet) <= 300 and source.meta["truncated"] is False


def test_fetch_url_connects_to_the_address_it_checked_and_names_the_host(site, loopback_allowed, monkeypatch):
    """DNS rebinding: the name resolves to an allowed address when checked and to another one
    afterwards. fetch_url resolves once and connects to the checked address itself."""
    real = socket.getaddrinfo
    answers = iter(["127.0.0.1"])

    def rebinding(host, port, *args, **kwargs):
        if host == "rebind.test":
            address = next(answers, "10.9.9.9")  # every later lookup would lead inside
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    site.route("/page", Reply.html(ARTICLE))

    fetched = call("fetch_url", url=f"http://rebind.test:{site.port}/page")

    assert fetched.ok, fetched.error
    assert site.requests_to("/page")[0].headers["host"] == f"rebind.test:{site.port}"
    assert fetched.sources[0].url == f"http://rebind.test:{site.port}/page"


def test_fetch_url_follows_redirects_rechecking_each_hop(site, loopback_allowed):
    site.route("/old", Reply.redirect("/older", 301))
    site.route("/older", Reply.redirect(f"{site.url}/article", 302))
    site.route("/article", Reply.html(ARTICLE))

    fetched = call("fetch_url", url=f"{site.url}/old")

    assert fetched.ok, fetched.error
    assert fetched.sources[0].url == f"{site.url}/article"
    assert fetched.data["redirects"] == [f"{site.url}/older", f"{site.url}/article"]


def test_fetch_url_stops_after_a_bounded_number_of_redirects(site, loopback_allowed, settings):
    settings.UEDU_FETCH_MAX_REDIRECTS = 3
    site.route("/loop", Reply.redirect("/loop"))
    assert call("fetch_url", url=f"{site.url}/loop").error == "more than 3 redirects"
    assert len(site.requests_to("/loop")) == 4


def test_a_body_over_the_size_limit_is_cut_and_marked(site, loopback_allowed, settings):
    settings.UEDU_FETCH_MAX_BYTES = 10_000
    site.route(
        "/endless",
        Reply(headers={"Content-Type": "text/plain"}, chunks=(b"x" * 99 + b"\n" for _ in range(1000))),
    )

    fetched = call("fetch_url", url=f"{site.url}/endless")

    assert fetched.ok, fetched.error
    assert fetched.sources[0].meta["truncated"] is True
    assert fetched.sources[0].text.endswith("cut at the size limit]")
    assert len(fetched.sources[0].text.replace("\n", "")) < 10_000


def test_a_declared_length_over_the_limit_is_refused_unread(site, loopback_allowed, settings):
    settings.UEDU_FETCH_MAX_BYTES = 1_000
    site.route("/big", Reply(headers={"Content-Type": "text/plain"}, body=b"y" * 5_000))
    assert (
        call("fetch_url", url=f"{site.url}/big").error
        == "the page is 5,000 bytes, above the 1,000-byte limit"
    )


def test_a_slow_body_hits_the_time_limit(site, loopback_allowed, settings):
    settings.UEDU_FETCH_TIMEOUT_SECONDS = 0.5

    def drip():
        for _ in range(20):
            time.sleep(0.1)
            yield b"z" * 10

    site.route("/slow", Reply(headers={"Content-Type": "text/plain"}, chunks=drip()))
    started = time.monotonic()
    error = call("fetch_url", url=f"{site.url}/slow").error
    assert "took longer than 0.5 s" in error or "did not answer within the time limit" in error
    assert time.monotonic() - started < 1.5


def test_a_content_type_that_is_not_text_is_refused(site, loopback_allowed):
    site.route("/logo.png", Reply(headers={"Content-Type": "image/png"}, body=b"\x89PNG"))
    assert (
        "sent image/png, which fetch_url does not read" in call("fetch_url", url=f"{site.url}/logo.png").error
    )


def test_an_error_status_is_reported(site, loopback_allowed):
    assert call("fetch_url", url=f"{site.url}/missing").error == "127.0.0.1 answered HTTP 404"


# --------------------------------------------------------------------------- fetch_url: refusals
def test_loopback_is_refused_without_the_allow_list(site):
    site.route("/article", Reply.html(ARTICLE))
    error = call("fetch_url", url=f"{site.url}/article").error
    assert error == "refusing to fetch 127.0.0.1: 127.0.0.1 is a loopback address"
    assert site.requests == []  # refused before any connection


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://[::1]:8080/", "::1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "127.0.0.1 is a loopback address (as IPv4-mapped"),
        ("http://[::ffff:169.254.169.254]/", "169.254.169.254 is a link-local address (as IPv4-mapped"),
        ("http://0.0.0.0/", "0.0.0.0 is an unspecified address"),
        ("http://10.0.0.8/", "10.0.0.8 is a private address"),
        ("http://2130706433/", "127.0.0.1 is a loopback address"),  # 127.0.0.1 written as one number
    ],
)
def test_private_and_special_addresses_are_refused(url, reason):
    error = call("fetch_url", url=url).error
    assert error.startswith("refusing to fetch") and reason in error, error


def test_localhost_is_refused_by_what_it_resolves_to(site):
    site.route("/", Reply.html(ARTICLE))
    assert "loopback address" in call("fetch_url", url=f"http://localhost:{site.port}/").error
    assert site.requests == []


def test_a_hostname_resolving_to_a_private_address_is_refused(monkeypatch):
    real = socket.getaddrinfo

    def intranet(host, port, *args, **kwargs):
        if host == "wiki.intranet.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.168.10.5", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", intranet)
    assert call("fetch_url", url="https://wiki.intranet.example/page").error == (
        "refusing to fetch wiki.intranet.example: 192.168.10.5 is a private address"
    )


def test_a_redirect_to_a_private_address_is_refused(site, loopback_allowed):
    site.route("/go", Reply.redirect("http://169.254.169.254/latest/meta-data/iam/"))
    error = call("fetch_url", url=f"{site.url}/go").error
    assert error == "refusing to fetch 169.254.169.254: 169.254.169.254 is a link-local address"


def test_a_redirect_to_another_scheme_is_refused(site, loopback_allowed):
    site.route("/go", Reply.redirect("file:///etc/passwd"))
    assert call("fetch_url", url=f"{site.url}/go").error.startswith(
        "only http and https URLs are fetched, not file"
    )


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://ftp.example.org/file.txt", "gopher://example.org/", "javascript:alert(1)"],
)
def test_non_http_schemes_are_refused(url):
    assert call("fetch_url", url=url).error.startswith("only http and https URLs are fetched")


def test_urls_with_credentials_are_refused():
    assert (
        call("fetch_url", url="http://user:secret@example.org/").error
        == "URLs with credentials are not fetched"
    )


def test_the_channels_domain_rules_apply_to_fetch_url(site, loopback_allowed):
    site.route("/go", Reply.redirect("https://tracker.spam.example/x"))
    denied = ctx(denied_domains=("spam.example",))
    assert (
        call("fetch_url", denied, url="https://spam.example/").error
        == "spam.example is not allowed by this channel's web domain rules"
    )
    assert (
        call("fetch_url", denied, url=f"{site.url}/go").error
        == "tracker.spam.example is not allowed by this channel's web domain rules"
    )
    only_edu = ctx(allowed_domains=("edu.tw",))
    assert (
        "not allowed by this channel's web domain rules"
        in call("fetch_url", only_edu, url="https://example.org/").error
    )


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("::ffff:8.8.8.8", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("100.64.0.1", False),  # carrier-grade NAT
        ("169.254.169.254", False),
        ("224.0.0.1", False),
        ("240.0.0.1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("2002:7f00:1::", False),  # 6to4 wrapping 127.0.0.1
        ("64:ff9b::a00:1", False),  # NAT64 wrapping 10.0.0.1
    ],
)
def test_address_rules(address, allowed):
    assert (address_problem(ipaddress.ip_address(address), []) == "") is allowed


def test_the_allow_list_exempts_only_its_networks():
    networks = [ipaddress.ip_network("10.20.0.0/16")]
    assert address_problem(ipaddress.ip_address("10.20.1.1"), networks) == ""
    assert address_problem(ipaddress.ip_address("10.21.1.1"), networks) != ""


def test_domain_rules_match_subdomains_not_lookalikes():
    assert domain_permitted("www.ntnu.edu.tw", ("edu.tw",), ())
    assert not domain_permitted("edu.tw.evil.example", ("edu.tw",), ())
    assert domain_permitted("notspam.example", (), ("spam.example",))
    assert not domain_permitted("a.spam.example", (), ("spam.example",))


def test_web_tools_are_absent_when_the_channel_disables_them():
    from agent.tools import REGISTRY

    closed = ToolContext(user_id=1, channel_id=1, web_tools_enabled=False)
    names = REGISTRY.bind(closed).names()
    assert not names & {"web_search", "fetch_url"}
    assert {"search_external_papers", "get_financials", "get_course_overview", "get_internal_docs"} <= names
    assert {"web_search", "fetch_url"} <= REGISTRY.bind(WEB_CTX).names()
    assert call("fetch_url", closed, url="https://example.org/").error == "unknown tool 'fetch_url'"
