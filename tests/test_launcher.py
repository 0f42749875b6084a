"""`make run` says, before anyone logs in, whether a language model answers and what to set if
not; /healthz reports the model endpoint beside its checks without failing them."""

from __future__ import annotations

import pytest

from tests.support.stack import child_env, free_port
from uedu_dr import launcher


def launcher_env(**overrides) -> dict:
    env = child_env(**overrides)
    for key in [k for k in env if k.startswith("UEDU_LLM_MODEL")]:
        if key not in overrides:
            del env[key]
    return env


def test_the_launcher_names_the_model_that_answers(scripted_llm):
    lines = launcher.model_status_lines(
        launcher_env(OPENAI_BASE_URL=scripted_llm.url, UEDU_LLM_MODEL="scripted")
    )
    assert lines[0] == f"Language model: scripted at {scripted_llm.url} answers."
    # Measured once: speeds, the window /props reports, structured output and tool calls.
    assert "Measured scripted: reads" in lines[1] and "context 32768 tokens (server)" in lines[1]
    assert "strict json_schema; tool calls: native" in lines[2]
    assert lines[3].startswith("  About ") and "min per research" in lines[3]


@pytest.fixture
def small_server(settings):
    """A server of its own: the window a process measured is kept per server URL."""
    from tests.support.scripted_llm import ScriptedLLM

    server = ScriptedLLM().start()
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = server.url, "x"
    yield server
    server.stop()


def test_check_llm_measures_a_slow_small_server_and_names_the_settings_to_change(settings, small_server):
    """A llama-server with a small model: 4,096 tokens of context, tools answered with template
    text, and slow: the estimate is past the deadline and the command says what to set."""
    import json
    from io import StringIO

    from django.core.management import call_command

    llm = small_server.quirk("context_4096", "tools_as_template_text")
    llm.scenario.chunk_chars, llm.scenario.chunk_seconds = 8, 0.05
    settings.UEDU_LLM_DEFAULT_MODEL = "scripted"
    settings.UEDU_LLM_MODELS = {role: "scripted" for role in settings.UEDU_LLM_MODELS}
    settings.UEDU_DR_MAX_SECONDS = 60
    out = StringIO()
    call_command("check_llm", "--measure", "--json", stdout=out)
    measured = json.loads(out.getvalue())["measured"]
    assert measured["context_tokens"] == 4096 and measured["context_source"] == "server"
    assert measured["json_schema"] is True and measured["tool_calls"] == "json_fallback"
    assert 0 < measured["generation_tokens_per_second"] < 400  # 8 characters every 50 ms
    assert measured["minutes_per_research"] > 1
    assert any(a.startswith("UEDU_DR_MAX_SECONDS=") for a in measured["advice"])
    out = StringIO()
    call_command("check_llm", "--measure", stdout=out)
    assert "Too slow for the current settings; set: UEDU_DR_MAX_SECONDS=" in out.getvalue()


def test_the_launcher_says_which_model_to_set_when_the_server_does_not_list_it(scripted_llm):
    lines = launcher.model_status_lines(
        launcher_env(OPENAI_BASE_URL=scripted_llm.url, UEDU_LLM_MODEL="gpt-5.4-mini")
    )
    assert "does not list gpt-5.4-mini (it lists: scripted)" in lines[0]
    assert lines[1].strip() == "Set the model it serves, e.g.:  UEDU_LLM_MODEL=scripted"


def test_without_a_model_the_launcher_prints_the_line_to_set_for_each_kind_of_server():
    lines = launcher.model_status_lines(launcher_env(OPENAI_BASE_URL="", OPENAI_API_KEY=""))
    text = "\n".join(lines)
    assert lines[0].startswith("Language model: NONE CONFIGURED")
    assert "llama.cpp (llama-server):" in text and "OPENAI_BASE_URL=http://127.0.0.1:8080/v1" in text
    assert "vLLM:" in text and "Ollama:" in text and "OPENAI_BASE_URL=http://127.0.0.1:11434/v1" in text
    assert "OPENAI_API_KEY=sk-" in text


