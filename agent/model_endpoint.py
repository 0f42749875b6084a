"""Does a language model answer at the configured endpoint, and is the model the roles use listed
there? Asked by `make run` (through `manage.py check_llm`) before anyone logs in, and by /healthz."""

from __future__ import annotations

from agent.engine.llm import LLMError, list_models
from agent.llm_factory import llm_config, llm_configured

OPENAI_URL = "https://api.openai.com/v1"

# The one line to set for each kind of server (the launcher prints them when no model answers).
SERVER_HINTS = (
    (
        "llama.cpp (llama-server)",
        "OPENAI_BASE_URL=http://127.0.0.1:8080/v1 UEDU_LLM_MODEL=<a model GET /v1/models lists>",
    ),
    (
        "vLLM",
        "OPENAI_BASE_URL=http://127.0.0.1:8001/v1 UEDU_LLM_MODEL=<served model name>  (vllm serve … --port 8001)",
    ),
    (
        "Ollama",
        "OPENAI_BASE_URL=http://127.0.0.1:11434/v1 UEDU_LLM_MODEL=qwen2.5:7b  (any model `ollama list` shows)",
    ),
    ("hosted (OpenAI)", "OPENAI_API_KEY=sk-…  (UEDU_LLM_MODEL=gpt-5.4-mini is the default)"),
)


def model_endpoint_status(timeout: float = 3.0) -> dict:
    """{"ok", "configured", "reachable", "base_url", "models", "missing", "listed", "error"}:
    `models` are the ones the roles use, `missing` those the server does not list."""
    config = llm_config()
    wanted = sorted(set(config.models.values()))
    status = {
        "ok": False,
        "configured": llm_configured(),
        "reachable": False,
        "base_url": config.base_url or OPENAI_URL,
        "models": wanted,
        "missing": wanted,
        "listed": [],
        "error": "",
    }
    if not status["configured"]:
        status["error"] = "no model is configured (OPENAI_BASE_URL / OPENAI_API_KEY are unset)"
        return status
    try:
        listed = list_models(config, timeout=timeout)
    except LLMError as exc:
        status["error"] = str(exc)
        return status
    status.update(reachable=True, listed=listed[:50], missing=[m for m in wanted if m not in listed])
    status["ok"] = not status["missing"]
    return status


def describe(status: dict) -> list[str]:
    """The launcher's lines about the model, in plain English for the terminal."""
    models = ", ".join(status["models"])
    if status["ok"]:
        return [f"Language model: {models} at {status['base_url']} answers."]
    if status["reachable"]:
        offered = ", ".join(status["listed"][:8]) or "nothing"
        lines = [
            f"Language model: the server at {status['base_url']} answers but does not list {', '.join(status['missing'])} "
            f"(it lists: {offered})."
        ]
        if status["listed"]:
            lines.append(f"  Set the model it serves, e.g.:  UEDU_LLM_MODEL={status['listed'][0]}")
        return lines
    if status["configured"]:
        return [
            f"Language model: NO ANSWER from {status['base_url']} ({status['error']}).",
            "  Start the model server, or set OPENAI_BASE_URL to where it listens:",
            *(f"    {name + ':':26} {line}" for name, line in SERVER_HINTS),
        ]
    return [
        "Language model: NONE CONFIGURED — researches and chat will fail until one is set.",
        "  Set one line (in the environment or in .env), then `make run` again:",
        *(f"    {name + ':':26} {line}" for name, line in SERVER_HINTS),
    ]
