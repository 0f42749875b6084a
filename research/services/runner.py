"""Running one research inside a Celery worker: claim, run the engine, and end the task with what
the engine returned (research.services.ending.end_task). A research with plan review runs in two
parts (execute_task plans; continue_task researches the reviewed plan), with no worker held
during the review (research.services.plan_review).

The end is conditional on the task still running, so a duplicate delivery, a cancel, the reaper
and the runner can race without two of them ending the same task."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager

from django.conf import settings
from django.db import close_old_connections, connection
from django.db.models import Max

from agent.engine import Limits, LLMClient, ResearchInput, ResearchResult, UsageMeter, run_research
from agent.engine.events import Event, StatusChange
from agent.engine.llm import LLMError, Usage
from agent.engine.plan import Plan
from agent.engine.vocabulary import OUTCOMES, STOP_REASONS
from agent.llm_factory import call_config, llm_config
from agent.tools import REGISTRY, BoundToolbox, ToolRegistry
from research.models import ResearchTask, TranscriptEntry
from uedu_dr.db_pool import handed_back

from . import assistant_policy, credibility, ending, events, follow_up, plan_review, settlement, transitions
from .heartbeat import monitor

log = logging.getLogger(__name__)


def engine_limits() -> Limits:
    limits = Limits(
        max_steps=settings.UEDU_DR_MAX_STEPS,
        max_tokens=settings.UEDU_DR_MAX_TOKENS,
        max_seconds=settings.UEDU_DR_MAX_SECONDS,
        grace_seconds=settings.UEDU_DR_GRACE_SECONDS,
        grace_tokens=settings.UEDU_DR_GRACE_TOKENS,
        # What settlement.reserve set aside for the research: no request goes past it.
        max_cost_usd=float(settlement.worst_case_cost()),
    )
    limits.budgets = {**limits.budgets, **settings.UEDU_DR_BUDGETS}
    return limits


@contextmanager
def _statement():
    """A cursor for one of the research thread's statements, its connection handed back to the
    pool afterwards (uedu_dr.db_pool): the model or a tool comes next, and no connection is held
    through that wait."""
    with handed_back(), connection.cursor() as cursor:
        yield cursor


# An event stored this recently counts as the cancel check (record_event reads the flag).
CANCEL_SEEN_FRESH_SECONDS = 0.05


class TaskSink:
    """Stores steps, events and the LLM transcript of one task as the engine reports them.

    The transcript and the steps are written by the statement of the research's next event
    (events.record_event's `writes`), or by `flush()` at the end: the engine announces each model
    call and each step with an event right after it, so a research makes one round trip where it
    made two to four. LLM exchanges may be reported from the engine's helper threads; they are
    buffered and written by the engine's own thread, so helper threads never hold database
    connections. After each write the research thread hands its connection back to the pool
    (uedu_dr.db_pool): it holds none while it waits for the model."""

    def __init__(self, task: ResearchTask, meter: UsageMeter | None = None, *, transcript_after: int = 0):
        self.task_id = task.pk
        self.task_uuid = task.task_uuid
        self.meter = meter
        self._lock = threading.Lock()
        self._exchanges: list[dict] = []
        self._seq = transcript_after  # a second part (after a plan review) numbers on from the first
        self._steps: list[tuple[int, events.Write]] = []  # (step index, write) not yet stored
        self._open: set[int] = set()  # steps started and not finished
        self._lost_writes = False  # a statement carrying writes failed: the rows may differ from the above
        # (cancel_requested, time.monotonic()) as the research thread's last event read it.
        self.cancel_seen: tuple[bool, float] | None = None

    def record_llm(self, exchange: dict) -> None:
        with self._lock:
            self._exchanges.append(exchange)

    # The writes below run several times per research in every worker thread; they are
    # hand-written SQL (JSON serialised once, no ORM query building, no multi-row UNNEST arrays for
    # psycopg to escape element by element): the ORM versions were about a third of the worker's
    # CPU per research (bench/concurrency.py, docs/performance.md).
    def _take_writes(self) -> list[events.Write]:
        with self._lock:
            exchanges, self._exchanges = self._exchanges, []
            first = self._seq + 1
            self._seq += len(exchanges)
            writes, self._steps = [write for _, write in self._steps], []
        if exchanges:
            writes.insert(0, _transcript_write(first, exchanges))
        return writes

    def flush(self) -> None:
        """Store what was reported since the last event."""
        with handed_back(), self._carrying_writes():
            events.write_along(self.task_id, self._take_writes())

    def emit(self, event: Event) -> None:
        # The progress card shows tokens used so far; only the runner's meter knows them.
        extra = {"tokens_used": self.meter.total_tokens} if self.meter is not None else None
        with handed_back(), self._carrying_writes():
            cancel = events.record_event(
                self.task_id, self.task_uuid, event, writes=self._take_writes(), extra=extra
            )
            self.cancel_seen = (cancel, time.monotonic())

    @contextmanager
    def _carrying_writes(self):
        try:
            yield
        except BaseException:
            self._lost_writes = True
            raise

    def all_steps_closed(self) -> bool:
        """Every step this sink started was finished and stored (end_task then has none to close)."""
        return not self._open and not self._lost_writes and not self._steps

    def cancel_requested(self) -> bool:
        """The engine's cancel check, before every LLM and tool call: an indexed one-row lookup,
        and a cancel is honoured at the very next step (a cached flag let a fast run finish after
        its cancel was requested). The one exception: the flag as this sink's own event read it a
        moment ago, with no wait in between (most checks follow the event that announces the
        step), is as fresh as a lookup would be. A cancel, once seen, stays (nothing clears it)."""
        seen = self.cancel_seen
        if seen is not None and (seen[0] or time.monotonic() - seen[1] < CANCEL_SEEN_FRESH_SECONDS):
            return seen[0]
        with _statement() as cursor:
            cursor.execute("SELECT cancel_requested FROM deep_research_tasks WHERE id = %s", [self.task_id])
            row = cursor.fetchone()
        return bool(row and row[0])

    def _step_write(self, index: int, sql: str, params: list) -> None:
        """Queue a write of step `index`; one already queued for it is stored first (the writes of
        one statement cannot see each other's rows)."""
        with self._lock:
            queued = any(queued_index == index for queued_index, _ in self._steps)
        if queued:
            self.flush()
        with self._lock:
            self._steps.append((index, (sql, params)))

    def step_started(self, *, index, round, phase, tool_name, args) -> None:
        self._open.add(index)
        self._step_write(
            index,
            (
                "INSERT INTO deep_research_steps (task_id, index, round, phase, tool_name, args, status, result_preview, "
                "result_full, error, duration_ms, tokens, created_at) "
                "SELECT next.id, %s, %s, %s, %s, %s::jsonb, 'running', '', NULL, '', 0, 0, now() FROM next"
            ),
            [index, round, phase, tool_name, events.stored_json(args)],
        )

    def step_finished(self, *, index, status, preview, full, error, duration_ms, tokens=0) -> None:
        self._open.discard(index)
        self._step_write(
            index,
            (
                "UPDATE deep_research_steps SET status = %s, result_preview = %s, result_full = %s::jsonb, error = %s, "
                "duration_ms = %s, tokens = %s FROM next WHERE task_id = next.id AND index = %s"
            ),
            [
                status,
                preview,
                None if full is None else events.stored_json(full),
                error,
                duration_ms,
                tokens,
                index,
            ],
        )

    def step_sources(self, *, index, source_ids) -> None:
        # Number the step's stored sources with the engine's citation ids, in the database: no
        # reading the whole result back to write it again.
        self._step_write(
            index,
            """
            UPDATE deep_research_steps SET result_full = jsonb_set(result_full, '{sources}', (
                SELECT coalesce(jsonb_agg(CASE WHEN ids.id IS NULL THEN src.value
                                               ELSE src.value || jsonb_build_object('id', ids.id) END
                                          ORDER BY src.n), '[]'::jsonb)
                FROM jsonb_array_elements(result_full -> 'sources') WITH ORDINALITY AS src(value, n)
                LEFT JOIN jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS ids(id, n) USING (n)
            ))
            FROM next WHERE task_id = next.id AND index = %s AND jsonb_typeof(result_full -> 'sources') = 'array'
            """,
            [events.stored_json(list(source_ids)), index],
        )


def _transcript_write(first_seq: int, exchanges: list[dict]) -> events.Write:
    """LLM exchanges numbered from `first_seq`: one multi-row INSERT."""
    params: list = []
    for n, exchange in enumerate(exchanges):
        params += [
            first_seq + n,
            exchange["kind"],
            exchange["role"],
            exchange["model"],
            events.stored_json(exchange["request"]),
            events.stored_json(exchange["response"]),
            exchange["seconds"],
        ]
    values = ", ".join(
        ["(%s::integer, %s, %s, %s, %s::jsonb, %s::jsonb, %s::double precision)"] * len(exchanges)
    )
    return (
        "INSERT INTO deep_research_transcript (task_id, seq, kind, role, model, request, response, seconds, created_at) "
        "SELECT next.id, v.seq, v.kind, v.role, v.model, v.request, v.response, v.seconds, now() "
        f"FROM next, (VALUES {values}) AS v(seq, kind, role, model, request, response, seconds)",
        params,
    )


def _close_connection() -> None:
    # Tool calls run in short-lived threads; each closes its own connection when done.
    connection.close()


def execute_task(
    task_id: int,
    *,
    toolbox=None,
    model: str | None = None,
    registry: ToolRegistry = REGISTRY,
    client_class: type[LLMClient] = LLMClient,
) -> None:
    """Celery entry point. Safe to call twice: only the first call claims the task.

    `toolbox`, `model` and `client_class` are for replays: recorded tool results instead of live
    tools, another model for every role, recorded model answers instead of a server's.
    `registry` is the product's tool registry; another one (a fixed corpus) serves tests that need
    known sources from a research run in their own process."""
    try:
        _execute(task_id, toolbox=toolbox, model=model, registry=registry, client_class=client_class)
    finally:
        connection.close()  # worker threads live on; the connection should not


def _execute(
    task_id: int, *, toolbox, model: str | None, registry: ToolRegistry, client_class: type[LLMClient]
) -> None:
    if not transitions.claim(task_id, model_name=model or llm_config().model_for("selector")):
        log.info("research task %s not claimed (already taken, finished or gone)", task_id)
        return
    task = ResearchTask.objects.select_related("channel", "user").get(pk=task_id)
    _drive(
        task,
        UsageMeter(),
        announce=lambda sink: sink.emit(StatusChange(from_="queued", to="running")),
        toolbox=toolbox or toolbox_for(task, registry),
        model=model,
        stop_after_plan=plan_review.wanted(task),
        client_class=client_class,
    )


def continue_task(task_id: int, *, registry: ToolRegistry = REGISTRY) -> None:
    """Celery entry point of a research's second part, after its plan review. Safe to call any
    number of times (the student's submit, the deadline's timer, the reaper): one call claims it."""
    try:
        if not plan_review.claim_continuation(task_id):
            log.info(
                "research task %s: continuation not claimed (not waiting, not due, or already continued)",
                task_id,
            )
            return
        task = ResearchTask.objects.select_related("channel", "user").get(pk=task_id)
        plan, resumed = plan_review.reviewed_plan(task)
        _drive(
            task,
            carried_meter(task),
            announce=lambda sink: sink.emit(resumed),
            toolbox=toolbox_for(task, registry),
            model=None,
            plan=Plan.from_json(plan),
            spent_seconds=task.duration_seconds or 0.0,
        )
    finally:
        connection.close()


def carried_meter(task: ResearchTask) -> UsageMeter:
    """A meter that already counts what the task's first part (planning) used."""
    meter = UsageMeter()
    meter.carry(
        Usage(
            prompt_tokens=task.prompt_tokens,
            completion_tokens=task.completion_tokens,
            reasoning_tokens=task.reasoning_tokens,
            cost_usd=float(task.cost_usd),
        )
    )
    return meter


def _drive(
    task: ResearchTask,
    meter: UsageMeter,
    *,
    announce,
    toolbox,
    model: str | None,
    stop_after_plan: bool = False,
    plan: Plan | None = None,
    spent_seconds: float = 0.0,
    client_class: type[LLMClient] = LLMClient,
) -> None:
    """Run the engine for one part of a research (the whole of it without plan review) and store
    what it ended with. `spent_seconds`: working time of an earlier part, which counts against
    the time limit and the duration; the wait for the review counts in neither."""
    monitor.register(task.pk, task.task_uuid)
    sink = TaskSink(task, meter, transcript_after=_last_transcript_seq(task) if plan else 0)
    started = time.monotonic()
    try:
        announce(sink)
        result = _run_engine(
            task,
            meter,
            sink,
            toolbox=toolbox,
            model=model,
            stop_after_plan=stop_after_plan,
            plan=plan,
            spent_seconds=spent_seconds,
            client_class=client_class,
        )
    except events.TaskGone:
        return
    except LLMError as exc:
        result = ResearchResult(OUTCOMES.failed, STOP_REASONS.llm_unavailable, error=str(exc))
    except Exception as exc:  # a bug must end the task cleanly, not leave it running
        log.exception("research task %s crashed", task.pk)
        result = ResearchResult(
            OUTCOMES.failed, STOP_REASONS.internal_error, error=f"internal error: {type(exc).__name__}"
        )
    finally:
        monitor.unregister(task.pk)
        close_old_connections()
    try:
        sink.flush()
    except Exception:  # the transcript is worth keeping, not worth failing the task over
        log.exception("could not store the transcript of task %s", task.pk)
    duration = spent_seconds + time.monotonic() - started
    if result.outcome == OUTCOMES.planned:
        if plan_review.await_review(task, result.plan, meter.total, sink, duration=duration):
            return  # the worker thread is free; continue_task takes it from here
        result = ResearchResult(OUTCOMES.cancelled, STOP_REASONS.cancelled, plan=result.plan)
    # A continuation's sink has not seen the steps of the part before it.
    steps_closed = plan is None and sink.all_steps_closed()
    ending.end_task(task, ending.of_run(result, meter.total, duration=duration, steps_closed=steps_closed))


def _last_transcript_seq(task: ResearchTask) -> int:
    return TranscriptEntry.objects.filter(task=task).aggregate(last=Max("seq"))["last"] or 0


def toolbox_for(task: ResearchTask, registry: ToolRegistry = REGISTRY):
    ctx = assistant_policy.tool_context(
        user_id=task.user_id, channel=task.channel, language=task.language, web_tools=task.web_tools
    )
    return registry.bind(ctx, after_call=_close_connection)


def _run_engine(
    task: ResearchTask,
    meter: UsageMeter,
    sink: TaskSink,
    *,
    toolbox,
    model: str | None = None,
    stop_after_plan: bool = False,
    plan: Plan | None = None,
    spent_seconds: float = 0.0,
    client_class: type[LLMClient] = LLMClient,
) -> ResearchResult:
    channel = task.channel
    config = call_config()
    if model:
        config.models = {role: model for role in config.models}
    client = client_class(
        config, meter=meter, recorder=sink.record_llm, preamble=assistant_policy.teacher_rules(channel)
    )
    client.rate_owner = f"research:{task.task_uuid}"  # its calls take turns with other researches'
    # The same boundary the tools got (channel rules plus the admin's pins), for the engine's own
    # checks of each source and of fetch_url's target: the live toolbox's own context (read once
    # per research), built afresh for a replay's recorded toolbox.
    policy = (
        toolbox.ctx
        if isinstance(toolbox, BoundToolbox)
        else assistant_policy.tool_context(user_id=task.user_id, channel=channel, language=task.language)
    )
    model_name = config.model_for("selector")
    if task.model_name != model_name:  # a first part's claim stored it already (_execute)
        ResearchTask.objects.filter(pk=task.pk).update(model_name=model_name)
        task.model_name = model_name
    return run_research(
        ResearchInput(
            question=task.user_question,
            channel_name=channel.name,
            channel_description=channel.description[:1000],
            language=task.language,
            counter_search=settings.UEDU_DR_COUNTER_SEARCH,
            allowed_domains=policy.allowed_domains,
            denied_domains=policy.denied_domains,
            context=task.context_json or {},
            # A replay researches the same question after the same turns as its original.
            conversation=follow_up.research_follow_up(task.replay_of or task),
            material_languages=tuple(channel.material_languages),
        ),
        llm=client,
        tools=toolbox,
        sink=sink,
        is_cancelled=sink.cancel_requested,
        limits=engine_limits(),
        credibility=credibility.weigher(),
        stop_after_plan=stop_after_plan,
        plan=plan,
        spent_seconds=spent_seconds,
    )
