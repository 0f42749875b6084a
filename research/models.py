"""Deep Research tasks, their steps and their event stream (source tables deep_research_*)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ResearchTask(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        COMPLETED = "completed", _("Completed")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    TERMINAL = (Status.COMPLETED, Status.FAILED, Status.CANCELLED)

    class TriggerMode(models.TextChoices):
        FORCED = "forced", _("Forced (magnifier button)")
        AUTO = "auto", _("Auto (accepted suggestion)")

    task_uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="research_tasks")
    channel = models.ForeignKey("channels_app.Channel", on_delete=models.CASCADE, related_name="research_tasks")
    user_question = models.TextField(_("question"))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    trigger_mode = models.CharField(_("trigger mode"), max_length=16, choices=TriggerMode.choices)
    language = models.CharField(_("answer language"), max_length=16, default="zh-hant")

    plan_json = models.JSONField(_("plan"), default=dict, blank=True)
    final_answer = models.TextField(_("final answer"), blank=True)
    citations_json = models.JSONField(_("citations"), default=list, blank=True)
    verification_json = models.JSONField(_("verification report"), default=dict, blank=True)

    tokens_used = models.PositiveIntegerField(_("tokens used"), default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    reasoning_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(_("cost (USD)"), max_digits=10, decimal_places=6, default=0)
    duration_seconds = models.FloatField(_("duration (s)"), null=True, blank=True)
    limit_hit = models.CharField(_("limit hit"), max_length=32, blank=True)
    stop_reason = models.CharField(_("stop reason"), max_length=32, blank=True)
    invalid_citations_removed = models.PositiveIntegerField(_("invalid citations removed"), default=0)
    error = models.TextField(_("error"), blank=True)

    # Learning-analytics signals (Sociomics, Ethicomics): counted without storing who.
    shared_views = models.PositiveIntegerField(_("views by others"), default=0)
    disclaimer_acknowledged_at = models.DateTimeField(_("disclaimer acknowledged"), null=True, blank=True)

    cancel_requested = models.BooleanField(default=False)
    # Last seq handed out for this task's events; incremented atomically (see research.events).
    event_seq = models.PositiveIntegerField(default=0)

    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    last_heartbeat_at = models.DateTimeField(_("last heartbeat"), null=True, blank=True)

    class Meta:
        db_table = "deep_research_tasks"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user", "-created_at"]),
            models.Index(fields=["status", "last_heartbeat_at"]),
        ]
        verbose_name = _("research task")
        verbose_name_plural = _("research tasks")

    def __str__(self) -> str:
        return f"{self.task_uuid} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class ResearchStep(models.Model):
    """One tool call (or one phase's LLM call) of a research, stored as it happens."""

    task = models.ForeignKey(ResearchTask, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField(_("index"))
    round = models.PositiveIntegerField(_("round"), default=0)
    phase = models.CharField(_("phase"), max_length=24)
    tool_name = models.CharField(_("tool"), max_length=80, blank=True)
    args = models.JSONField(_("arguments"), default=dict, blank=True)
    status = models.CharField(_("status"), max_length=16, default="ok")
    result_preview = models.TextField(_("result preview"), blank=True)
    result_full = models.JSONField(_("full result"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    duration_ms = models.PositiveIntegerField(_("duration (ms)"), default=0)
    tokens = models.PositiveIntegerField(_("tokens"), default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "deep_research_steps"
        ordering = ["task", "index"]
        constraints = [models.UniqueConstraint(fields=["task", "index"], name="one_step_per_index")]
        verbose_name = _("research step")
        verbose_name_plural = _("research steps")

    def __str__(self) -> str:
        return f"{self.task_id}#{self.index} {self.phase} {self.tool_name}"


class ResearchEvent(models.Model):
    """A progress event as sent to browsers; the database copy is the source of truth for replay."""

    task = models.ForeignKey(ResearchTask, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=32)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "deep_research_events"
        ordering = ["task", "seq"]
        constraints = [models.UniqueConstraint(fields=["task", "seq"], name="one_event_per_seq")]
        verbose_name = _("research event")
        verbose_name_plural = _("research events")

    def __str__(self) -> str:
        return f"{self.task_id}:{self.seq} {self.type}"
