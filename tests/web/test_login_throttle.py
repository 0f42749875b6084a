"""Log-in throttling with django-axes: per username from an address, per username and per address
at higher limits, on both log-in forms, with a back-off; its release by time and by the operator's
command; password-reset throttling; and the one client-address rule they count by."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from datetime import timedelta

import pytest
import time_machine
from axes.models import AccessAttempt
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from tests.support.factories import PASSWORD, make_user
from uedu_dr.client_address import ClientAddressLogFilter, TrustedProxies, client_ip, parse_trusted_proxies
from uedu_dr.launcher import process_commands

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def attempt(client, url, username, password, address="10.0.0.1"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(response) -> bool:
    return response.status_code == 302


@pytest.mark.parametrize("url", [LOGIN, ADMIN_LOGIN])
def test_a_username_is_locked_from_its_address_after_five_failures_even_with_the_right_password(
    client, db, url
):
    make_user("alice", staff=True)
    statuses = [attempt(client, url, "alice", "wrong", address="10.0.0.1").status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 200, 429]  # the form again, then the lock at the fifth
    locked = attempt(client, url, "alice", PASSWORD, address="10.0.0.1")  # the right password
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) == 15 * 60
    assert "_auth_user_id" not in client.session


def test_one_students_typos_behind_a_campus_nat_do_not_lock_the_campus(client, db):
    make_user("typist")
    make_user("classmate")
    for _ in range(6):
        attempt(client, LOGIN, "typist", "wrong", address="192.0.2.10")  # the campus's one address
    assert attempt(client, LOGIN, "typist", PASSWORD, address="192.0.2.10").status_code == 429
    assert logged_in(attempt(client, LOGIN, "classmate", PASSWORD, address="192.0.2.10"))
    client.logout()
    assert logged_in(attempt(client, LOGIN, "typist", PASSWORD, address="198.51.100.3"))  # from home


def test_a_username_guessed_from_many_addresses_is_locked_everywhere_at_its_higher_limit(
    client, db, settings
):
    settings.UEDU_LOGIN_USERNAME_FAILURE_LIMIT = 8
    make_user("target")
    statuses = [
        attempt(client, LOGIN, "target", "wrong", address=f"10.7.0.{n}").status_code for n in range(8)
    ]
    assert statuses == [200] * 7 + [429]  # no address reached five; the username reached eight
    assert attempt(client, LOGIN, "target", PASSWORD, address="10.7.9.9").status_code == 429


def test_an_address_spraying_many_usernames_is_locked_at_its_higher_limit(client, db, settings):
    settings.UEDU_LOGIN_ADDRESS_FAILURE_LIMIT = 8
    make_user("bob")
    for n in range(8):
        attempt(client, LOGIN, f"nobody{n}", "wrong", address="10.1.1.1")
    assert attempt(client, LOGIN, "bob", PASSWORD, address="10.1.1.1").status_code == 429
    assert logged_in(attempt(client, LOGIN, "bob", PASSWORD, address="10.2.2.2"))  # from elsewhere


def test_ipv6_failures_count_per_64_not_per_address(client, db):
    make_user("v6")
    for n in range(1, 6):  # five addresses of one /64: one client rotating its interface id
        attempt(client, LOGIN, "v6", "wrong", address=f"2001:db8:1:2::{n:x}")
    assert attempt(client, LOGIN, "v6", PASSWORD, address="2001:db8:1:2:ffff::1").status_code == 429
    assert logged_in(attempt(client, LOGIN, "v6", PASSWORD, address="2001:db8:1:3::1"))  # another /64


# --------------------------------------------------------------------------- the client's address


def test_a_spoofed_forwarded_for_without_a_trusted_proxy_changes_nothing(client, db, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # a failing part, so /healthz has details to hide
    make_user("mallory")
    for n in range(5):  # a new "address" each time, as a client choosing its own would
        client.post(
            LOGIN,
            {"username": "mallory", "password": "wrong"},
            REMOTE_ADDR="203.0.113.9",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
        )
    locked = client.post(
        LOGIN,
        {"username": "mallory", "password": PASSWORD},
        REMOTE_ADDR="203.0.113.9",
        HTTP_X_FORWARDED_FOR="198.51.100.200",
    )
    assert locked.status_code == 429  # the lock is on the peer's address, whatever the header said
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.9"}
    health = client.get("/healthz", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="127.0.0.1").json()
    assert health["checks"]["redis"] == {"ok": False}  # "I am loopback" earns no details


PROXY = "10.0.0.254"


def through_proxy(client, username, password, real_client, spoofed="6.6.6.6"):
    # What nginx sends with proxy_add_x_forwarded_for: the client's own header, then its address.
    return client.post(
        LOGIN,
        {"username": username, "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=f"{spoofed}, {real_client}",
    )


@pytest.mark.parametrize("trusted", [TrustedProxies(count=1), parse_trusted_proxies("10.0.0.0/24")])
def test_with_one_trusted_proxy_the_real_client_is_locked_not_the_proxy(client, db, settings, trusted):
    settings.UEDU_TRUSTED_PROXIES = trusted
    settings.UEDU_LOGIN_ADDRESS_FAILURE_LIMIT = 5
    make_user("victim")
    make_user("bystander")
    for n in range(5):
        through_proxy(client, f"guess{n}", "wrong", real_client="198.51.100.7", spoofed=f"6.6.6.{n}")
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"198.51.100.7"}
    # The real client is locked, whatever it writes to the left ...
    assert through_proxy(client, "victim", PASSWORD, real_client="198.51.100.7").status_code == 429
    # ... and everyone else behind the same proxy is not.
    assert logged_in(through_proxy(client, "bystander", PASSWORD, real_client="198.51.100.8"))


def test_a_peer_that_is_not_a_trusted_proxy_is_the_client_whatever_it_forwards(rf, settings):
    settings.UEDU_TRUSTED_PROXIES = parse_trusted_proxies("10.0.0.0/24, 2001:db8:ff::/48")
    request = rf.get("/", REMOTE_ADDR="203.0.113.5", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert client_ip(request) == "203.0.113.5"
    # Two proxies of ours in a row are both skipped; what the client wrote further left is not read.
    request = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 198.51.100.4, 10.0.0.1")
    assert client_ip(request) == "198.51.100.4"
    # A hop that is not an address makes the whole header untrusted (tests/web/test_client_address.py).
    request = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="junk, 198.51.100.4, 10.0.0.1")
    assert client_ip(request) == "10.0.0.2"
    settings.UEDU_TRUSTED_PROXIES = TrustedProxies(count=2)
    request = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.4, 10.0.0.1")
    assert client_ip(request) == "198.51.100.4"
    # Fewer hops than proxies: the request went around them, so the peer is all we know.
    request = rf.get("/", REMOTE_ADDR="203.0.113.5", HTTP_X_FORWARDED_FOR="1.2.3.4")
    assert client_ip(request) == "203.0.113.5"


@pytest.mark.parametrize("raw", ["ten", "10.0.0.0/33", "10.0.0.0/8,", "-1", "11", "10.0.0.1;10.0.0.2"])
def test_a_trusted_proxy_setting_that_does_not_parse_stops_the_start(raw):
    with pytest.raises(ValueError):
        parse_trusted_proxies(raw)
    env = {**os.environ, "UEDU_TRUSTED_PROXIES": raw, "DJANGO_SETTINGS_MODULE": "uedu_dr.settings.base"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], env=env, capture_output=True, text=True
    )
    assert result.returncode != 0 and "UEDU_TRUSTED_PROXIES" in result.stderr


def test_the_launcher_never_lets_daphne_take_the_address_from_headers():
    commands = process_commands({}, "127.0.0.1", "8000")
    assert "--proxy-headers" not in commands["daphne"]


def test_log_lines_carry_the_client_address(client, db):
    """The console handler the settings configure stamps each line with the request's client."""
    handler = next(
        h
        for h in logging.getLogger().handlers
        if any(isinstance(f, ClientAddressLogFilter) for f in h.filters)
    )
    seen = []
    original = handler.emit
    handler.emit = lambda record: seen.append(handler.format(record))
    try:
        make_user("logged")
        client.post(
            LOGIN,
            {"username": "logged", "password": "wrong"},
            REMOTE_ADDR="203.0.113.60",
            HTTP_X_FORWARDED_FOR="6.6.6.6",
        )
    finally:
        handler.emit = original
    assert any("[203.0.113.60]" in line and "login failure" in line for line in seen)
    assert not any("6.6.6.6" in line for line in seen)


