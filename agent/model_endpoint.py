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


# What one research asks of the model, for the estimate `check_llm --measure` prints: about a
# dozen calls (plan, two or three action turns and reflections, claims, verification batches, the
# writer, the check of the draft), measured on the scripted stack and on llama.cpp with Gemma 3
# 270M (docs/models.md). Prompts are bounded by the window: no call sends more than it.
TYPICAL_CALLS = 12
TYPICAL_PROMPT_TOKENS = 40_000
TYPICAL_COMPLETION_TOKENS = 5_000

_SPEED_PROMPT = (
    "Learning analytics dashboards show students how they study: time on task, quiz results, "
    "forum posts and the pace of their reading, next to the class's typical pattern. "
)


def measure_model(timeout: float = 300.0) -> dict:
    """Measure the configured server once: prompt and generation tokens per second, its context
    window, whether strict json_schema and native tool calls work, and what that means for a
    research (estimated minutes against UEDU_DR_MAX_SECONDS, and the settings to change).
    Each probe's failure is recorded, not raised."""
    from django.conf import settings

    from agent.engine.llm import LLMClient, LLMError, LLMTruncated, UsageMeter, server_context_tokens

    config = llm_config()
    config.max_retries = 0
    config.timeout = timeout
    config.silence_seconds = timeout  # measuring: a slow first token is what we want to see
    model = config.model_for("planner")
    out: dict = {
        "model": model,
        "context_tokens": settings.UEDU_LLM_CONTEXT_TOKENS or server_context_tokens(config, timeout=10),
        "context_source": "setting" if settings.UEDU_LLM_CONTEXT_TOKENS else "server",
        "errors": [],
    }
    recorded: list[dict] = []
    client = LLMClient(config, UsageMeter(), recorder=recorded.append)
    try:
        client.text(
            "chat",
            [
                {"role": "system", "content": "You are a helpful assistant."},
                {
                    "role": "user",
                    "content": _SPEED_PROMPT * 24 + "\nList twenty facts about such dashboards, one a line.",
                },
            ],
            max_tokens=128,
        )
    except LLMTruncated:
        pass  # twenty facts do not fit in 128 tokens: a reply cut at the limit is the one wanted
    except LLMError as exc:
        out["errors"].append(f"speed: {exc}")
    if recorded:
        record = recorded[-1]
        usage = record["response"].get("usage") or {}
        first = (record["response"].get("stream") or {}).get("first_token_seconds") or 0.0
        prompt, completion = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        # A local server can answer within the clock's resolution: a millisecond is the floor, so
        # the speed reads as a (huge) lower bound rather than as unmeasured.
        first = max(first, 0.001) if prompt else first
        writing = max(record["seconds"] - first, 0.001)
        out["prompt_tokens_per_second"] = round(prompt / first, 1) if prompt else None
        out["generation_tokens_per_second"] = round((completion - 1) / writing, 1) if completion > 1 else None
    schema = {
        "type": "object",
        "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
        "required": ["colour"],
        "additionalProperties": False,
    }
    try:
        client.structured(
            "chat",
            [{"role": "user", "content": "Pick a colour of the sky on a clear day."}],
            schema,
            "colour",
            max_tokens=64,
        )
        out["json_schema"] = "json_schema" not in client._unsupported(model)
        out["structured_output"] = True
    except LLMError as exc:
        out["json_schema"] = False
        out["structured_output"] = False
        out["errors"].append(f"structured output: {exc}")
    tool = {
        "type": "function",
        "function": {
            "name": "search_papers",
            "description": "Search scholarly papers.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
    try:
        turn = client.with_tools(
            "action",
            [{"role": "user", "content": "Find papers on learning analytics dashboards. Use the tool."}],
            [tool],
            max_tokens=128,
        )
        out["tool_calls"] = "native" if "tools" not in client._unsupported(model) else "json_fallback"
        out["tool_call_made"] = bool(turn.tool_calls)
    except LLMError as exc:
        out["tool_calls"] = "json_fallback" if "tools" in client._unsupported(model) else "failed"
        out["tool_call_made"] = False
        out["errors"].append(f"tool calls: {exc}")
    out.update(research_estimate(out, settings))
    return out


def research_estimate(measured: dict, settings) -> dict:
    """Minutes per research at the measured speeds, and the settings to change when that is past
    the research's deadline or a full prompt takes longer to read than the silence limit."""
    prompt_speed = measured.get("prompt_tokens_per_second")
    write_speed = measured.get("generation_tokens_per_second")
    if not prompt_speed or not write_speed:
        return {"minutes_per_research": None, "advice": []}
    window = measured.get("context_tokens") or 0
    prompt = (
        min(TYPICAL_PROMPT_TOKENS, int(TYPICAL_CALLS * 0.8 * window)) if window else TYPICAL_PROMPT_TOKENS
    )
    seconds = prompt / prompt_speed + TYPICAL_COMPLETION_TOKENS / write_speed
    advice = []
    if seconds > settings.UEDU_DR_MAX_SECONDS:
        advice.append(f"UEDU_DR_MAX_SECONDS={int(seconds * 1.5 // 60 + 1) * 60}")
    longest_read = (min(window, 16_000) if window else 16_000) / prompt_speed
    if longest_read * 1.5 > settings.UEDU_LLM_SILENCE_SECONDS:
        advice.append(f"UEDU_LLM_SILENCE_SECONDS={int(longest_read * 1.5) + 10}")
    longest_call = longest_read + 2_000 / write_speed
    if longest_call * 1.5 > settings.UEDU_LLM_TIMEOUT_SECONDS:
        advice.append(f"UEDU_LLM_TIMEOUT_SECONDS={int(longest_call * 1.5) + 10}")
    return {"minutes_per_research": round(seconds / 60, 1), "advice": advice}


def describe_measurement(measured: dict, deadline_seconds: int) -> list[str]:
    speed = (
        f"reads {measured.get('prompt_tokens_per_second')} prompt tokens/s, "
        f"writes {measured.get('generation_tokens_per_second')} tokens/s"
    )
    window = measured.get("context_tokens") or "unknown (set UEDU_LLM_CONTEXT_TOKENS)"
    lines = [
        f"  Measured {measured['model']}: {speed}; context {window} tokens ({measured['context_source']}).",
        f"  Structured output: {'strict json_schema' if measured.get('json_schema') else 'JSON in the prompt' if measured.get('structured_output') else 'FAILED'}; "
        f"tool calls: {measured.get('tool_calls')}.",
    ]
    minutes = measured.get("minutes_per_research")
    if minutes is not None:
        lines.append(
            f"  About {minutes} min per research (deadline {round(deadline_seconds / 60, 1)} min, UEDU_DR_MAX_SECONDS)."
        )
    if measured.get("advice"):
        lines.append("  Too slow for the current settings; set: " + " ".join(measured["advice"]))
    lines += [f"  Probe failed: {error}" for error in measured.get("errors", [])]
    return lines
