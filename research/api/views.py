"""The Deep Research REST + SSE API. Thin: parse, call a service or selector, shape the reply."""

from __future__ import annotations

import json
import logging
import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import StreamingHttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import api_view, renderer_classes
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from channels_app.models import Channel
from research import stream_slots
from research.feed import TaskEventFeed
from research.selectors import get_visible_task, quota_view, still_sees, user_tasks
from research.services import (
    analytics,
    conflict_decisions,
    context,
    feedback,
    follow_up,
    judge,
    lifecycle,
    plan_review,
    review,
)
from research.services.events import events_after, serialize
from uedu_dr.errors import ServiceError
from uedu_dr.ratelimits import enforce_rate

from . import serializers as s
from .report_schema import REPORT_OPENAPI

log = logging.getLogger(__name__)

ERRORS = {
    400: OpenApiResponse(description='Bad input: {"error": {"code", "message"}}'),
    403: OpenApiResponse(description="Deep Research off for the channel"),
    404: OpenApiResponse(description="No such task or channel (or one you may not see)"),
    429: OpenApiResponse(
        description="Quota, rate limit, the user's share of the cap, researches under way or cancels "
        "throttled; see Retry-After"
    ),
    503: OpenApiResponse(
        description="Platform daily cost cap reached, the LLM is unavailable, or server_busy (see Retry-After)"
    ),
}


class EventStreamRenderer(BaseRenderer):
    """Lets content negotiation accept `text/event-stream`; the stream itself is a
    StreamingHttpResponse, and anything else (errors) is rendered as JSON."""

    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return JSONRenderer().render(data)


def _member_channel(user, channel_id: int) -> Channel:
    """The channel, if the user is in it. A channel that does not exist and one the user is not in
    get the same answer, so channel ids cannot be probed."""
    channel = Channel.objects.filter(pk=channel_id).first()
    try:
        if channel is None:
            raise ServiceError("not_a_member", "")
        lifecycle.check_member(user, channel)
    except ServiceError:
        raise ServiceError(
            "unknown_channel", _("There is no such channel, or you are not a member of it."), status=404
        ) from None
    return channel


def wants_json(request: Request) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    return "application/json" in accept and "text/event-stream" not in accept


@extend_schema(
    request=s.StartSerializer,
    responses={
        201: s.StartedSerializer,
        200: OpenApiResponse(OpenApiTypes.STR, description="text/event-stream of task events (id: seq)"),
        **ERRORS,
    },
    description="Start a research. With `Accept: application/json` answers at once with the task id; otherwise "
    "streams the task's events as Server-Sent Events until a terminal event.",
)
@api_view(["POST"])
@renderer_classes([JSONRenderer, EventStreamRenderer])
def start(request: Request):
    body = s.StartSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    enforce_rate(request, "deep_research.start", settings.UEDU_DR_RATE_START, fail_closed=True)
    channel = _member_channel(request.user, body.validated_data["channel_id"])
    attached = None
    if body.validated_data.get("follow_up"):
        attached = follow_up.attachable(request.user, channel, body.validated_data["follow_up"])
        if attached is None:
            raise ServiceError(
                "invalid", _("follow_up must be a completed research of this channel that you may read.")
            )
    # A streaming start takes its stream slot first: a refusal must come before a task exists.
    slot = None if wants_json(request) else _stream_slot(request.user)
    task, request_log = lifecycle.task_start(
        user=request.user,
        channel=channel,
        question=body.validated_data["question"],
        trigger_mode=body.validated_data["trigger_mode"],
        context=body.validated_data.get("context"),
        follow_up_of=attached,
    )
    if wants_json(request):
        return Response({"task_uuid": str(task.task_uuid), "request_log_id": request_log.pk}, status=201)
    return sse_response(
        request.user,
        task.pk,
        task.task_uuid,
        0,
        extra={"request_log_id": request_log.pk},
        slot=slot,
        session_key=_session_key(request),
    )