def test_a_configured_server_that_does_not_answer_is_named():
    url = f"http://127.0.0.1:{free_port()}/v1"
    lines = launcher.model_status_lines(launcher_env(OPENAI_BASE_URL=url))
    assert lines[0].startswith(
        f"Language model: NO ANSWER from {url} (the LLM server did not answer (APIConnectionError))"
    )
    assert any("OPENAI_BASE_URL=http://127.0.0.1:11434/v1" in line for line in lines)


@pytest.fixture
def model_settings(settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.UEDU_LLM_DEFAULT_MODEL = "scripted"
    settings.UEDU_LLM_MODELS = {"planner": "scripted", "synthesizer": "scripted"}
    return settings


def test_healthz_reports_the_model_endpoint(client, db, scripted_llm, model_settings):
    model_settings.OPENAI_BASE_URL = scripted_llm.url
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["model"] | {"listed": None} == {
        "ok": True,
        "configured": True,
        "reachable": True,
        "base_url": scripted_llm.url,
        "models": ["scripted"],
        "missing": [],
        "listed": None,
        "error": "",
    }
    assert body["model"]["listed"] == ["scripted"]


def test_a_model_that_does_not_answer_is_reported_without_failing_the_health_check(
    client, db, model_settings
):
    model_settings.OPENAI_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "ok"
    assert all(part["ok"] for part in body["checks"].values())
    assert body["model"]["ok"] is False and body["model"]["reachable"] is False
    assert "did not answer" in body["model"]["error"]


def test_healthz_says_when_no_model_is_configured(client, db, settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    body = client.get("/healthz").json()
    assert body["status"] == "ok" and body["model"]["configured"] is False and body["model"]["ok"] is False


def test_the_launcher_runs_one_named_worker_process_per_requested_core():
    from uedu_dr.launcher import process_commands

    commands = process_commands(
        {"UEDU_WORKER_PROCESSES": "2", "UEDU_WORKER_CONCURRENCY": "16"}, "127.0.0.1", "8000"
    )
    workers = {
        name: cmd for name, cmd in commands.items() if name.startswith("worker-") and name[-1].isdigit()
    }
    assert sorted(workers) == ["worker-1", "worker-2"]
    # Distinct node names (Celery refuses duplicates) and the per-process thread count.
    assert [cmd[cmd.index("-n") + 1] for cmd in workers.values()] == ["worker-1@%h", "worker-2@%h"]
    assert all(cmd[cmd.index("--concurrency") + 1] == "16" and "threads" in cmd for cmd in workers.values())
    # The research workers take the researches only; the light jobs have a worker of their own.
    assert all(cmd[cmd.index("-Q") + 1] == "celery" for cmd in workers.values())
    light = commands["worker-light"]
    assert light[light.index("-Q") + 1] == "light" and light[light.index("-n") + 1] == "worker-light@%h"
    assert "daphne" in commands and "beat" in commands


def test_each_queue_the_launcher_starts_a_worker_for_is_declared_and_the_bloom_job_is_light():
    from django.conf import settings

    from uedu_dr.celery import app
    from uedu_dr.jobs import CLASSIFY_BLOOM, EXECUTE_RESEARCH
    from uedu_dr.launcher import process_commands

    commands = process_commands({"UEDU_WORKER_PROCESSES": "2"}, "127.0.0.1", "8000")
    consumed = {cmd[cmd.index("-Q") + 1] for name, cmd in commands.items() if name.startswith("worker")}
    # The declared queues (app.amqp.queues also grows with the queues other tests' workers were
    # started on, in this process).
    assert consumed == set(settings.CELERY_TASK_QUEUES) == {"celery", "light"}
    assert app.amqp.router.route({}, CLASSIFY_BLOOM)["queue"].name == "light"
    assert app.amqp.router.route({}, EXECUTE_RESEARCH)["queue"].name == "celery"


def test_the_launcher_defaults_to_one_worker_per_cpu_and_names_a_bad_count():
    import os

    import pytest

    from uedu_dr.launcher import worker_commands

    assert len(worker_commands({})) == (os.cpu_count() or 1) + 1  # and the light worker
    with pytest.raises(SystemExit, match="UEDU_WORKER_PROCESSES"):
        worker_commands({"UEDU_WORKER_PROCESSES": "zero"})
    with pytest.raises(SystemExit, match="UEDU_WORKER_CONCURRENCY"):
        worker_commands({"UEDU_WORKER_CONCURRENCY": "0"})