def test_the_lock_is_released_after_the_cool_off_and_backs_off_when_failures_go_on(client, db):
    make_user("carol")
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        for _ in range(5):
            attempt(client, LOGIN, "carol", "wrong")
        assert attempt(client, LOGIN, "carol", PASSWORD).status_code == 429
        clock.move_to(start + timedelta(minutes=16))
        # The lock is over; the guessing goes on.
        assert [attempt(client, LOGIN, "carol", "wrong").status_code for _ in range(5)] == [
            200,
            200,
            200,
            200,
            429,
        ]
        second = attempt(client, LOGIN, "carol", PASSWORD)
        assert second.status_code == 429 and int(second["Retry-After"]) == 30 * 60  # doubled
        clock.move_to(start + timedelta(minutes=16 + 20))
        assert attempt(client, LOGIN, "carol", PASSWORD).status_code == 429  # 20 min < 30 min
        clock.move_to(start + timedelta(minutes=16 + 31))
        assert logged_in(attempt(client, LOGIN, "carol", PASSWORD))


def test_an_operator_unlocks_an_account_with_the_axes_command(client, db):
    make_user("dave")
    for _ in range(5):
        attempt(client, LOGIN, "dave", "wrong", address="10.3.0.1")
    assert attempt(client, LOGIN, "dave", PASSWORD, address="10.3.0.1").status_code == 429
    call_command("axes_reset_username", "dave")
    assert logged_in(attempt(client, LOGIN, "dave", PASSWORD, address="10.3.0.1"))


