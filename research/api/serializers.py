from __future__ import annotations

from collections.abc import Mapping

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from research.models import AnswerFeedback, ResearchStep, ResearchTask
from research.presentation import task_markdown

from .report_schema import CITATIONS_OPENAPI


class StrictSerializer(serializers.Serializer):
    """A request body with a field the endpoint does not know is refused (400), not silently
    ignored: `channelId` instead of `channel_id` should fail loudly, not start something else."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: [_("Unknown field.")] for name in unknown})
        return super().to_internal_value(data)


class StartSerializer(StrictSerializer):
    # Blank and over-long questions are refused by the service with its own clear messages.
    question = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    channel_id = serializers.IntegerField()
    trigger_mode = serializers.ChoiceField(choices=ResearchTask.TriggerMode.choices, default="forced")
    context = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=200),
        required=False,
        help_text="time_range, subject, entities, metrics, source_language, source_preference",
    )
    follow_up = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="a completed research of this channel that you may read, which this one follows up on",
    )


class ContextCheckSerializer(StrictSerializer):
    question = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    # Required: a model call is a channel member's, on that channel's behalf (and budget).
    channel_id = serializers.IntegerField()


class PlanReviewSerializer(StrictSerializer):
    sub_questions = serializers.ListField(
        child=serializers.CharField(allow_blank=True, max_length=2000),
        required=False,
        max_length=20,
        help_text="the edited plan; omit to continue with the proposed one",
    )


class FeedbackSerializer(StrictSerializer):
    useful = serializers.BooleanField(required=False, allow_null=True, default=None)
    reason = serializers.ChoiceField(
        choices=[("", "")] + list(AnswerFeedback.Reason.choices), required=False, default=""
    )
    citation_number = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1)
    # The service refuses notes over MAX_NOTE with its own message; this bounds what is parsed.
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=100_000)


class FeedbackOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    task_uuid = serializers.UUIDField(source="task.task_uuid")
    channel_slug = serializers.CharField(source="task.channel.slug")
    useful = serializers.BooleanField(allow_null=True)
    reason = serializers.CharField()
    citation_number = serializers.IntegerField(allow_null=True)
    note = serializers.CharField()
    created_at = serializers.DateTimeField()


class StartedSerializer(serializers.Serializer):
    task_uuid = serializers.UUIDField()
    request_log_id = serializers.IntegerField()


class CancelSerializer(StrictSerializer):
    task_uuid = serializers.UUIDField()


class JudgeSerializer(StrictSerializer):
    question = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    channel_id = serializers.IntegerField()  # required, as for the context check


class JudgeResultSerializer(serializers.Serializer):
    worth_it = serializers.BooleanField()
    confidence = serializers.FloatField(min_value=0, max_value=1)
    reasons = serializers.ListField(child=serializers.CharField())
    threshold = serializers.FloatField(required=False)
    suggest = serializers.BooleanField(required=False)


class QuotaSerializer(serializers.Serializer):
    role = serializers.CharField()
    limit = serializers.IntegerField(allow_null=True)
    unlimited = serializers.BooleanField()
    used = serializers.FloatField()
    remaining = serializers.FloatField(allow_null=True)
    window_start = serializers.DateTimeField(allow_null=True)
    next_free_at = serializers.DateTimeField(allow_null=True)
    window_hours = serializers.IntegerField()
    platform_cap_reached = serializers.BooleanField()


class TaskListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=ResearchTask.Status.choices, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)


class EventsQuerySerializer(serializers.Serializer):
    after = serializers.IntegerField(min_value=0, default=0)


class ReviewSerializer(StrictSerializer):
    note = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)


class ConflictDecisionSerializer(StrictSerializer):
    """A reviewer's decision on one unresolved conflict (its `key` from the report JSON)."""

    conflict_key = serializers.CharField(max_length=64)
    decision = serializers.ChoiceField(choices=["side", "unsettleable"])
    side = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=1000)
    reason = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)


class ClaimSerializer(serializers.ModelSerializer):
    class Meta:
        from research.models import ResearchClaim

        model = ResearchClaim
        fields = [
            "index",
            "text",
            "citations",
            "verdict",
            "reason",
            "tiers",
            "confidence",
            "web_only",
            "action",
        ]


