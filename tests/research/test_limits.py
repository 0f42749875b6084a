"""A limit never crashes a research: on the real stack (a Celery worker, the database, the real
openai client over HTTP to the scripted server), the time limit and the token limit are met in
each phase in turn, and each time the research completes, says `limit_hit` exactly once, and
answers with what it has, within its grace and its reservation."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from decimal import Decimal

import pytest

from quotas.models import CostReservation
from research.models import ResearchTask, TranscriptEntry
from research.services import lifecycle
from research.tasks import execute_research_task
from tests.support import stack
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for

pytestmark = pytest.mark.slow

# The words match the fake OpenAlex papers (tests/conftest.py), which become the citations.
QUESTION = "Compare learning analytics dashboards with question generation by Bloom's taxonomy"

MAX_SECONDS = 5
# The grace is long enough that a finishing phase's share (a quarter of it at most) holds a slow
# answer even though the client still splits a call's time among its retries (agent/engine/llm.py).
GRACE_SECONDS = 120
SLOW = 7  # seconds a slow phase's answer takes: past the time limit wherever it starts
MAX_TOKENS = 8_000
EARLY_TOKENS = 4_000  # complex questions' token budget: a wordy plan or turn crosses it
GRACE_TOKENS = 20_000
WORDY = 10**6  # completion tokens a wordy phase reports (its answer bound caps them)
PRICES = {"default": [1.0, 4.0]}  # USD per million tokens: the reservation is priced from these


def _worker(queue: str, llm, fake_openalex, **env):
    from tests.conftest import outside_world_env

    process = stack.start_worker(
        queues=queue,
        **{**outside_world_env(llm, fake_openalex), "UEDU_LLM_PRICES": json.dumps(PRICES), **env},
    )
    yield process
    process.stop()


@pytest.fixture(scope="module")
def timed_worker(django_db_setup, django_db_blocker, scripted_llm, fake_openalex):
    """A worker whose researches have a 5-second time limit and a minute of grace."""
    with django_db_blocker.unblock():
        yield from _worker(
            "limits_time",
            scripted_llm,
            fake_openalex,
            UEDU_DR_MAX_SECONDS=MAX_SECONDS,
            UEDU_DR_GRACE_SECONDS=GRACE_SECONDS,
            UEDU_LLM_TIMEOUT_SECONDS=60,
        )


@pytest.fixture(scope="module")
def metered_worker(django_db_setup, django_db_blocker, scripted_llm, fake_openalex):
    """A worker whose researches have a small token limit and grace (and all the time they need)."""
    with django_db_blocker.unblock():
        yield from _worker(
            "limits_tokens",
            scripted_llm,
            fake_openalex,
            UEDU_DR_MAX_TOKENS=MAX_TOKENS,
            UEDU_DR_GRACE_TOKENS=GRACE_TOKENS,
            UEDU_DR_BUDGETS=json.dumps({"complex": {"tokens": EARLY_TOKENS}}),
        )


def research(personas, capture, queue: str, worker, timeout: float = 90) -> ResearchTask:
    with capture(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION, queue=False
        )
    started = time.monotonic()
    execute_research_task.apply_async((task.pk,), queue=queue)
    try:
        wait_for(lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, timeout=timeout, message="the end")
    except AssertionError:
        print(worker.log()[-4000:])
        raise
    task.refresh_from_db()
    task.wall_seconds = time.monotonic() - started
    assert task.status == "completed", f"{task.error}\n{worker.log()[-3000:]}"
    return task


def limit_events(task: ResearchTask) -> list[dict]:
    return list(task.events.filter(type="limit_hit").values_list("data", flat=True))


def usage_by_role(task: ResearchTask) -> dict[str, int]:
    out: dict[str, int] = {}
    for role, response in TranscriptEntry.objects.filter(task=task).values_list("role", "response"):
        usage = (response or {}).get("usage") or {}
        out[role] = (
            out.get(role, 0) + (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
        )
    return out


def action_handler(llm, *, on_turn=None, on_counter_search=None):
    """The scripted researcher, slow or wordy on some turns: `on_turn(n)` for ordinary turn n
    (0-based), `on_counter_search()` for the counter-search's turn; each returns extra reply
    fields ({"completion_tokens": …}) after sleeping as it likes."""

    def handle(body: dict) -> dict:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        last = next((m.get("content") or "" for m in reversed(body["messages"]) if m["role"] == "user"), "")
        extra = {}
        if "AGAINST these tentative conclusions" in last:
            extra = on_counter_search() if on_counter_search else {}
        elif on_turn:
            extra = on_turn(turns)
        return {**llm._default("action", body, None), **(extra or {})}

    return handle


def sleep_then(seconds: float, extra: dict | None = None) -> dict:
    time.sleep(seconds)
    return extra or {}


# phase -> (scenario, the action handler's hooks, the event the limit must come before)
TIME_CASES = {
    "planning": (Scenario(latency={"planner": SLOW}), {}, "action_dispatch"),
    "action turn": (
        Scenario(sufficient_after=2, action_rounds=3),
        {"on_turn": lambda n: sleep_then(SLOW) if n >= 1 else {}},
        "claims_extracted",
    ),
    "reflection": (Scenario(latency={"reflection": SLOW}), {}, "claims_extracted"),
    "counter-search": (Scenario(), {"on_counter_search": lambda: sleep_then(SLOW)}, "claims_extracted"),
    "selection": (Scenario(latency={"selector": SLOW}), {}, "claims_verified"),
    "interpretation": (Scenario(latency={"interpreter": SLOW}), {}, "verification_done"),
}


def assert_ended_well(task: ResearchTask, reason: str, before: str, *, sources: bool) -> None:
    """Completed, one limit_hit (named in the report), a report of what it found, and the limit
    reported no later than the event that follows the phase it was met in."""
    events = list(task.events.values_list("type", flat=True))
    limits = limit_events(task)
    assert len(limits) == 1 and limits[0]["reason"] == reason, limits
    assert task.limit_hit == reason
    if before in events:
        assert events.index("limit_hit") < events.index(before), events
    assert task.report_json["schema_version"] == "2.0"
    assert {"code": "limit_hit", "detail": {"reason": reason}} in task.report_json["limitations"]
    if sources:
        assert task.citations_json and task.steps.filter(status="ok").exists()
        assert task.report_json["facts"]


@pytest.mark.parametrize("phase", list(TIME_CASES))
def test_the_time_limit_met_in_each_phase_ends_the_research_well(
    phase, transactional_db, personas, llm, timed_worker, django_capture_on_commit_callbacks
):
    scenario, hooks, before = TIME_CASES[phase]
    llm.reset(replace(scenario, preferred_tools=["search_external_papers"]))
    if hooks:
        llm.on("action", action_handler(llm, **hooks))
    task = research(personas, django_capture_on_commit_callbacks, "limits_time", timed_worker)
    assert_ended_well(task, "max_seconds", before, sources=phase != "planning")
    # Within the grace: the research's own clock says so, and so does the wall.
    assert task.duration_seconds < MAX_SECONDS + GRACE_SECONDS
    if phase in ("action turn", "reflection", "counter-search"):
        # the call under way was cut at the limit rather than waited for
        assert task.duration_seconds < MAX_SECONDS + SLOW, task.duration_seconds


def test_the_limit_met_while_a_turn_s_tools_run_ends_gathering_at_the_reflection(
    transactional_db, personas, llm, fake_openalex, timed_worker, django_capture_on_commit_callbacks
):
    """The case first reported: the plan and one turn, its tool results arriving after the time
    limit; the reflection then met the limit and the research failed with LimitReached."""
    llm.reset(Scenario(preferred_tools=["search_external_papers"], tools_per_round=1))
    works = fake_openalex.routes["/works"]  # the server is shared by the session: put it back after
    fake_openalex.route("/works", lambda request: replace(works(request), delay=SLOW))
    try:
        task = research(personas, django_capture_on_commit_callbacks, "limits_time", timed_worker)
    finally:
        fake_openalex.route("/works", works)
    assert_ended_well(task, "max_seconds", "claims_extracted", sources=True)
    assert not llm.calls("reflection")  # past the limit, the reflection was not asked


TOKEN_CASES = {
    "planning": (Scenario(complexity="complex", usage={"planner": WORDY}), {}, "action_dispatch"),
    "action turn": (
        Scenario(complexity="complex"),
        {"on_turn": lambda n: {"completion_tokens": WORDY}},
        "claims_extracted",
    ),
    "reflection": (Scenario(complexity="complex", usage={"reflection": WORDY}), {}, "claims_extracted"),
    "counter-search": (
        Scenario(complexity="complex"),
        {"on_counter_search": lambda: {"completion_tokens": WORDY}},
        "claims_extracted",
    ),
    "selection": (Scenario(usage={"selector": WORDY}), {}, "claims_verified"),
    "interpretation": (Scenario(usage={"interpreter": WORDY}), {}, "verification_done"),
}


@pytest.mark.parametrize("phase", list(TOKEN_CASES))
def test_the_token_limit_met_in_each_phase_ends_the_research_well(
    phase, transactional_db, personas, llm, settings, metered_worker, django_capture_on_commit_callbacks
):
    the_workers_limits(settings)
    scenario, hooks, before = TOKEN_CASES[phase]
    llm.reset(replace(scenario, preferred_tools=["search_external_papers"]))
    if hooks:
        llm.on("action", action_handler(llm, **hooks))
    task = research(personas, django_capture_on_commit_callbacks, "limits_tokens", metered_worker)
    assert_ended_well(task, "max_tokens", before, sources=phase != "planning")
    assert task.tokens_used <= MAX_TOKENS + GRACE_TOKENS
    assert task.cost_usd <= reservation(task).reserved_usd


def the_workers_limits(settings) -> None:
    """The start (in this process) reserves what the worker's engine will be held to."""
    settings.UEDU_DR_MAX_TOKENS = MAX_TOKENS
    settings.UEDU_DR_GRACE_TOKENS = GRACE_TOKENS
    settings.UEDU_LLM_PRICES = PRICES