def test_password_reset_requests_are_throttled_per_address_and_per_email(client, db, mailoutbox, settings):
    settings.UEDU_PASSWORD_RESET_RATE = "3/h"
    make_user("erin")
    url = "/accounts/password_reset/"
    statuses = [
        client.post(url, {"email": "erin@example.test"}, REMOTE_ADDR=f"10.4.0.{n}").status_code
        for n in range(5)
    ]
    assert statuses == [302, 302, 302, 429, 429]  # one e-mail address, many addresses
    assert len(mailoutbox) == 3
    refused = client.post(url, {"email": "erin@example.test"}, REMOTE_ADDR="10.4.9.9")
    assert int(refused["Retry-After"]) > 0
    statuses = [
        client.post(url, {"email": f"x{n}@example.test"}, REMOTE_ADDR="10.5.0.1").status_code
        for n in range(4)
    ]
    assert statuses == [302, 302, 302, 429]  # one address, many e-mail addresses


def test_the_password_reset_count_ignores_the_case_of_the_email(client, db, mailoutbox, settings):
    settings.UEDU_PASSWORD_RESET_RATE = "2/h"
    make_user("fay")
    url = "/accounts/password_reset/"
    spellings = ["fay@example.test", "FAY@example.test", "Fay@Example.Test"]
    statuses = [
        client.post(url, {"email": email}, REMOTE_ADDR=f"10.6.0.{n}").status_code
        for n, email in enumerate(spellings)
    ]
    assert statuses == [302, 302, 429]  # one mailbox, however it is spelt
    assert len(mailoutbox) <= 2


def test_the_password_reset_never_writes_its_link_where_the_logs_go(client, db, settings, capsys, caplog):
    """With the console mail backend (development; production only with UEDU_ALLOW_CONSOLE_EMAIL=1)
    a reset mail would print its link, which takes over the account, into the logs."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    user = make_user("gina")
    with caplog.at_level(logging.INFO):
        response = client.post(
            "/accounts/password_reset/", {"email": "gina@example.test"}, REMOTE_ADDR="10.8.0.1"
        )
    assert response.status_code == 302  # the same answer as when a mail is sent: nothing to enumerate
    printed = capsys.readouterr()
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for text in (printed.out, printed.err, logged):
        assert "/accounts/reset/" not in text and "gina@example.test" not in text
    assert f"user #{user.pk}" in logged and "not sent" in logged
