"""Shared fixtures: the personas of a course channel (healthchecks-style owner/member/outsider)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.utils import translation

from channels_app.models import Channel, Membership
from tests.support.factories import add_member, make_channel, make_user


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
    return Personas(
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
def worker_process(django_db_setup, django_db_blocker, scripted_llm):
    """One real Celery worker (threads pool) for the session, on the test database."""
    with django_db_blocker.unblock():
        process = stack.start_worker(OPENAI_BASE_URL=scripted_llm.url, UEDU_LLM_TIMEOUT_SECONDS=10)
    yield process
    process.stop()


@pytest.fixture
def worker(worker_process, transactional_db, llm):
    """A running worker for this test; at the end, waits until its researches are finished so
    the next test's flush cannot pull rows from under it."""
    yield worker_process
    from research.models import ResearchTask

    active = ResearchTask.objects.filter(status__in=["queued", "running"])
    active.update(cancel_requested=True)
    try:
        stack.wait_for(lambda: not active.exists(), timeout=30, message="researches to end")
    except AssertionError:
        print(worker_process.log()[-4000:])
        raise


@pytest.fixture(scope="session")
def daphne_process(django_db_setup, django_db_blocker, scripted_llm):
    """daphne serving the ASGI app (HTTP, SSE, WebSocket) on the test database."""
    with django_db_blocker.unblock():
        # DEBUG off as in production: error pages are the site's own, not Django's debug pages
        # (which use inline styles a strict Content-Security-Policy rightly blocks).
        process = stack.start_daphne(OPENAI_BASE_URL=scripted_llm.url, UEDU_DR_HEARTBEAT_SECONDS=15, DEBUG="false")
    yield process
    process.stop()


@pytest.fixture
def live(worker, daphne_process):
    """The whole stack: daphne in front, a Celery worker behind, the scripted LLM beyond."""
    return daphne_process