@extend_schema(
    parameters=[OpenApiParameter("Last-Event-ID", OpenApiTypes.INT, OpenApiParameter.HEADER, required=False)],
    responses={200: OpenApiResponse(OpenApiTypes.STR, description="text/event-stream"), 404: ERRORS[404]},
    description="Follow a task's events as Server-Sent Events from after `Last-Event-ID` (or `?after=`).",
)
@api_view(["GET"])
@renderer_classes([JSONRenderer, EventStreamRenderer])
def stream(request: Request, task_uuid):
    task = get_visible_task(request.user, task_uuid)
    raw = request.META.get("HTTP_LAST_EVENT_ID") or request.query_params.get("after") or "0"
    try:
        last_seq = max(0, int(raw))
    except ValueError:
        raise ServiceError("invalid", _("Last-Event-ID must be an event number."), status=400) from None
    log.info("stream opened (SSE): task %s, user #%s", task.task_uuid, request.user.pk)
    return sse_response(request.user, task.pk, task.task_uuid, last_seq, session_key=_session_key(request))


def _session_key(request) -> str | None:
    """The log-in session a stream rides on (None for a token): its end ends the stream."""
    from rest_framework.authentication import SessionAuthentication

    if isinstance(request.successful_authenticator, SessionAuthentication):
        return request.session.session_key
    return None


def _stream_slot(user) -> str:
    slot = stream_slots.acquire(user.pk)
    if slot is None:
        raise ServiceError(
            "too_many_streams",
            _("You have too many research streams open; close one and try again."),
            status=429,
            retry_after=5,
        )
    return slot


