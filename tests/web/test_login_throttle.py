"""Log-in throttling with django-axes: per username and per address, on both log-in forms, with a
back-off; its release by time and by the operator's command; and password-reset throttling."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from tests.support.factories import PASSWORD, make_user

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
def test_a_username_is_locked_after_five_failures_even_with_the_right_password(client, db, url, settings):
    user = make_user("alice", staff=True)
    statuses = [attempt(client, url, "alice", "wrong", address=f"10.0.0.{n}").status_code for n in range(5)]
    assert statuses == [200, 200, 200, 200, 429]  # the form again, then the lock at the fifth
    locked = attempt(
        client, url, "alice", PASSWORD, address="10.9.9.9"
    )  # another address, the right password
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) == 15 * 60
    assert "_auth_user_id" not in client.session
    assert user.username == "alice"


def test_an_address_is_locked_after_five_failures_whatever_the_usernames(client, db):
    make_user("bob")
    for n in range(5):
        attempt(client, LOGIN, f"nobody{n}", "wrong", address="10.1.1.1")
    assert attempt(client, LOGIN, "bob", PASSWORD, address="10.1.1.1").status_code == 429
    assert logged_in(
        attempt(client, LOGIN, "bob", PASSWORD, address="10.2.2.2")
    )  # bob from elsewhere is fine


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
    for n in range(5):
        attempt(client, LOGIN, "dave", "wrong", address=f"10.3.0.{n}")
    assert attempt(client, LOGIN, "dave", PASSWORD, address="10.3.1.1").status_code == 429
    call_command("axes_reset_username", "dave")
    assert logged_in(attempt(client, LOGIN, "dave", PASSWORD, address="10.3.1.1"))


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