def reservation(task: ResearchTask) -> CostReservation:
    return CostReservation.objects.get(reference=str(task.task_uuid))


def test_a_research_past_its_token_limit_selects_and_settles_within_its_reservation(
    transactional_db, personas, llm, settings, metered_worker, django_capture_on_commit_callbacks
):
    """The selection and the interpretation as wordy as their answer bounds allow (unbounded,
    they would spend far more than the grace after gathering): each gets its share of what is
    left, and the research settles at most what it reserved."""
    the_workers_limits(settings)
    wordy = {"selector": WORDY, "interpreter": WORDY}
    llm.reset(Scenario(preferred_tools=["search_external_papers"], usage=wordy))
    task = research(personas, django_capture_on_commit_callbacks, "limits_tokens", metered_worker)

    row = reservation(task)
    assert row.reserved_usd == Decimal(4.0) * (MAX_TOKENS + GRACE_TOKENS) / 1_000_000
    assert row.settled and row.spent_usd == task.cost_usd
    assert task.limit_hit == "max_tokens" and len(limit_events(task)) == 1
    assert MAX_TOKENS < task.tokens_used <= MAX_TOKENS + GRACE_TOKENS
    assert task.cost_usd <= row.reserved_usd
    # it selected: the selection was asked, and the report states facts with their sources
    assert llm.calls("selector") and task.report_json["facts"] and task.citations_json
    # every request's answer bound fitted what was left (the server could not have gone past it)
    asked = [c.get("max_completion_tokens") or c.get("max_tokens") for c in llm.calls()]
    assert all(bound and bound >= 256 for bound in asked)
