"""Shared fixtures: the personas of a course channel (healthchecks-style owner/member/outsider)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django.utils import translation

from channels_app.models import Channel, Membership, SuperTaNda
from tests.support.factories import add_member, make_channel, make_user
from tests.support.material_fixtures import celery_eager, fake_embeddings, index_file  # noqa: F401  (fixtures)


@dataclass
class Personas:
    channel: Channel
    teacher: object
    ta: object
    super_ta: object
    student: object
    other_student: object
    outsider: object
    other_teacher: object
    other_super_ta: object
    admin: object


@receiver(connection_created)
def _let_the_test_flush_empty_the_audit_log(sender, connection, **kwargs):
    """Django empties the tables between transactional tests with TRUNCATE, which the export
    audit log refuses (governance migration 0003) unless the session opts in. Only the test
    process's own connections do; daphne and the workers the tests start never flush."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET uedu.allow_audit_truncate = 'on'")


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the site's default language (zh-hant), whatever language an earlier
    test's requests left active in this thread."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture
def personas(db) -> Personas:
    teacher = make_user("t_owner")
    channel = make_channel(teacher, slug="course-a")
    other_teacher = make_user("t_other")
    other_channel = make_channel(other_teacher, slug="course-b")
    personas = Personas(
        channel=channel,
        teacher=teacher,
        ta=add_member(channel, make_user("ta_a"), Membership.Role.TA),
        super_ta=add_member(channel, make_user("sta_a"), Membership.Role.SUPER_TA),
        student=add_member(channel, make_user("s_alice")),
        other_student=add_member(channel, make_user("s_bob")),
        outsider=make_user("outsider"),
        other_teacher=other_teacher,
        other_super_ta=add_member(other_channel, make_user("sta_b"), Membership.Role.SUPER_TA),
        admin=make_user("root", superuser=True),
    )
    # The personas' Super TAs have their NDA on file (without it they are ordinary TAs:
    # tests/governance/test_super_ta_nda.py).
    for user, in_channel in ((personas.super_ta, channel), (personas.other_super_ta, other_channel)):
        SuperTaNda.objects.create(user=user, channel=in_channel, signed_on=date(2025, 9, 1))
    return personas


# --------------------------------------------------------------------------- the live stack

from tests.support import stack  # noqa: E402
from tests.support.scripted_llm import ScriptedLLM  # noqa: E402


@pytest.fixture(scope="session")
def scripted_llm():
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def llm(scripted_llm, settings):
    """The scripted LLM, reset, and configured for code running in this process."""
    scripted_llm.reset()
    settings.OPENAI_BASE_URL = scripted_llm.url
    settings.OPENAI_API_KEY = "test-key"
    settings.UEDU_LLM_MAX_RETRIES = 2
    settings.UEDU_LLM_TIMEOUT_SECONDS = 10
    return scripted_llm


@pytest.fixture(scope="session")
def fake_openalex():
    from tests.support.fake_openalex import FakeOpenAlex, work

    server = FakeOpenAlex(
        [
            work(
                "W1",
                "Learning analytics dashboards in Taiwanese universities",
                year=2023,
                countries=["tw"],
                abstract="Dashboards help students reflect on their learning.",
            ),
            work(
                "W2",
                "Bloom's taxonomy and question generation",
                year=2022,
                countries=["jp"],
                abstract="Question generation aligned with Bloom's levels.",
            ),
        ]
    ).start()
    yield server
    server.stop()


# The mail the workers send (research-finished e-mails) lands here as files (uedu_dr.settings.test).
MAIL_DIR = Path(tempfile.mkdtemp(prefix="uedu-test-mail-"))
atexit.register(shutil.rmtree, MAIL_DIR, ignore_errors=True)


def sent_mail(containing: str) -> list:
    """The messages (email.message.Message) the workers wrote to MAIL_DIR that contain `containing`."""
    import email

    chunks = [chunk for path in sorted(MAIL_DIR.glob("*")) for chunk in path.read_bytes().split(b"-" * 79)]
    return [email.message_from_bytes(chunk.strip()) for chunk in chunks if containing.encode() in chunk]


# Every worker and daphne of the tests reaches the outside only through these fakes.
def outside_world_env(scripted_llm, fake_openalex) -> dict:
    return {
        "UEDU_TEST_MAIL_DIR": str(MAIL_DIR),
        "OPENAI_BASE_URL": scripted_llm.url,
        "UEDU_LLM_TIMEOUT_SECONDS": 10,
        "OPENALEX_BASE_URL": fake_openalex.url,
        "SEARXNG_URL": "",
        "UEDU_TOOL_HTTP_BACKOFF_SECONDS": "0.05",
        "UEDU_TOOL_CACHE_SECONDS": "0",
    }


