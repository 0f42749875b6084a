"""The demo channel, end to end: daphne's start path, a Celery worker, the real tools over the
demo materials and catalogue, the scripted LLM; and the terminal entry point."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import httpx
import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from channels_app.models import Channel
from research.models import ResearchTask
from tests.support.scripted_llm import Scenario
from tests.support.stack import ROOT, child_env, wait_for

pytestmark = pytest.mark.slow
QUESTION = "請整合課程教材，說明布魯姆分類法與檢索增強生成在課程中的角色"


@pytest.fixture
def demo(settings, transactional_db):
    settings.DEBUG = True
    call_command("load_demo_data", verbosity=0)
    return Channel.objects.get(slug="demo-course")


def test_a_research_over_the_demo_channel_runs_end_to_end_through_daphne(live, demo, llm):
    from django.contrib.auth import get_user_model

    llm.reset(Scenario(preferred_tools=["search_channel_materials", "get_course_overview"]))
    student = get_user_model().objects.get(username="student1")
    token = Token.objects.create(user=student).key
    response = httpx.post(
        f"{live.extra['url']}/api/deep_research/start",
        json={"question": QUESTION, "channel_id": demo.pk},
        headers={"Authorization": f"Token {token}", "Accept": "application/json"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    task = ResearchTask.objects.get(task_uuid=response.json()["task_uuid"])
    wait_for(
        lambda: ResearchTask.objects.get(pk=task.pk).is_terminal, timeout=90, message="the research to end"
    )
    task.refresh_from_db()

    assert task.status == "completed", task.error
    assert (
        task.plan_json["sub_questions"]
        and task.steps.filter(tool_name="search_channel_materials", status="ok").exists()
    )
    assert task.tokens_used > 0 and task.cost_usd > 0
    observed = {
        s["id"]: s
        for step in task.steps.all()
        for s in (step.result_full or {}).get("sources", [])
        if "id" in s
    }
    assert task.citations_json
    for citation in task.citations_json:  # every citation points at a stored observation
        source = observed[citation["source_id"]]
        assert (source["title"], source["url"], source["source_tool"]) == (
            citation["title"],
            citation["url"],
            citation["source_tool"],
        )
    materials = [c for c in task.citations_json if c["source_tool"] == "search_channel_materials"]
    # file names with page (PDF), slide (PPTX) or section (DOCX) numbers
    assert materials and all(
        re.match(r"EDS101_\S+\.(pdf|docx|pptx) .*\d", c["locator"]) for c in materials
    ), materials
    # the stored answer (the report's Markdown) cites every source a fact rests on by its number
    cited = {s["number"] for s in task.report_json["sources"] if s["cited"]}
    assert cited and all(f"[{n}]" in task.final_answer for n in cited)


def _command(*args, env=None):
    return subprocess.run(
        [sys.executable, "manage.py", "deep_research", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_terminal_command_runs_a_research_and_prints_json(worker, demo, llm, scripted_llm):
    env = child_env(OPENAI_BASE_URL=scripted_llm.url)
    result = _command(QUESTION, "--channel", "demo-course", "--user", "student1", "--json", env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report) == {
        "task_uuid",
        "status",
        "stop_reason",
        "answer",
        "report",
        "citations",
        "verification",
        "tokens",
        "cost_usd",
        "event_types",
    }
    assert report["status"] == "completed" and report["citations"] and report["tokens"] > 0
    assert report["event_types"][0] == "task_created" and report["event_types"][-1] == "completed"
    assert "plan_complete" in report["event_types"] and "verification_done" in report["event_types"]

    live = _command(QUESTION, "--channel", "demo-course", "--user", "student1", env=env)
    assert live.returncode == 0, live.stderr[-2000:]
    # the report as the page words it, in the research's language: facts, their sources, the AI's words labelled
    assert "plan_complete" in live.stdout and "status=completed" in live.stdout
    assert "## 來源中的事實" in live.stdout and "## 資料來源" in live.stdout


def test_the_terminal_command_says_clearly_when_no_llm_or_no_worker_is_there(
    demo, transactional_db, tmp_path
):
    from uedu_dr import devstack

    no_llm = child_env(OPENAI_BASE_URL="", OPENAI_API_KEY="")
    result = _command(QUESTION, "--channel", "demo-course", "--user", "student1", env=no_llm)
    assert result.returncode != 0 and "No LLM is configured" in result.stderr

    valkey = devstack.start_valkey(tmp_path / "valkey")  # a broker no worker listens to
    try:
        lonely = child_env(
            OPENAI_BASE_URL="http://127.0.0.1:9/v1", REDIS_URL=f"redis://127.0.0.1:{valkey.port}/0"
        )
        result = _command(QUESTION, "--channel", "demo-course", "--user", "student1", env=lonely)
    finally:
        valkey.kill()
    assert result.returncode != 0 and "No Celery worker answered" in result.stderr
    assert not ResearchTask.objects.exists()  # nothing was started
