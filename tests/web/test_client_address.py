"""The client's address behind trusted proxies, read strictly: a forwarded chain with one hop that
is not an address is not used at all, on every path that needs an address (the log-in locks, the
password-reset rate, /healthz's details, the log lines of HTTP, SSE and WebSocket requests), and a
proxy nobody declared is reported once."""

from __future__ import annotations

import logging
import re
import uuid

import httpx
import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from research.services import lifecycle
from tests.research.test_streams import session_cookie
from tests.support.factories import PASSWORD, make_user
from tests.support.stack import start_daphne, wait_for
from uedu_dr import client_address
from uedu_dr.client_address import TrustedProxies, client_ip, parse_trusted_proxies

LOGIN = "/accounts/login/"
PROXY = "10.0.0.254"
# The attack: the client wrote "198.51.100.99, 1.1.1.1, \"" and the proxy appended the
# client's real address; the peer is the proxy. A lenient parse let the quote swallow what follows.
QUOTE_TRICK = '198.51.100.99, 1.1.1.1, ", 203.0.113.7'
BOTH_FORMS = [parse_trusted_proxies("1"), parse_trusted_proxies("10.0.0.0/24")]


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def resolved(settings, forwarded: str, *, peer: str = PROXY, trusted: str = "1") -> str:
    settings.UEDU_TRUSTED_PROXIES = parse_trusted_proxies(trusted)
    return client_address.resolve({"REMOTE_ADDR": peer, "HTTP_X_FORWARDED_FOR": forwarded})


# --------------------------------------------------------------------------- the strict parse


@pytest.mark.parametrize(
    ("hop", "client"),
    [
        ("198.51.100.4", "198.51.100.4"),
        ("198.51.100.4:8443", "198.51.100.4"),  # IPv4 with a port
        ("2001:db8::7", "2001:db8::7"),  # IPv6 bare
        ("2001:DB8:0::0007", "2001:db8::7"),  # ... written another way: one address, one lock
        ("[2001:db8::7]", "2001:db8::7"),  # in brackets
        ("[2001:db8::7]:8443", "2001:db8::7"),  # in brackets with a port
        ("::ffff:198.51.100.4", "198.51.100.4"),  # IPv4-mapped: its IPv4 address
        ("2001:db8::7:8443", "2001:db8::7:8443"),  # bare IPv6 has no port: this is an address
        # Anything else makes the whole header untrusted: the peer (the proxy) is the answer.
        ('"198.51.100.4"', PROXY),
        ('198.51.100.4"', PROXY),
        ("198.51.100.4:", PROXY),  # an empty port
        ("198.51.100.4:0", PROXY),
        ("198.51.100.4:65536", PROXY),
        ("198.51.100.4:http", PROXY),
        ("[198.51.100.4]", PROXY),  # brackets are for IPv6
        ("[198.51.100.4]:80", PROXY),
        ("[2001:db8::7", PROXY),  # unclosed
        ("2001:db8::7]:8443", PROXY),
        ("[2001:db8::7]8443", PROXY),
        ("[2001:db8::7]:", PROXY),
        ("fe80::1%eth0", PROXY),  # a zone id names the proxy's interface, not a client
        ("unknown", PROXY),  # RFC 7239's words and obfuscated ids are not addresses
        ("_hidden", PROXY),
        ("localhost", PROXY),
        ("198.51.100.4 198.51.100.5", PROXY),
        ("１９８.51.100.4", PROXY),  # full-width digits
        ("", PROXY),
    ],
)
def test_each_hop_must_be_an_address_as_a_proxy_writes_it(settings, hop, client):
    assert resolved(settings, hop) == client


@pytest.mark.parametrize(
    "forwarded",
    [
        QUOTE_TRICK,
        '198.51.100.99, "1.1.1.1, 203.0.113.7',
        "198.51.100.99,, 203.0.113.7",  # an empty hop
        ", 203.0.113.7",
        "203.0.113.7,",
        "203.0.113.7, ,",
        "junk, 203.0.113.7",  # garbage far to the left still spoils the header
        "198.51.100.99; 203.0.113.7",
    ],
)
@pytest.mark.parametrize("trusted", ["1", "10.0.0.0/24"])
def test_one_bad_hop_anywhere_makes_the_whole_header_untrusted(settings, forwarded, trusted):
    assert resolved(settings, forwarded, trusted=trusted) == PROXY


