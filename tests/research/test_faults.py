"""Faults the platform survives, each on the real stack: a worker killed mid-research, Redis
restarted mid-research, a misbehaving LLM, an outside API that is down."""

from __future__ import annotations

import json
import os
import signal
import time
from decimal import Decimal

import pytest
from django.utils import translation
from kombu import Connection

from quotas.models import UsageEntry
from research.models import ResearchStep, ResearchTask
from research.services import lifecycle
from research.tasks import execute_research_task
from tests.support import stack
from tests.support.scripted_llm import Scenario
from tests.support.stack import wait_for
from uedu_dr import devstack

pytestmark = pytest.mark.slow
QUESTION = "請比較教育資料科學課程與學習分析研究的主題"


def queued_task(personas, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION, queue=False
        )
    return task


def test_a_worker_killed_mid_research_is_failed_by_the_reaper_and_keeps_its_steps(
    transactional_db, personas, llm, settings, fake_openalex, django_capture_on_commit_callbacks
):
    from dataclasses import replace

    from tests.conftest import outside_world_env

    # The worker dies while one step is done and the other still waits on a slow OpenAlex (the
    # reflection's latency keeps it from going on, should that step end first after all).
    llm.reset(
        Scenario(
            latency={"reflection": 30}, preferred_tools=["search_channel_materials", "search_external_papers"]
        )
    )
    works = fake_openalex.routes["/works"]  # the server is shared by the session: put it back after
    fake_openalex.route("/works", lambda request: replace(works(request), delay=30))
    doomed = stack.start_worker(
        queues="doomed", UEDU_DR_HEARTBEAT_SECONDS=1, **outside_world_env(llm, fake_openalex)
    )
    try:
        task = queued_task(personas, django_capture_on_commit_callbacks)
        execute_research_task.apply_async((task.pk,), queue="doomed")
        wait_for(
            lambda: task.events.filter(type="action_complete").exists(),
            timeout=30,
            message="steps to be stored",
        )
        steps_before = list(ResearchStep.objects.filter(task=task).values_list("index", "status"))
        assert [status for _, status in steps_before] == ["ok", "running"]  # materials done, OpenAlex not
        os.kill(doomed.popen.pid, signal.SIGKILL)
        doomed.popen.wait(10)
    finally:
        doomed.stop()
        fake_openalex.route("/works", works)

    settings.UEDU_DR_HEARTBEAT_SECONDS = 1
    settings.UEDU_DR_STALE_AFTER_SECONDS = 3
    time.sleep(3.5)  # the heartbeat goes stale
    with translation.override("en"):
        assert lifecycle.reap_stale_tasks()["running"] == 1

    task.refresh_from_db()
    assert task.status == "failed" and "no heartbeat" in task.error
    # every stored step is kept; the ones the dead worker was still running say so
    expected = [(index, "failed" if status == "running" else status) for index, status in steps_before]
    assert list(ResearchStep.objects.filter(task=task).values_list("index", "status")) == expected
    assert UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund").amount == Decimal("-1.00")
    assert not ResearchTask.objects.filter(status="running").exists()
    assert task.events.order_by("-seq").first().type == "failed"


def test_the_reaper_runs_on_the_beat_schedule():
    from django.conf import settings

    entry = settings.CELERY_BEAT_SCHEDULE["reap-stale-research-tasks"]
    assert entry["task"] == "research.tasks.reap_stale_tasks"
    assert entry["schedule"] == settings.UEDU_DR_REAPER_INTERVAL_SECONDS