@pytest.fixture(scope="session")
def worker_process(django_db_setup, django_db_blocker, scripted_llm, fake_openalex):
    """One real Celery worker (threads pool) for the session, on the test database."""
    with django_db_blocker.unblock():
        process = stack.start_worker(**outside_world_env(scripted_llm, fake_openalex))
    yield process
    process.stop()


@pytest.fixture
def worker(worker_process, transactional_db, llm):
    """A running worker for this test; at the end, waits until its researches are finished so
    the next test's flush cannot pull rows from under it."""
    yield worker_process
    from research.models import ResearchTask
    from research.services import lifecycle

    active = ResearchTask.objects.filter(status__in=["queued", "running"])
    active.update(cancel_requested=True)
    for waiting in active.filter(
        ResearchTask.in_phase(ResearchTask.Phase.AWAITING_PLAN_REVIEW)
    ):  # no worker runs these: end them as a cancel does
        lifecycle.task_cancel(user=waiting.user, task=waiting)
    try:
        stack.wait_for(lambda: not active.exists(), timeout=30, message="researches to end")
    except AssertionError:
        print(worker_process.log()[-4000:])
        raise


@pytest.fixture(scope="session")
def daphne_process(django_db_setup, django_db_blocker, scripted_llm, fake_openalex):
    """daphne serving the ASGI app (HTTP, SSE, WebSocket) on the test database."""
    with django_db_blocker.unblock():
        # DEBUG off as in production: error pages are the site's own, not Django's debug pages
        # (which use inline styles a strict Content-Security-Policy rightly blocks).
        process = stack.start_daphne(
            **outside_world_env(scripted_llm, fake_openalex), UEDU_DR_HEARTBEAT_SECONDS=15, DEBUG="false"
        )
    yield process
    process.stop()


@pytest.fixture
def live(worker, daphne_process):
    """The whole stack: daphne in front, a Celery worker behind, the scripted LLM beyond."""
    return daphne_process


@pytest.fixture(scope="session", autouse=True)
def _close_stray_connections(django_db_setup, django_db_blocker):
    """At the end of the run, end any connection to the test database that a background thread
    (heartbeat monitor, tool threads of an in-process research) still holds, so that the test
    database can be dropped instead of piling up on the embedded server."""
    yield
    from django.db import connection

    with django_db_blocker.unblock():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        connection.close()


@pytest.fixture(scope="session", autouse=True)
def _the_flush_outlasts_a_workers_commit():
    """The session's Celery worker keeps working while a test ends: a question a test stored
    queues its Bloom classification, which the worker commits a moment later. Django's flush
    (TRUNCATE of every table, table by table) and that COMMIT (checking its deferred foreign keys)
    can then wait for each other, and PostgreSQL ends the flush as the deadlock's victim. The
    worker's transaction goes through once the flush has rolled back; the flush is tried again."""
    from django.core.management.base import CommandError
    from django.db import OperationalError
    from django.test import TransactionTestCase

    original = TransactionTestCase._fixture_teardown

    def teardown(self):
        for attempt in range(1, 4):
            try:
                return original(self)
            except CommandError as exc:
                if attempt == 3 or not (
                    isinstance(exc.__cause__, OperationalError) and "deadlock detected" in str(exc.__cause__)
                ):
                    raise
                time.sleep(0.2 * attempt)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransactionTestCase, "_fixture_teardown", teardown)
        yield


# --------------------------------------------------------------------------- every report, checked


@pytest.fixture(autouse=True)
def _every_report_is_checked(monkeypatch):
    """Every research this test completes in its own process (engine tests, in-process runner
    runs, replays) must produce a report valid against the published schema that holds together
    (report_types.integrity_problems finds nothing), reads back as the same typed report, and
    keeps no model text in a ledger row: a fact's row is its spans' words, a row of what was not
    shown is its span's words or empty. (Workers in other processes run the same checks inside
    the engine, assemble.py.)"""
    from agent.engine import loop
    from agent.engine.report_types import Report, integrity_problems, validate

    original = loop.ResearchRun.run

    def checked(self):
        result = original(self)
        if result.outcome == "completed":
            validate(result.report)
            report = Report.from_json(result.report)
            assert integrity_problems(report) == [], integrity_problems(report)
            assert report.to_json() == result.report
            spans = {s.id: s.text for s in report.spans}
            for row in result.verification.get("claims", []):
                if row["kind"] == "fact":
                    assert row["text"] and all(i in spans for i in row["span_ids"]), row
                else:
                    assert row["action"] == "dropped", row
        return result

    monkeypatch.setattr(loop.ResearchRun, "run", checked)