def test_a_good_chain_names_the_client_in_either_form_ipv6_included(settings):
    assert resolved(settings, "6.6.6.6, 203.0.113.7") == "203.0.113.7"
    assert resolved(settings, "6.6.6.6, [2001:db8::7]:51000", trusted="1") == "2001:db8::7"
    assert resolved(settings, "6.6.6.6, 203.0.113.7, 10.0.0.3", trusted="10.0.0.0/24") == "203.0.113.7"
    assert (
        resolved(settings, "2001:db8::7, fd00::3", peer="fd00::2", trusted="fd00::/8, 10.0.0.0/24")
        == "2001:db8::7"
    )
    assert resolved(settings, "203.0.113.7", peer="fd00::2", trusted="2") == "fd00::2"  # too few hops


# --------------------------------------------------------------------------- on the paths that count


def through_proxy(client, username, password, forwarded):
    return client.post(
        LOGIN, {"username": username, "password": password}, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded
    )


@pytest.mark.parametrize("trusted", BOTH_FORMS)
def test_the_unclosed_quote_does_not_lock_the_address_it_names(client, db, settings, trusted):
    settings.UEDU_TRUSTED_PROXIES = trusted
    make_user("victim")
    for _ in range(5):  # the attacker, really at 203.0.113.7, names the victim's address
        through_proxy(client, "victim", "wrong", QUOTE_TRICK)
    assert "198.51.100.99" not in set(AccessAttempt.objects.values_list("ip_address", flat=True))
    # The victim, at 198.51.100.99 behind the same proxy, logs in with the right password.
    response = through_proxy(client, "victim", PASSWORD, "198.51.100.99")
    assert response.status_code == 302 and client.session.get("_auth_user_id") is not None


@pytest.mark.parametrize("trusted", BOTH_FORMS)
def test_the_quote_does_not_escape_the_per_address_lock_or_the_reset_rate(client, db, settings, trusted):
    settings.UEDU_TRUSTED_PROXIES = trusted
    settings.UEDU_LOGIN_ADDRESS_FAILURE_LIMIT = 5
    settings.UEDU_PASSWORD_RESET_RATE = "3/h"
    make_user("bystander")
    for n in range(5):  # a new "address" each time, a new username each time
        through_proxy(client, f"guess{n}", "wrong", f'198.51.100.{n}, 1.1.1.1, ", 203.0.113.7')
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {PROXY}
    assert (
        through_proxy(client, "bystander", PASSWORD, '198.51.100.9, 1.1.1.1, ", 203.0.113.7').status_code
        == 429
    )
    statuses = [
        client.post(
            "/accounts/password_reset/",
            {"email": f"x{n}@example.test"},
            REMOTE_ADDR=PROXY,
            HTTP_X_FORWARDED_FOR=f'198.51.100.{n}, 1.1.1.1, ", 203.0.113.7',
        ).status_code
        for n in range(4)
    ]
    assert statuses == [302, 302, 302, 429]  # one address (the proxy's), however it is disguised
    # Clients who send a clean header behind the same proxy are themselves.
    assert through_proxy(client, "bystander", PASSWORD, "203.0.113.8").status_code == 302


def details_shown(client, **headers) -> bool:
    return "error" in client.get("/healthz", **headers).json()["checks"]["redis"]