def test_redis_restarted_mid_research_the_run_finishes_and_the_socket_catches_up(
    transactional_db, personas, llm, client, tmp_path, fake_openalex, django_capture_on_commit_callbacks
):
    from websockets.sync.client import connect

    from tests.conftest import outside_world_env

    valkey = devstack.start_valkey(tmp_path / "valkey")
    port = valkey.port
    url = f"redis://127.0.0.1:{port}/0"
    env = dict(outside_world_env(llm, fake_openalex), REDIS_URL=url, UEDU_DR_HEARTBEAT_SECONDS=2)
    llm.reset(Scenario(latency={"action": 1.0, "reflection": 1.0, "selector": 1.0}))
    worker = stack.start_worker(**env)
    daphne = stack.start_daphne(**env)
    try:
        task = queued_task(personas, django_capture_on_commit_callbacks)
        with Connection(url) as connection:
            execute_research_task.apply_async((task.pk,), connection=connection)
        client.force_login(personas.student)
        headers = {"Cookie": f"sessionid={client.cookies['sessionid'].value}", "Origin": daphne.extra["url"]}
        ws_url = (
            daphne.extra["url"].replace("http://", "ws://")
            + f"/ws/deep_research/{task.task_uuid}/?last_seq=0"
        )
        received = []
        with connect(ws_url, additional_headers=headers, open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "connected"
            wait_for(
                lambda: task.events.filter(type="action_dispatch").exists(),
                timeout=30,
                message="the evidence phase",
            )
            valkey.kill()
            valkey.wait()
            time.sleep(1)
            valkey = devstack.start_valkey(tmp_path / "valkey", port=port)  # back, empty
            while True:
                event = json.loads(ws.recv(timeout=60))
                received.append(event)
                if event["type"] in ("completed", "failed", "cancelled"):
                    break
        task.refresh_from_db()
        assert task.status in ("completed", "failed")
        assert task.status == "completed", task.error
        stored = list(task.events.order_by("seq").values_list("seq", flat=True))
        assert [e["seq"] for e in received if e["seq"] is not None] == stored
        # Celery logs the lost broker connection (with the client library's traceback) and
        # reconnects; nothing of the research itself may have crashed.
        assert "crashed" not in worker.log()
        assert "research/" not in "".join(
            line for line in worker.log().splitlines() if line.lstrip().startswith("File ")
        )
    finally:
        daphne.stop()
        worker.stop()
        valkey.kill()


@pytest.fixture
def catalogue(transactional_db):
    from django.apps import apps

    apps.get_app_config("catalogue").load_demo_data(open(os.devnull, "w"))


def _worker_log_since(worker, offset: int) -> str:
    return worker.log()[offset:]


@pytest.mark.parametrize(
    "role, fault, times, expected",
    [
        ("planner", "http429", 2, "completed"),
        # a selection that fails: the search ranking chooses (limitation selection_failed)
        ("selector", "http500", 30, "completed"),
        ("planner", "slow", 1, "completed"),
        ("selector", "length", 6, "completed"),
        ("selector", "empty", 1, "completed"),
        ("planner", "malformed", 2, "completed"),  # the question itself becomes the plan
        ("action", "unknown_tool", 1, "completed"),
        ("action", "bad_args", 2, "completed"),
        # an interpretation that never gives a usable answer is left out
        ("interpreter", "schema", 10, "completed"),
        ("*", "no_choices", 1, "completed"),
    ],
)
def test_a_misbehaving_llm_ends_in_a_clean_state_without_a_crash(
    worker, catalogue, personas, llm, role, fault, times, expected
):
    offset = len(worker.log())
    llm.fail(role, fault, times=times)
    task, _ = lifecycle.task_start(user=personas.student, channel=personas.channel, question=QUESTION)
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, timeout=90, message="the research to end"
    )
    task.refresh_from_db()
    assert task.status == expected, (task.stop_reason, task.error)
    if expected == "failed":
        assert task.error and task.stop_reason.endswith("_failed")
        assert UsageEntry.objects.get(reference=str(task.task_uuid), kind="refund").amount == Decimal("-1.00")
    codes = {x["code"]: x["detail"] for x in task.report_json["limitations"]}
    if role == "interpreter":
        assert codes["interpretation_failed"] == {"kind": "malformed"}
        assert task.report_json["interpretation"]["items"] == [] and task.report_json["facts"]
    if role == "selector" and times >= 2:  # every call failed twice: the ranking chose
        assert "selection_failed" in codes and task.verification_json["status"] == "incomplete"
        assert {f["selected_by"] for f in task.report_json["facts"]} <= {"search_ranking"}
    new_log = _worker_log_since(worker, offset)
    assert "Traceback" not in new_log and "crashed" not in new_log


def test_an_outside_api_that_is_down_is_an_observation_and_the_research_goes_on(
    worker, catalogue, personas, llm, fake_openalex
):
    llm.reset(Scenario(preferred_tools=["search_external_papers", "get_course_overview"], tools_per_round=2))
    fake_openalex.fail_next("/works", 503, times=20)
    try:
        task, _ = lifecycle.task_start(user=personas.student, channel=personas.channel, question=QUESTION)
        wait_for(
            lambda: ResearchTask.objects.get(pk=task.pk).is_terminal,
            timeout=60,
            message="the research to end",
        )
    finally:
        fake_openalex.clear_failures()  # the research may not use all 20; the next test must not inherit them
    task.refresh_from_db()
    # every call to the API that is down (the evidence round's and the counter-search's) is an error observation
    failed = list(task.steps.filter(tool_name="search_external_papers"))
    assert failed and all(step.status == "error" and step.error for step in failed)
    assert task.steps.filter(tool_name="get_course_overview", status="ok").exists()
    assert task.status == "completed"
    # and the report names the tool that was unavailable among its limitations
    assert {
        "code": "tool_failed",
        "detail": {"tool": "search_external_papers", "calls": len(failed)},
    } in task.report_json["limitations"]