def sse_response(
    user,
    task_id: int,
    task_uuid,
    last_seq: int,
    extra: dict | None = None,
    slot: str | None = None,
    session_key: str | None = None,
) -> StreamingHttpResponse:
    """The task's events as Server-Sent Events, within the stream bounds the WebSocket has
    (research.consumers): a slot among the user's open streams (429 when none is free), the
    visibility rule checked again while it runs, and the end of the stream at the terminal event."""
    slot = slot or _stream_slot(user)
    response = StreamingHttpResponse(
        _sse(user, slot, task_id, task_uuid, last_seq, extra or {}, session_key),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # proxies must not hold the stream back
    return response


async def _sse(user, slot: str, task_id: int, task_uuid, last_seq: int, extra: dict, session_key=None):
    try:
        async with TaskEventFeed(task_id, task_uuid, last_seq) as feed:
            connected = feed.connected()
            connected["data"].update(extra)
            yield _frame(connected)
            checked = time.monotonic()
            while not feed.finished:
                if time.monotonic() - checked >= settings.UEDU_DR_STREAM_RECHECK_SECONDS:
                    checked = time.monotonic()
                    if not await sync_to_async(still_sees)(user, task_id, session_key):
                        return  # no longer allowed (a removed Super TA, a log-out): the stream ends
                    await sync_to_async(stream_slots.renew)(user.pk, slot)
                for event in await feed.next():
                    yield _frame(event)
    finally:
        await sync_to_async(stream_slots.release)(user.pk, slot)


def _frame(event: dict) -> str:
    head = f"id: {event['seq']}\n" if event.get("seq") is not None else ""
    return f"{head}data: {json.dumps(event, ensure_ascii=False)}\n\n"


@extend_schema(
    request=s.CancelSerializer,
    responses={
        200: s.TaskSummarySerializer,
        403: ERRORS[403],
        404: ERRORS[404],
        409: OpenApiResponse(description="Already finished"),
    },
)
@api_view(["POST"])
def cancel(request: Request):
    body = s.CancelSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    task = get_visible_task(request.user, body.validated_data["task_uuid"])
    task = lifecycle.task_cancel(user=request.user, task=task)
    return Response(s.TaskSummarySerializer(task).data)


@extend_schema(responses={200: s.QuotaSerializer})
@api_view(["GET"])
def quota(request: Request):
    return Response(quota_view(request.user))


@extend_schema(
    parameters=[s.TaskListQuerySerializer],
    responses={200: s.TaskSummarySerializer(many=True), 400: ERRORS[400]},
)
@api_view(["GET"])
def my_tasks(request: Request):
    query = s.TaskListQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    tasks = user_tasks(
        request.user, status=query.validated_data.get("status"), limit=query.validated_data["limit"]
    )
    return Response(s.TaskSummarySerializer(tasks, many=True).data)


@extend_schema(responses={200: s.TaskDetailSerializer, 404: ERRORS[404]})
@api_view(["GET"])
def task_detail(request: Request, task_uuid):
    task = get_visible_task(request.user, task_uuid)
    return Response(s.TaskDetailSerializer(task, context={"request": request}).data)


@extend_schema(
    summary="The task's report (versioned JSON Schema)",
    responses={
        200: OpenApiResponse(
            REPORT_OPENAPI,
            description="The report: facts (spans of the sources, with their locations) by sub-question, "
            "values parsed and computed by code, conflicts, hypotheses with their computed statuses, the "
            "judgement's computed stance, counter-evidence, the AI's words in objects marked "
            '`"by": "model"`, limitations, what was not shown, sources; a conflict a reviewer decided '
            "carries the current `decision` with who and when",
        ),
        404: ERRORS[404],
        409: OpenApiResponse(description='The task has no report (yet): {"error": {"code", "message"}}'),
    },
)
@api_view(["GET"])
def task_report(request: Request, task_uuid):
    task = get_visible_task(request.user, task_uuid)
    if not task.report_json:
        raise ServiceError(
            "report_unavailable", _("This research has no report: it has not completed."), status=409
        )
    return Response(conflict_decisions.report_with_decisions(task).to_json())


@extend_schema(
    parameters=[s.EventsQuerySerializer], responses={200: s.EventSerializer(many=True), 404: ERRORS[404]}
)
@api_view(["GET"])
def task_events(request: Request, task_uuid):
    task = get_visible_task(request.user, task_uuid)
    query = s.EventsQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    events = events_after(task.pk, query.validated_data["after"])
    return Response([serialize(e, task.task_uuid) for e in events])


@extend_schema(request=s.JudgeSerializer, responses={200: s.JudgeResultSerializer, **ERRORS})
@api_view(["POST"])
def judge_view(request: Request):
    body = s.JudgeSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    enforce_rate(request, "deep_research.judge", settings.UEDU_DR_RATE_JUDGE, fail_closed=True)
    channel = _member_channel(request.user, body.validated_data["channel_id"])
    return Response(judge.judge_question(body.validated_data["question"], channel, user=request.user))


@extend_schema(
    request=None,
    responses={
        200: OpenApiResponse(description='{"acknowledged_at": "…"}'),
        403: ERRORS[403],
        404: ERRORS[404],
        409: OpenApiResponse(description="The research has no answer"),
    },
)
@api_view(["POST"])
def acknowledge(request: Request, task_uuid):
    """The owner's "I understand" click on the answer's disclaimer."""
    task = analytics.acknowledge_disclaimer(get_visible_task(request.user, task_uuid), request.user)
    return Response({"acknowledged_at": task.disclaimer_acknowledged_at.isoformat()})


@extend_schema(
    request=s.ReviewSerializer,
    responses={200: s.TaskDetailSerializer, 400: ERRORS[400], 403: ERRORS[403], 404: ERRORS[404]},
)
@api_view(["POST"])
def review_note(request: Request, task_uuid):
    """The channel's teacher or a Super TA adds a reviewer note (shown on the result page)."""
    task = get_visible_task(request.user, task_uuid)
    body = s.ReviewSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    task = review.add_review_note(task=task, user=request.user, note=body.validated_data["note"])
    return Response(s.TaskDetailSerializer(task, context={"request": request}).data)


@extend_schema(
    summary="Decide an unresolved conflict of the report",
    request=s.ConflictDecisionSerializer,
    responses={
        201: OpenApiResponse(description='{"decision", "side", "reason", "decided_by", "decided_at"}'),
        400: OpenApiResponse(
            description='Unknown conflict key, bad side or decision, empty reason: {"error": {"code", "message"}}'
        ),
        403: OpenApiResponse(description="Not the channel's teacher nor a Super TA with an NDA"),
        404: ERRORS[404],
    },
)
@api_view(["POST"])
def decide_conflict(request: Request, task_uuid):
    """The channel's teacher or a Super TA with an NDA chooses the prevailing side of an unresolved
    conflict (`decision: "side"` with `side`, the index in the conflict's `sides`) or marks it
    `unsettleable`, with a reason. A newer decision supersedes the older one; both are kept."""
    task = get_visible_task(request.user, task_uuid)
    body = s.ConflictDecisionSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    row = conflict_decisions.decide(
        task=task,
        user=request.user,
        key=body.validated_data["conflict_key"],
        decision=body.validated_data["decision"],
        side=body.validated_data.get("side"),
        reason=body.validated_data["reason"],
    )
    return Response(conflict_decisions.decision_json(row), status=201)


@extend_schema(responses={200: s.TaskSummarySerializer(many=True)})
@api_view(["GET"])
def review_queue(request: Request):
    """Tasks with unresolved conflicts awaiting review, in the channels the user reviews."""
    return Response(s.TaskSummarySerializer(review.review_queue(request.user)[:100], many=True).data)


@extend_schema(
    request=s.ContextCheckSerializer,
    responses={
        200: OpenApiResponse(description='{"needs_clarification", "questions": [{key, question, default}]}'),
        **ERRORS,
    },
)
@api_view(["POST"])
def context_check(request: Request):
    """Before a run: does the question lack a time range, subject, source language or preference?"""
    body = s.ContextCheckSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    enforce_rate(request, "deep_research.judge", settings.UEDU_DR_RATE_JUDGE, fail_closed=True)
    channel = _member_channel(request.user, body.validated_data["channel_id"])
    return Response(context.check_context(body.validated_data["question"], channel, user=request.user))


@extend_schema(
    request=s.PlanReviewSerializer,
    responses={
        200: s.TaskSummarySerializer,
        403: ERRORS[403],
        404: ERRORS[404],
        409: OpenApiResponse(description="Not waiting for a plan review"),
    },
)
@api_view(["POST"])
def plan(request: Request, task_uuid):
    """The owner continues a run waiting for plan review, with edited sub-questions or as proposed."""
    task = get_visible_task(request.user, task_uuid)
    body = s.PlanReviewSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    task = plan_review.submit(
        task=task, user=request.user, sub_questions=body.validated_data.get("sub_questions")
    )
    return Response(s.TaskSummarySerializer(task).data)


@extend_schema(request=s.FeedbackSerializer, responses={201: s.FeedbackOutSerializer, **ERRORS})
@api_view(["POST"])
def give_feedback(request: Request, task_uuid):
    """Useful / not useful, a reported problem, or "this source does not say this" for one citation."""
    task = get_visible_task(request.user, task_uuid)
    body = s.FeedbackSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    enforce_rate(request, "deep_research.feedback", settings.UEDU_DR_RATE_FEEDBACK)
    row = feedback.give_feedback(task=task, user=request.user, **body.validated_data)
    return Response(s.FeedbackOutSerializer(row).data, status=201)


@extend_schema(responses={200: s.FeedbackOutSerializer(many=True)})
@api_view(["GET"])
def feedback_list(request: Request):
    """Feedback on answers in the channels the user teaches or reviews as Super TA."""
    rows = feedback.feedback_for_reviewer(request.user)[:200]
    return Response(s.FeedbackOutSerializer(rows, many=True).data)
