"""Every event type of a research, declared once: one frozen dataclass each, with its payload.

A research reports its progress as events; the product stores each with a per-task seq and
sends it to the browser (SSE and WebSocket alike) as
`{"seq": 7, "type": "action_complete", "task_uuid": "…", "ts": "…", "data": {…}}`, where
`data` is `event.data()`. The engine emits its phase events through its `EventSink`; the
product emits the others (`task_created`, `status_change`, the terminal three) and the stream
sends `connected` and `heartbeat`, which are never stored. All are declared here, in `EVENTS`.

A new event type is a class here, and then has four other places, each checked by
tests/research/test_event_registry.py (`research.event_places.missing_places`): the README's
"Events" list, the reducer of the progress card (static/js/progress.js), a label in
research/ui_strings.py (with its translation), and the terminal printer of
`manage.py deep_research`.

Payload rule: a field with the default `None` is optional and left out of `data` when it is
None (so the wire format is what each emitter always sent); every other field is always there,
None included. A field named `from_` is sent as `from` (a Python keyword)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    type: ClassVar[str]
    stored: ClassVar[bool] = True  # False: sent to live listeners only, never stored (no seq)

    def data(self) -> dict[str, Any]:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.default is None:
                continue
            out[f.name.rstrip("_")] = value
        return out


# The stream (research.feed): not stored.


@dataclass(frozen=True)
class Connected(Event):
    type = "connected"
    stored = False
    last_seq: int


@dataclass(frozen=True)
class Heartbeat(Event):
    type = "heartbeat"
    stored = False


# The product: the task's life (research.services.lifecycle, runner, plan_review, replay).


@dataclass(frozen=True)
class TaskCreated(Event):
    type = "task_created"
    question: str
    trigger_mode: str | None = None
    channel_id: int | None = None
    request_log_id: int | None = None
    replay_of: str | None = None  # a replay: the task it replays, and the model it runs with
    model: str | None = None


@dataclass(frozen=True)
class StatusChange(Event):
    """queued → running, running → awaiting_plan_review (with the plan and its deadline),
    awaiting_plan_review → running (with what the review changed)."""

    type = "status_change"
    from_: str
    to: str
    mode: str | None = None
    deadline: str | None = None
    sub_questions: list[str] | None = None
    plan_edited: bool | None = None
    timed_out: bool | None = None


# The engine's phases (agent.engine.loop, evidence, state).


@dataclass(frozen=True)
class PlanComplete(Event):
    type = "plan_complete"
    complexity: str
    sub_questions: list[str]
    suggested_tools: list[str]
    hypotheses: list
    limits: dict


@dataclass(frozen=True)
class ActionThinking(Event):
    type = "action_thinking"
    round: int
    purpose: str


@dataclass(frozen=True)
class ActionDispatch(Event):
    type = "action_dispatch"
    round: int
    purpose: str
    calls: list[dict]  # {index, tool, args}
    tool_calls_used: int


@dataclass(frozen=True)
class ActionComplete(Event):
    type = "action_complete"
    index: int
    round: int
    tool: str
    status: str
    duration_ms: int
    preview: str
    sources: int
    filtered_by_domain: int
    error: str


@dataclass(frozen=True)
class ReflectionDone(Event):
    type = "reflection_done"
    round: int
    sufficient: bool
    missing: list[str]
    covered_sub_questions: list
    hypotheses: list[dict]  # {index, status}
    sources: int
    # True when the reflection's model call failed and the loop went on without a verdict
    # (left out otherwise): such a round reflected nothing, and the signals do not count it.
    failed: bool | None = None


@dataclass(frozen=True)
class ClaimsExtracted(Event):
    """A selection round chose its facts (the type keeps its 1.x name; a claim is now a fact,
    one to three located spans). `claims`: facts chosen this round; `figures`: those with a value
    code read from their spans; `sources`: sources whose spans were candidates; `by_model` /
    `by_ranking`: facts the model chose / the search ranking chose where the model chose nothing
    usable; `not_shown`: selections code refused."""

    type = "claims_extracted"
    claims: int
    figures: int
    sources: int
    by_model: int | None = None
    by_ranking: int | None = None
    not_shown: int | None = None


@dataclass(frozen=True)
class ClaimsVerified(Event):
    """The facts so far, and the conflicts code found among them. Every fact is a located span, so
    `verified` equals `claims`; `failed`: everything not shown so far; `instruction_in_source`:
    of those, passages that address the model."""

    type = "claims_verified"
    claims: int
    verified: int
    failed: int
    instruction_in_source: int
    conflicts: int
    unresolved: int


@dataclass(frozen=True)
class VerificationDone(Event):
    """The report is assembled. `status`: complete, incomplete (a selection call failed or did
    not run) or no_sources; `counts`: {"facts", "not_shown"}; `citations`: sources facts rest
    on; `not_verified`: items not shown."""

    type = "verification_done"
    status: str
    counts: dict
    conflicts: int
    citations: int
    conflict_rounds: int | None = None
    invalid_citations_removed: int | None = None
    web_only_claims: int | None = None
    removed: list | None = None
    not_verified: int | None = None


@dataclass(frozen=True)
class LimitHit(Event):
    type = "limit_hit"
    reason: str
    value: Any
    limit: Any


# The end of a task (research.services.ending.end_task, whoever ends it).


@dataclass(frozen=True)
class _Ended(Event):
    response_log_id: int | None  # the answer's (or the notice's) chat row; None for a replay
    stop_reason: str
    tokens: int | None = None
    cost_usd: float | None = None
    duration_seconds: float | None = None


@dataclass(frozen=True)
class Completed(_Ended):
    type = "completed"
    citations: int | None = None
    limit_hit: str | None = None


@dataclass(frozen=True)
class Failed(_Ended):
    type = "failed"
    error: str | None = None


@dataclass(frozen=True)
class Cancelled(_Ended):
    type = "cancelled"


def _registry(*classes: type[Event]) -> dict[str, type[Event]]:
    registry: dict[str, type[Event]] = {}
    for cls in classes:
        if cls.type in registry:  # an error at import, not a stream that mixes two payloads
            raise TypeError(f"event type {cls.type!r} declared twice")
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
