"""Every event type of a research, declared once: one frozen dataclass each, with its payload and
everything the product shows of it.

A research reports its progress as events; the product stores each with a per-task seq and
sends it to the browser (SSE and WebSocket alike) as
`{"seq": 7, "type": "action_complete", "task_uuid": "…", "ts": "…", "data": {…}}`, where
`data` is `event.data()`. The engine emits its phase events through its `EventSink`; the
product emits the others (`task_created`, `status_change`, the terminal three) and the stream
sends `connected` and `heartbeat`, which are never stored. All are declared here, in `EVENTS`.

Besides its payload, a class declares what every surface shows of it, so that a new event type
is this class, its emitter and its translation in the catalogue (locale/*/django.po):
- `label`: its name (an English msgid, marked with `gettext_noop`; research/ui_strings.py
  translates it for the progress card, which shows it as the phase line's tooltip);
- `phase`: the progress card's phase after it (static/js/progress.js reads the pairs from the
  page's ui strings), for an event the card's reducer does not handle in code, with `phase_text`
  the words of that phase when no other state of the card shows them;
- `summary(data)`: its line in `manage.py deep_research` (the terminal prints stored events).
`_registry` refuses, at import, a type declared twice or without its label;
tests/research/test_event_registry.py holds the rest (translations, the card's phases).

Payload rule: a field with the default `None` is optional and left out of `data` when it is
None (so the wire format is what each emitter always sent); every other field is always there,
None included. A field named `from_` is sent as `from` (a Python keyword)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from agent.engine.vocabulary import gettext_noop


def short(value: Any) -> str:
    """A value as JSON, cut to 100 characters: a terminal line's room for what has no summary."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 100 else text[:97] + "…"


@dataclass(frozen=True)
class Event:
    type: ClassVar[str]
    stored: ClassVar[bool] = True  # False: sent to live listeners only, never stored (no seq)
    label: ClassVar[str]  # its name, an English msgid the page translates
    phase: ClassVar[str | None] = None  # the progress card's phase after it (see the docstring)
    phase_text: ClassVar[str | None] = None  # that phase's words, when the card has none for it

    def data(self) -> dict[str, Any]:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.default is None:
                continue
            out[f.name.rstrip("_")] = value
        return out

    @staticmethod
    def summary(data: dict) -> str:
        """Its line in the terminal, from the stored `data`. The model's words (its sub-questions,
        what its reflection found missing) follow "AI:", as the report's Markdown puts them in a
        labelled quote."""
        return short(data)


# The stream (research.feed): not stored.


@dataclass(frozen=True)
class Connected(Event):
    type = "connected"
    stored = False
    label = gettext_noop("Connected")
    last_seq: int


@dataclass(frozen=True)
class Heartbeat(Event):
    type = "heartbeat"
    stored = False
    label = gettext_noop("Still working")


# The product: the task's life (research.services.lifecycle, runner, plan_review, replay).


@dataclass(frozen=True)
class TaskCreated(Event):
    type = "task_created"
    label = gettext_noop("Research created")
    phase = "queued"
    question: str
    trigger_mode: str | None = None
    channel_id: int | None = None
    request_log_id: int | None = None
    replay_of: str | None = None  # a replay: the task it replays, and the model it runs with
    model: str | None = None

    @staticmethod
    def summary(data: dict) -> str:
        return data.get("question", "")


@dataclass(frozen=True)
class StatusChange(Event):
    """queued → running, running → awaiting_plan_review (with the plan and its deadline),
    awaiting_plan_review → running (with what the review changed)."""

    type = "status_change"
    label = gettext_noop("Status changed")
    from_: str
    to: str
    mode: str | None = None
    deadline: str | None = None
    sub_questions: list[str] | None = None
    plan_edited: bool | None = None
    timed_out: bool | None = None

    @staticmethod
    def summary(data: dict) -> str:
        line = f"{data.get('from')} → {data.get('to')}"
        return line + (f" (until {data['deadline']})" if data.get("deadline") else "")


# The engine's phases (agent.engine.loop, evidence, state).


@dataclass(frozen=True)
class PlanComplete(Event):
    type = "plan_complete"
    label = gettext_noop("Plan ready")
    complexity: str
    sub_questions: list[str]
    suggested_tools: list[str]
    hypotheses: list
    limits: dict

    @staticmethod
    def summary(data: dict) -> str:
        return f"{data.get('complexity')}; AI: " + " | ".join(data.get("sub_questions", []))


@dataclass(frozen=True)
class ActionThinking(Event):
    type = "action_thinking"
    label = gettext_noop("Choosing the next tools")
    round: int
    purpose: str

    @staticmethod
    def summary(data: dict) -> str:
        return f"round {data.get('round')} ({data.get('purpose')})"


@dataclass(frozen=True)
class ActionDispatch(Event):
    type = "action_dispatch"
    label = gettext_noop("Tools called")
    round: int
    purpose: str
    calls: list[dict]  # {index, tool, args}
    tool_calls_used: int

    @staticmethod
    def summary(data: dict) -> str:
        return ", ".join(f"{c['tool']}({short(c['args'])})" for c in data.get("calls", []))


@dataclass(frozen=True)
class ActionComplete(Event):
    type = "action_complete"
    label = gettext_noop("Tool call finished")
    index: int
    round: int
    tool: str
    status: str
    duration_ms: int
    preview: str
    sources: int
    filtered_by_domain: int
    error: str

    @staticmethod
    def summary(data: dict) -> str:
        return f"{data.get('tool')} {data.get('status')} {data.get('duration_ms')} ms, {data.get('sources', 0)} sources"