def test_healthz_details_go_only_to_a_loopback_that_is_the_connection_itself(client, db, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # a failing part, so there are details to hide
    settings.UEDU_HEALTHZ_CACHE_SECONDS = 0
    settings.UEDU_TRUSTED_PROXIES = parse_trusted_proxies("1")
    # The probe: loopback first, the quote, the proxy's append.
    assert not details_shown(
        client, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR='127.0.0.1, 1.1.1.1, ", 203.0.113.7'
    )
    assert not details_shown(client, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="127.0.0.1, 203.0.113.7")
    # A proxy on the machine itself passing on a header it could not vouch for is not a local probe
    # (nor, with no proxy trusted, is a loopback peer that forwards for someone).
    assert not details_shown(client, REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR='"203.0.113.7')
    settings.UEDU_TRUSTED_PROXIES = TrustedProxies()
    assert not details_shown(client, REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert details_shown(client, REMOTE_ADDR="127.0.0.1")  # the machine's own probe
    assert details_shown(client, REMOTE_ADDR="::1")


# --------------------------------------------------------------------------- a proxy nobody declared


def test_a_forwarded_header_with_no_trusted_proxy_is_reported_once(rf, settings, monkeypatch, caplog):
    settings.UEDU_TRUSTED_PROXIES = TrustedProxies()
    monkeypatch.setattr(client_address, "_warned_untrusted", False)
    with caplog.at_level(logging.WARNING, logger="uedu_dr.client_address"):
        client_ip(rf.get("/", REMOTE_ADDR="203.0.113.5"))  # no header: nothing to say
        assert not caplog.records
        for n in range(3):
            request = rf.get("/", REMOTE_ADDR="10.0.0.254", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
            assert client_ip(request) == "10.0.0.254"
    assert len(caplog.records) == 1
    assert "UEDU_TRUSTED_PROXIES" in caplog.records[0].getMessage()


# --------------------------------------------------------------------------- SSE and WebSocket


@pytest.fixture(scope="module")
def proxied_daphne(django_db_setup, django_db_blocker, scripted_llm):
    """daphne behind "one proxy": its peer is always 127.0.0.1, which the count form trusts."""
    with django_db_blocker.unblock():
        process = start_daphne(
            OPENAI_BASE_URL=scripted_llm.url,
            UEDU_TRUSTED_PROXIES="1",
            CACHE_KEY_PREFIX=f"address-{uuid.uuid4().hex[:8]}",
        )
    yield process
    process.stop()


STREAM_LINE = re.compile(r"\[([^\]]*)\] stream (opened|refused) \((SSE|WebSocket)\): task ([0-9a-f-]{36})")
QUESTION = "請比較學習分析與布魯姆分類法在課程設計中的角色"


def stream_lines(process, task_uuid) -> list[tuple[str, str, str]]:
    """(what, path, address) of the stream lines daphne logged for the task, in order."""
    return [
        (what, kind, address)
        for address, what, kind, uuid_ in STREAM_LINE.findall(process.log())
        if uuid_ == str(task_uuid)
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("forwarded", "expected"),
    [
        ("198.51.100.7", "198.51.100.7"),
        ("6.6.6.6, [2001:db8::7]:51000", "2001:db8::7"),
        ('198.51.100.99, 1.1.1.1, "', "127.0.0.1"),  # the quote: the peer, not what the client named
        ("198.51.100.7,,", "127.0.0.1"),  # empty hops
        ("[2001:db8::7", "127.0.0.1"),
    ],
)
def test_the_same_chain_gives_the_same_address_on_sse_and_websocket(
    proxied_daphne, transactional_db, client, personas, forwarded, expected
):
    site = proxied_daphne.extra["url"]
    task, _ = lifecycle.task_start(
        queue=False, user=personas.student, channel=personas.channel, question=QUESTION
    )
    owner = session_cookie(client, personas.student)
    with httpx.stream(
        "GET",
        f"{site}/api/deep_research/task/{task.task_uuid}/stream",
        headers={"Cookie": owner, "Accept": "text/event-stream", "X-Forwarded-For": forwarded},
        timeout=10,
    ) as response:
        assert response.status_code == 200
        next(response.iter_lines())  # the stream is open
    socket_url = f"{site.replace('http://', 'ws://')}/ws/deep_research/{task.task_uuid}/"
    with connect(
        socket_url,
        additional_headers={"Cookie": owner, "Origin": site, "X-Forwarded-For": forwarded},
        open_timeout=10,
    ) as socket:
        socket.recv(timeout=10)
    stranger = session_cookie(client, personas.outsider)
    with pytest.raises(InvalidStatus):  # refused, and its line carries the address too
        connect(
            socket_url,
            additional_headers={"Cookie": stranger, "Origin": site, "X-Forwarded-For": forwarded},
            open_timeout=10,
        )
    wait_for(lambda: len(stream_lines(proxied_daphne, task.task_uuid)) >= 3, message="the stream lines")
    lines = stream_lines(proxied_daphne, task.task_uuid)
    assert lines == [
        ("opened", "SSE", expected),
        ("opened", "WebSocket", expected),
        ("refused", "WebSocket", expected),
    ]