class TaskSummarySerializer(serializers.ModelSerializer):
    # queued | running | awaiting_plan_review | terminal (ResearchTask.Phase); `status` says how it ended.
    phase = serializers.ChoiceField(choices=ResearchTask.Phase.choices, read_only=True)
    channel_id = serializers.IntegerField()
    channel_slug = serializers.CharField(source="channel.slug")
    question = serializers.CharField(source="user_question")

    class Meta:
        model = ResearchTask
        fields = [
            "task_uuid",
            "status",
            "phase",
            "trigger_mode",
            "question",
            "channel_id",
            "channel_slug",
            "tokens_used",
            "cost_usd",
            "limit_hit",
            "created_at",
            "finished_at",
        ]


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = ResearchStep
        fields = [
            "index",
            "round",
            "phase",
            "tool_name",
            "args",
            "status",
            "result_preview",
            "error",
            "duration_ms",
        ]


@extend_schema_field(CITATIONS_OPENAPI)
class CitationsField(serializers.JSONField):
    """The stored citations, published with their shape (quote and location included)."""


class TaskDetailSerializer(serializers.ModelSerializer):
    phase = serializers.ChoiceField(choices=ResearchTask.Phase.choices, read_only=True)  # as in the summary
    question = serializers.CharField(source="user_question")
    channel = serializers.SerializerMethodField()
    owner = serializers.CharField(source="user.username")
    plan = serializers.JSONField(source="plan_json")
    answer = serializers.SerializerMethodField(
        help_text="The report as Markdown in the requester's language (the AI's words in labelled blockquotes)"
    )
    citations = CitationsField(source="citations_json")
    verification = serializers.JSONField(source="verification_json")
    steps = StepSerializer(many=True)
    claims = ClaimSerializer(many=True)
    usage = serializers.SerializerMethodField()
    metrics = serializers.SerializerMethodField()
    review = serializers.SerializerMethodField()
    last_seq = serializers.IntegerField(source="event_seq")

    class Meta:
        model = ResearchTask
        fields = [
            "task_uuid",
            "status",
            "phase",
            "trigger_mode",
            "question",
            "channel",
            "owner",
            "language",
            "plan",
            "answer",
            "citations",
            "verification",
            "claims",
            "steps",
            "usage",
            "metrics",
            "review",
            "limit_hit",
            "stop_reason",
            "error",
            "invalid_citations_removed",
            "created_at",
            "started_at",
            "finished_at",
            "duration_seconds",
            "last_seq",
            "disclaimer_acknowledged_at",
        ]

    def get_answer(self, task) -> str:
        request = self.context.get("request")
        base_url = request.build_absolute_uri("/") if request is not None else ""
        page_url = (
            request.build_absolute_uri(reverse("research_result", args=[task.task_uuid])) if request else ""
        )
        return task_markdown(task, page_url=page_url, base_url=base_url) if task.status == "completed" else ""

    def get_channel(self, task) -> dict:
        return {"id": task.channel_id, "slug": task.channel.slug, "name": task.channel.name}

    def get_metrics(self, task) -> dict | None:
        metrics = getattr(task, "metrics", None)
        if metrics is None:
            return None
        fields = [
            "citation_coverage",
            "unsupported_rate",
            "conflicts_found",
            "conflicts_shown",
            "conflict_disclosure",
            "low_credibility_share",
            "tool_calls",
            "searches",
            "rounds",
            "table_cells",
            "removed_from_body",
            "removed_reasons",
            "conflicts_reported_by_writer",
            "source_pollution_rate",
        ]
        return {f: getattr(metrics, f) for f in fields}

    def get_review(self, task) -> dict:
        return {
            "needs_review": task.needs_review,
            "note": task.review_note,
            "reviewed_at": task.reviewed_at.isoformat() if task.reviewed_at else None,
            "replay_of": str(task.replay_of.task_uuid) if task.replay_of_id else None,
        }

    def get_usage(self, task) -> dict:
        return {
            "tokens": task.tokens_used,
            "prompt_tokens": task.prompt_tokens,
            "completion_tokens": task.completion_tokens,
            "reasoning_tokens": task.reasoning_tokens,
            "cost_usd": float(task.cost_usd),
        }


class EventSerializer(serializers.Serializer):
    seq = serializers.IntegerField(allow_null=True)
    type = serializers.CharField()
    task_uuid = serializers.UUIDField()
    ts = serializers.DateTimeField()
    data = serializers.JSONField()