@dataclass(frozen=True)
class ReflectionDone(Event):
    type = "reflection_done"
    label = gettext_noop("Evidence reviewed")
    round: int
    sufficient: bool
    missing: list[str]
    covered_sub_questions: list
    hypotheses: list[dict]  # {index, status}
    sources: int
    # True when the reflection's model call failed and the loop went on without a verdict
    # (left out otherwise): such a round reflected nothing, and the signals do not count it.
    failed: bool | None = None

    @staticmethod
    def summary(data: dict) -> str:
        return "sufficient" if data.get("sufficient") else "AI: missing " + "; ".join(data.get("missing", []))


@dataclass(frozen=True)
class ClaimsExtracted(Event):
    """A selection round chose its facts (the type keeps its 1.x name; a claim is now a fact,
    one to three located spans). `claims`: facts chosen this round; `figures`: those with a value
    code read from their spans; `sources`: sources whose spans were candidates; `by_model` /
    `by_ranking`: facts the model chose / the search ranking chose where the model chose nothing
    usable; `not_shown`: selections code refused."""

    type = "claims_extracted"
    label = gettext_noop("Passages selected from the sources")
    phase = "comparing"
    phase_text = gettext_noop("Reading the figures and comparing the sources…")
    claims: int
    figures: int
    sources: int
    by_model: int | None = None
    by_ranking: int | None = None
    not_shown: int | None = None

    @staticmethod
    def summary(data: dict) -> str:
        return (
            f"{data.get('claims')} passages selected ({data.get('by_ranking') or 0} by search ranking, "
            f"{data.get('figures')} with values) from {data.get('sources')} sources"
        )


@dataclass(frozen=True)
class ClaimsVerified(Event):
    """The facts so far, and the conflicts code found among them. Every fact is a located span, so
    `verified` equals `claims`; `failed`: everything not shown so far; `instruction_in_source`:
    of those, passages that address the model."""

    type = "claims_verified"
    label = gettext_noop("Figures compared, conflicts found")
    phase = "interpreting"
    phase_text = gettext_noop("Weighing the evidence; the AI interprets the facts…")
    claims: int
    verified: int
    failed: int
    instruction_in_source: int
    conflicts: int
    unresolved: int

    @staticmethod
    def summary(data: dict) -> str:
        return f"{data.get('claims')} facts, {data.get('conflicts')} conflicts ({data.get('unresolved')} unresolved)"


@dataclass(frozen=True)
class VerificationDone(Event):
    """The report is assembled. `status`: complete, incomplete (a selection call failed or did
    not run) or no_sources; `counts`: {"facts", "not_shown"}; `citations`: sources facts rest
    on; `not_verified`: items not shown."""

    type = "verification_done"
    label = gettext_noop("Report assembled")
    phase = "finishing"
    phase_text = gettext_noop("Assembling the report…")
    status: str
    counts: dict
    conflicts: int
    citations: int
    conflict_rounds: int | None = None
    invalid_citations_removed: int | None = None
    web_only_claims: int | None = None
    removed: list | None = None
    not_verified: int | None = None

    @staticmethod
    def summary(data: dict) -> str:
        return (
            f"report assembled: {data.get('status')}, {data.get('citations')} sources cited, "
            f"{data.get('not_verified') or 0} not shown"
        )


@dataclass(frozen=True)
class LimitHit(Event):
    type = "limit_hit"
    label = gettext_noop("Limit reached")
    reason: str
    value: Any
    limit: Any

    @staticmethod
    def summary(data: dict) -> str:
        return f"{data.get('reason')}: {data.get('value')} of {data.get('limit')}"


# The end of a task (research.services.ending.end_task, whoever ends it).


@dataclass(frozen=True)
class _Ended(Event):
    response_log_id: int | None  # the answer's (or the notice's) chat row; None for a replay
    stop_reason: str
    tokens: int | None = None
    cost_usd: float | None = None
    duration_seconds: float | None = None

    @staticmethod
    def summary(data: dict) -> str:
        line = f"stop={data.get('stop_reason')} tokens={data.get('tokens')} cost=${data.get('cost_usd')}"
        return line + (f" error: {data['error']}" if data.get("error") else "")


@dataclass(frozen=True)
class Completed(_Ended):
    type = "completed"
    label = gettext_noop("Completed")
    citations: int | None = None
    limit_hit: str | None = None


@dataclass(frozen=True)
class Failed(_Ended):
    type = "failed"
    label = gettext_noop("Failed")
    error: str | None = None


@dataclass(frozen=True)
class Cancelled(_Ended):
    type = "cancelled"
    label = gettext_noop("Cancelled")


def _registry(*classes: type[Event]) -> dict[str, type[Event]]:
    registry: dict[str, type[Event]] = {}
    for cls in classes:
        if cls.type in registry:  # an error at import, not a stream that mixes two payloads
            raise TypeError(f"event type {cls.type!r} declared twice")
        if not getattr(cls, "label", None):  # else the card would show the bare type as its name
            raise TypeError(f"event type {cls.type!r} has no label")
        if cls.phase_text and not cls.phase:
            raise TypeError(f"event type {cls.type!r} has a phase_text but no phase")
        registry[cls.type] = cls
    return registry


EVENTS: dict[str, type[Event]] = _registry(
    Connected,
    Heartbeat,
    TaskCreated,
    StatusChange,
    PlanComplete,
    ActionThinking,
    ActionDispatch,
    ActionComplete,
    ReflectionDone,
    ClaimsExtracted,
    ClaimsVerified,
    VerificationDone,
    LimitHit,
    Completed,
    Failed,
    Cancelled,
)

# Events that end a task's stream.
TERMINAL = {Completed.type: Completed, Failed.type: Failed, Cancelled.type: Cancelled}
