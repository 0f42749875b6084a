"""The rolling 24-hour window, refunds and the cost alert, with frozen time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.db import transaction

from quotas import services
from quotas.models import CostAlert, CostReservation, UsageEntry
from uedu_dr.errors import ServiceError

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def limits(settings):
    settings.UEDU_DEEP_RESEARCH_QUOTA = {"admin": None, "teacher": None, "ta": 40, "student": 2}


def charge(user, ref):
    with transaction.atomic():
        return services.charge(user, ref)


def test_units_free_up_24_hours_after_the_start_that_used_them(db, personas):
    with time_machine.travel(T0, tick=False):
        charge(personas.student, "a")
    with time_machine.travel(T0 + timedelta(hours=10), tick=False):
        charge(personas.student, "b")
        with pytest.raises(ServiceError) as full:
            charge(personas.student, "c")
        assert full.value.status == 429
        assert full.value.retry_after == 14 * 3600 + 1  # until the first start leaves the window
        status = services.quota_status(personas.student)
        assert status.window_start == T0 and status.next_free_at == T0 + timedelta(hours=24)
    with time_machine.travel(T0 + timedelta(hours=23, minutes=59, seconds=59), tick=False):
        with pytest.raises(ServiceError):
            charge(personas.student, "c")
    with time_machine.travel(T0 + timedelta(hours=24, seconds=1), tick=False):
        charge(personas.student, "c")  # "a" left the window
        assert services.quota_status(personas.student).used == 2
        assert services.quota_status(personas.student).window_start == T0 + timedelta(hours=10)


def test_refunds_give_back_quota_once(db, personas):
    with time_machine.travel(T0, tick=False):
        charge(personas.student, "a")
        charge(personas.student, "b")
        assert services.refund(personas.student.pk, "a", Decimal("0.5"), "cancelled") is True
        assert services.refund(personas.student.pk, "a", Decimal("0.5"), "cancelled") is False
        assert services.quota_status(personas.student).used == Decimal("1.5")
        with pytest.raises(ServiceError):
            charge(personas.student, "c")  # 1.5 + 1 > 2
        services.refund(personas.student.pk, "b", Decimal("1.0"), "failed")
        charge(personas.student, "c")
    assert UsageEntry.objects.filter(user=personas.student, kind="refund").count() == 2


def test_a_refund_of_something_never_charged_writes_nothing(db, personas):
    assert services.refund(personas.student.pk, "ghost", Decimal("1.0"), "failed") is False
    assert not UsageEntry.objects.exists()


def test_unlimited_roles_are_never_refused(db, personas):
    with time_machine.travel(T0, tick=False):
        for i in range(10):
            charge(personas.teacher, f"t{i}")
    assert services.quota_status(personas.teacher).remaining is None


def test_cost_alert_is_sent_once_per_day_when_over_threshold(db, personas, settings):
    settings.UEDU_DEEP_RESEARCH_ALERT_USD = Decimal("20")
    personas.admin.email = "root@example.test"
    personas.admin.save()
    day = services.platform_day()
    CostReservation.objects.create(
        reference="x", day=day, reserved_usd=Decimal("1"), spent_usd=Decimal("19.5"), settled=True
    )

    call_command("deep_research_cost_alert")
    assert len(mail.outbox) == 0  # 19.5 is under 20

    CostReservation.objects.create(reference="y", day=day, reserved_usd=Decimal("0.9"))
    call_command("deep_research_cost_alert")
    call_command("deep_research_cost_alert")

    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["root@example.test"]
    assert "20.40" in mail.outbox[0].subject
    assert CostAlert.objects.get(day=day).cost_usd == Decimal("20.4")


def test_a_failed_send_is_retried_by_the_next_run(db, personas, settings, monkeypatch):
    settings.UEDU_DEEP_RESEARCH_ALERT_USD = Decimal("1")
    personas.admin.email = "root@example.test"
    personas.admin.save()
    CostReservation.objects.create(
        reference="x", day=services.platform_day(), reserved_usd=0, spent_usd=Decimal("5"), settled=True
    )

    def broken(*args, **kwargs):
        raise ConnectionRefusedError("SMTP down")

    monkeypatch.setattr(services, "send_mail", broken)
    with pytest.raises(ConnectionRefusedError):
        services.send_cost_alert()
    assert not CostAlert.objects.exists()
    monkeypatch.undo()
    assert services.send_cost_alert() is not None
    assert len(mail.outbox) == 1


def test_the_cap_counts_settled_calls_at_their_cost_and_open_ones_at_their_worst_case(db, personas, settings):
    """reserve_cost checks the cap with one aggregate (committed_cost); it must agree with
    cost_status, which the dashboard and the alert show, and refuse exactly past the cap."""
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("1.00")
    settings.UEDU_USER_DAILY_CAP_SHARE = Decimal("1")  # the cap is under test, not one user's share of it
    with time_machine.travel(T0, tick=False):
        day = services.platform_day()
        yesterday = CostReservation.objects.create(
            reference="old", user=personas.student, day=day - timedelta(days=1), reserved_usd=Decimal("0.90")
        )
        assert yesterday.pk  # another day's reservation counts for nothing today
        with transaction.atomic():
            settled = services.reserve_cost(
                personas.student, "settled", Decimal("0.50"), CostReservation.Kind.CHAT
            )
        services.settle_cost(settled.reference, Decimal("0.10"))  # counts 0.10, not its 0.50 reservation
        with transaction.atomic():
            services.reserve_cost(personas.student, "open", Decimal("0.40"))
        status = services.cost_status()
        assert services.committed_cost(day) == status.committed == Decimal("0.50")
        assert status.by_kind == {"chat": Decimal("0.10"), "research": Decimal("0.40")}
        with pytest.raises(ServiceError) as refused, transaction.atomic():
            services.reserve_cost(personas.student, "over", Decimal("0.500001"))
        assert refused.value.code == "platform_cap_reached" and refused.value.status == 503
        with transaction.atomic():
            services.reserve_cost(personas.student, "fits", Decimal("0.50"))  # exactly up to the cap
        assert services.committed_cost(day) == Decimal("1.00")
        assert not CostReservation.objects.filter(reference="over").exists()
