"""Deep Research tasks, their steps and their event stream (source tables deep_research_*)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from agent.engine.verification import PLAN_HEADING
from agent.engine.vocabulary import STOP_REASONS
from channels_app.models import Channel
from research import vocabulary_labels


class ResearchTask(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        COMPLETED = "completed", _("Completed")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    TERMINAL = (Status.COMPLETED, Status.FAILED, Status.CANCELLED)

    class Phase(models.TextChoices):
        """Where a task is in its life: the statuses, with "running" split in two (a task waiting
        for its plan review is stored as running; see `in_phase`). The UI and the API show this;
        research.services.transitions is the only code that moves a task between phases."""

        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        AWAITING_PLAN_REVIEW = "awaiting_plan_review", _("Awaiting plan review")
        TERMINAL = "terminal", _("Finished")

    class TriggerMode(models.TextChoices):
        # One term per mode in both languages: manual is the student's own click (手動), automatic
        # the judge's suggestion the student accepted (自動). The values stay as the API knows them.
        FORCED = "forced", _("Manual (magnifier button)")
        AUTO = "auto", _("Automatic (accepted suggestion)")

    task_uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="research_tasks"
    )
    channel = models.ForeignKey(
        "channels_app.Channel", on_delete=models.CASCADE, related_name="research_tasks"
    )
    user_question = models.TextField(_("question"))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.QUEUED)
    trigger_mode = models.CharField(_("trigger mode"), max_length=16, choices=TriggerMode.choices)
    language = models.CharField(_("answer language"), max_length=16, default="zh-hant")

    plan_json = models.JSONField(_("plan"), default=dict, blank=True)
    final_answer = models.TextField(_("final answer"), blank=True)
    citations_json = models.JSONField(_("citations"), default=list, blank=True)
    verification_json = models.JSONField(_("verification report"), default=dict, blank=True)
    # The report in the shape of agent.engine.report.REPORT_SCHEMA (versioned): what
    # GET /api/deep_research/task/<uuid>/report serves and the page renders. Empty for a task
    # that did not complete or finished before reports existed.
    report_json = models.JSONField(_("report"), default=dict, blank=True)

    tokens_used = models.PositiveIntegerField(_("tokens used"), default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    reasoning_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(_("cost (USD)"), max_digits=10, decimal_places=6, default=0)
    duration_seconds = models.FloatField(_("duration (s)"), null=True, blank=True)
    limit_hit = models.CharField(_("limit hit"), max_length=32, blank=True)
    # Why the research ended (agent.engine.vocabulary.STOP_REASONS); "" while it has not.
    stop_reason = models.CharField(
        _("stop reason"), max_length=32, blank=True, choices=vocabulary_labels.choices(STOP_REASONS)
    )
    invalid_citations_removed = models.PositiveIntegerField(_("invalid citations removed"), default=0)
    error = models.TextField(_("error"), blank=True)

    # Learning-analytics signals (Sociomics, Ethicomics): counted without storing who.
    shared_views = models.PositiveIntegerField(_("share-link openings by others"), default=0)
    disclaimer_acknowledged_at = models.DateTimeField(_("disclaimer acknowledged"), null=True, blank=True)

    # Evidence quality: unresolved conflicts put a task in the review queue of the channel's
    # teacher and Super TAs, whose note is shown on the result page.
    needs_review = models.BooleanField(_("needs human review"), default=False, db_index=True)
    review_note = models.TextField(_("reviewer note"), blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("reviewed by"),
    )
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    # When the last of the report's unresolved conflicts got a reviewer's decision: a decision
    # is a review too, so the research leaves the review queue (services.conflict_decisions).
    conflicts_decided_at = models.DateTimeField(_("conflicts decided at"), null=True, blank=True)
    # The finished research this one follows up on ("ask a follow-up" on its result page): its
    # answer and sources go to the prompts with the conversation (services.follow_up).
    follow_up_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="follow_ups",
        verbose_name=_("follows up on"),
    )
    # Whether the research may use the web tools: the channel's setting when it started, which
    # its run keeps (research.services.assistant_policy). A nothing-verified research that ran
    # without them is offered a retry with the web on once its channel allows it
    # (research.services.retry). None: started before this was recorded.
    web_tools = models.BooleanField(_("web tools on"), null=True, blank=True)
    # A replay re-runs a stored task's reasoning against its recorded tool results.
    replay_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replays",
        verbose_name=_("replay of"),
    )
    # A replay is an evaluation record, never learner data: owned by the admin who ran it, it
    # writes no chat row and every learner-facing query (history, chat, follow-up context,
    # export, source statistics) leaves it out. A flag, not just replay_of, because replay_of
    # is cleared when the original is deleted.
    is_replay = models.BooleanField(_("replay"), default=False, db_index=True)
    # The copyable share link's secret (research.services.analytics); openings through it by
    # others who may see the result are counted in shared_views.
    share_token = models.CharField(max_length=32, unique=True, null=True, blank=True, editable=False)
    # A teacher (or a Super TA with an NDA) marks a result as misused (e.g. handed in as the
    # student's own work); a learning-analytics signal, exported as a flag.
    misuse_flagged_at = models.DateTimeField(_("misuse flagged at"), null=True, blank=True)
    misuse_flagged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("misuse flagged by"),
    )
    misuse_note = models.TextField(_("misuse note"), blank=True)
    model_name = models.CharField(_("model"), max_length=100, blank=True)
    # Context alignment and plan review (before and after planning).
    context_json = models.JSONField(_("research context"), default=dict, blank=True)
    # The channel's setting when the task started (a later change of the channel's does not apply).
    plan_review_mode = models.CharField(
        _("plan review"), max_length=12, choices=Channel.PlanReview.choices, default=Channel.PlanReview.OFF
    )
    plan_edits_json = models.JSONField(_("plan edits"), default=dict, blank=True)
    plan_confirmed_at = models.DateTimeField(_("plan confirmed"), null=True, blank=True)
    # A run with plan review is two Celery tasks: the first plans, sets the deadline and returns
    # (no worker waits for the student); the second claims the task by setting plan_continued_at
    # (once, whoever asks: the student's submit, the deadline's timer or the reaper). Between the
    # two the task is "running" with a deadline and no continuation: waiting for its review.
    plan_review_deadline = models.DateTimeField(_("plan review deadline"), null=True, blank=True)
    plan_continued_at = models.DateTimeField(_("research continued after plan review"), null=True, blank=True)

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
            # Admission control counts the claims of the last seconds (research.services.admission).
            models.Index(fields=["started_at"], name="dr_task_started_at"),
        ]
        verbose_name = _("research task")
        verbose_name_plural = _("research tasks")

    def __str__(self) -> str:
        return f"{self.task_uuid} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL

    @property
    def phase(self) -> str:
        """This task's `Phase`; the same rule as `in_phase`, read from the loaded row."""
        if self.status == self.Status.QUEUED:
            return self.Phase.QUEUED
        if self.status == self.Status.RUNNING:
            if self.plan_review_deadline is not None and self.plan_continued_at is None:
                return self.Phase.AWAITING_PLAN_REVIEW
            return self.Phase.RUNNING
        return self.Phase.TERMINAL

    @property
    def phase_label(self) -> str:
        """What a reader is told of where the task is: its phase, or how it ended."""
        if self.phase == self.Phase.TERMINAL:
            return self.get_status_display()
        return self.Phase(self.phase).label

    @classmethod
    def in_phase(cls, phase: str) -> models.Q:
        """The filter for the tasks in `phase` (the `phase` property, as a query)."""
        # Between the two parts of a run with plan review: planned, deadline set, not continued.
        waiting = models.Q(
            status=cls.Status.RUNNING, plan_review_deadline__isnull=False, plan_continued_at__isnull=True
        )
        return {
            cls.Phase.QUEUED: models.Q(status=cls.Status.QUEUED),
            cls.Phase.RUNNING: models.Q(status=cls.Status.RUNNING) & ~waiting,
            cls.Phase.AWAITING_PLAN_REVIEW: waiting,
            cls.Phase.TERMINAL: models.Q(status__in=cls.TERMINAL),
        }[phase]


class ResearchStep(models.Model):
    """One tool call of a research, stored as it happens."""

    class Phase(models.TextChoices):
        """The purpose of the action turn that made the call (the engine's turn purposes)."""

        EVIDENCE = "evidence", _("Evidence")
        COUNTER_SEARCH = "counter_search", _("Counter-search")
        CONFLICT = "conflict", _("Conflict re-search")

    class Status(models.TextChoices):
        RUNNING = "running", _("Running")
        OK = "ok", _("Done")
        ERROR = "error", _("Tool error")
        # Interrupted by the research's end (research.services.ending.close_open_steps).
        FAILED = "failed", _("Interrupted (research failed)")
        CANCELLED = "cancelled", _("Interrupted (research cancelled)")

    task = models.ForeignKey(ResearchTask, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField(_("index"))
    round = models.PositiveIntegerField(_("round"), default=0)
    phase = models.CharField(_("phase"), max_length=24, choices=Phase.choices)
    tool_name = models.CharField(_("tool"), max_length=80, blank=True)
    args = models.JSONField(_("arguments"), default=dict, blank=True)
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.OK)
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


class ResearchClaim(models.Model):
    """The ledger of a research: one row per fact its report shows (the fact's spans, the
    sources' own words) and one per item the report does not show (with its span's words, or
    none: a model's words are never stored here). Researches of the 1.x pipeline have a row per
    sentence, table cell, heading and judgement its writer wrote."""

    class Verdict(models.TextChoices):
        SUPPORTED = "supported", _("Supported")
        PARTIAL = "partial", _("Partially supported")
        UNSUPPORTED = "unsupported", _("Unsupported")
        NO_CITATION = "no_citation", _("No citation")
        FABRICATED = "fabricated_citation", _("Invented citation")
        UNVERIFIED = "unverified", _("Not verified")
        FIGURE_MISMATCH = "figure_mismatch", _("Figure differs from its claim")
        INSTRUCTION = "instruction_in_source", _("Instruction found in source")

    class Action(models.TextChoices):
        KEPT = "kept", _("kept as written")
        MARKED = "marked", _("marked in the answer")
        DROPPED = "dropped", _("removed from the answer")
        REPLACED = "replaced", _("replaced by the text of its claims")

    class Kind(models.TextChoices):
        """What of the report the row is: a fact, an item the report does not show (the kinds of
        vocabulary.NOT_SHOWN_KINDS), or, in a 1.x research, a unit its writer wrote."""

        FACT = "fact", _("Fact")
        SPAN = "span", _("Passage")
        SELECTION = "selection", _("Selection")
        SUB_QUESTION = "sub_question", _("Sub-question")
        HYPOTHESIS = "hypothesis", _("Hypothesis")
        REASONING = "reasoning", _("Reasoning")
        ASSUMPTION = "assumption", _("Assumption")
        SUGGESTION = "suggestion", _("Suggestion")
        TRANSLATION = "translation", _("Translation")
        CONTRADICTION = "contradiction", _("Contradiction")
        SENTENCE = "sentence", _("Sentence")
        CELL = "cell", _("Table cell")
        HEADING = "heading", _("Heading")
        JUDGEMENT = "judgement", _("Judgement")

    task = models.ForeignKey(ResearchTask, on_delete=models.CASCADE, related_name="claims")
    index = models.PositiveIntegerField()
    text = models.TextField(_("claim"))
    citations = models.JSONField(_("citations"), default=list)  # display numbers, as in the answer
    verdict = models.CharField(_("verdict"), max_length=24, choices=Verdict.choices)
    reason = models.TextField(_("reason"), blank=True)
    tiers = models.JSONField(_("source tiers"), default=list)
    confidence = models.FloatField(_("confidence"), default=0.0)
    web_only = models.BooleanField(_("web sources only"), default=False)
    action = models.CharField(_("shown as"), max_length=12, choices=Action.choices, default=Action.KEPT)
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices, default=Kind.FACT)

    @property
    def is_plan_heading(self) -> bool:
        """A heading that repeats the question or a sub-question: checked against the plan by
        code, kept in the answer, but no factual statement (not in the ledger or its metrics)."""
        return self.kind == self.Kind.HEADING and self.reason == PLAN_HEADING

    class Meta:
        db_table = "deep_research_claims"
        ordering = ["task", "index"]
        constraints = [models.UniqueConstraint(fields=["task", "index"], name="one_claim_per_index")]
        verbose_name = _("claim")
        verbose_name_plural = _("claim ledger")

    def __str__(self) -> str:
        return f"{self.task_id}#{self.index} {self.verdict}"


class ResearchMetrics(models.Model):
    """Quality, cost and speed figures of one finished task, kept in columns so admins can
    aggregate them by day and model."""

    task = models.OneToOneField(ResearchTask, on_delete=models.CASCADE, related_name="metrics")
    day = models.DateField(db_index=True)
    model_name = models.CharField(max_length=100, db_index=True)
    channel = models.ForeignKey("channels_app.Channel", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=ResearchTask.Status.choices)
    factual_sentences = models.PositiveIntegerField(default=0)
    cited_sentences = models.PositiveIntegerField(default=0)
    citation_coverage = models.FloatField(null=True)  # cited / factual
    unsupported_claims = models.PositiveIntegerField(default=0)
    unsupported_rate = models.FloatField(null=True)  # (unsupported + no citation + invented) / claims
    conflicts_found = models.PositiveIntegerField(default=0)
    conflicts_shown = models.PositiveIntegerField(default=0)
    conflict_disclosure = models.FloatField(null=True)  # shown / found
    citations = models.PositiveIntegerField(default=0)
    low_credibility_citations = models.PositiveIntegerField(default=0)
    low_credibility_share = models.FloatField(null=True)
    tool_calls = models.PositiveIntegerField(default=0)
    searches = models.PositiveIntegerField(default=0)
    rounds = models.PositiveIntegerField(default=0)
    tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=10, decimal_places=6, default=0)
    duration_seconds = models.FloatField(null=True)
    limit_hit = models.BooleanField(default=False)
    invalid_citations = models.PositiveIntegerField(default=0)
    # Claims-first (1.x) reports: table cells count as claims in the coverage above.
    table_cells = models.PositiveIntegerField(default=0)
    removed_from_body = models.PositiveIntegerField(default=0)
    removed_reasons = models.JSONField(default=dict, blank=True)  # {reason: count}
    conflicts_reported_by_writer = models.PositiveIntegerField(default=0)
    source_pollution_rate = models.FloatField(null=True)  # cited sources that are low-tier or flagged / cited

    class Meta:
        db_table = "deep_research_metrics"
        ordering = ["-day"]
        verbose_name = _("task metrics")
        verbose_name_plural = _("task metrics")

    def __str__(self) -> str:
        return f"metrics of {self.task_id}"


class TranscriptEntry(models.Model):
    """Every LLM request and response of a task, in order: with the steps' tool results, what a
    replay needs."""

    class Kind(models.TextChoices):
        LLM = "llm", _("Model call")

    task = models.ForeignKey(ResearchTask, on_delete=models.CASCADE, related_name="transcript")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.LLM)
    role = models.CharField(max_length=24)
    model = models.CharField(max_length=100, blank=True)
    request = models.JSONField()
    response = models.JSONField()
    seconds = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.task_id}#{self.seq} {self.kind} {self.role}"

    class Meta:
        db_table = "deep_research_transcript"
        ordering = ["task", "seq"]
        constraints = [models.UniqueConstraint(fields=["task", "seq"], name="one_transcript_entry_per_seq")]
        verbose_name = _("transcript entry")
        verbose_name_plural = _("transcript")


class AnswerFeedback(models.Model):
    """A reader's judgement of an answer: useful or not, a reported problem, or one citation
    that does not say what the answer claims."""

    class Reason(models.TextChoices):
        WRONG_FACT = "wrong_fact", _("Wrong fact")
        BAD_CITATION = "bad_citation", _("Bad or missing citation")
        MISSED_COUNTER_EVIDENCE = "missed_counter_evidence", _("Missed counter-evidence")
        TOO_LONG = "too_long", _("Too long")
        SOURCE_DOES_NOT_SAY = "source_does_not_say", _("This source does not say this")
        OTHER = "other", _("Other")

    task = models.ForeignKey(ResearchTask, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    useful = models.BooleanField(_("useful"), null=True, blank=True)
    reason = models.CharField(_("problem"), max_length=32, choices=Reason.choices, blank=True)
    citation_number = models.PositiveIntegerField(_("citation"), null=True, blank=True)
    note = models.TextField(_("note"), blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        db_table = "deep_research_feedback"
        ordering = ["-created_at"]
        constraints = [
            # One opinion per reader, answer and citation (no citation: one about the whole answer);
            # giving it again changes it. NULLS NOT DISTINCT makes "no citation" count as one value.
            models.UniqueConstraint(
                fields=["task", "user", "citation_number"],
                nulls_distinct=False,
                name="one_feedback_per_user_task_citation",
            ),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("note"), 2000), name="feedback_note_bounded"
            ),
        ]
        verbose_name = _("answer feedback")
        verbose_name_plural = _("answer feedback")

    def __str__(self) -> str:
        return f"{self.task_id}: {self.reason or ('useful' if self.useful else 'not useful')}"


class SourceKind(models.TextChoices):
    """What a source of credibility statistics is."""

    DOMAIN = "domain", _("Web domain")
    TOOL = "tool", _("Tool")


class SourceReport(models.Model):
    """Who has reported a source (a domain or a tool) as "does not say this": only a reader's
    first report of a source moves its credibility, so one account cannot push a source down
    by reporting it again and again, however many answers cite it."""

    kind = models.CharField(max_length=8, choices=SourceKind.choices)
    key = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.kind}:{self.key}"

    class Meta:
        db_table = "deep_research_source_reports"
        verbose_name = _("source report")
        verbose_name_plural = _("source reports")
        constraints = [
            models.UniqueConstraint(fields=["kind", "key", "user"], name="one_report_per_source_and_reader")
        ]


class SourceStat(models.Model):
    """How a source (a web domain, or a tool) has fared: citations that passed or failed
    verification and readers' reports. The credibility weight derived from it ranks sources."""

    Kind = SourceKind

    class Pin(models.TextChoices):
        NONE = "", _("—")
        ALLOW = "allow", _("Always allow")
        DENY = "deny", _("Never use")

    kind = models.CharField(_("kind"), max_length=8, choices=Kind.choices)
    key = models.CharField(_("domain or tool"), max_length=255)
    passed = models.PositiveIntegerField(_("citations verified"), default=0)
    failed = models.PositiveIntegerField(_("citations failed"), default=0)
    reports = models.PositiveIntegerField(_("reader reports"), default=0)
    pinned = models.CharField(_("pinned"), max_length=8, choices=Pin.choices, blank=True, default="")
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        db_table = "deep_research_source_stats"
        ordering = ["kind", "key"]
        constraints = [models.UniqueConstraint(fields=["kind", "key"], name="one_stat_per_source")]
        verbose_name = _("source credibility")
        verbose_name_plural = _("source credibility")

    def __str__(self) -> str:
        return f"{self.kind}:{self.key}"


class FailureCase(models.Model):
    """A reported answer promoted into the failure dataset: the evaluation command can run it,
    so every change to prompts or the verifier is measured against past failures."""

    task = models.ForeignKey(
        ResearchTask, null=True, blank=True, on_delete=models.SET_NULL, related_name="failure_cases"
    )
    question = models.TextField(_("question"))
    language = models.CharField(_("language"), max_length=16, default="zh-hant")
    documents = models.JSONField(
        _("channel fixture"), default=list
    )  # [{"name", "paragraphs"}]: snapshot of the cited passages
    what_was_wrong = models.TextField(_("what was wrong"))
    expected_correction = models.TextField(_("expected correction"), blank=True)
    expected_facts = models.JSONField(_("expected facts"), default=list, blank=True)
    known_conflicts = models.JSONField(_("known conflicts"), default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        db_table = "deep_research_failure_cases"
        ordering = ["-created_at"]
        verbose_name = _("failure case")
        verbose_name_plural = _("failure dataset")

    def __str__(self) -> str:
        return f"failure #{self.pk}: {self.question[:60]}"


class NotificationPreference(models.Model):
    """How a user wants to hear that a research has finished, beyond the browser's notification
    (which needs no setting: the browser asks for permission). Off until the user turns it on."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="research_notifications"
    )
    email_when_done = models.BooleanField(_("e-mail me when a research finishes"), default=False)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        db_table = "deep_research_notification_preference"
        verbose_name = _("notification preference")
        verbose_name_plural = _("notification preferences")

    def __str__(self) -> str:
        return f"{self.user_id}: e-mail {'on' if self.email_when_done else 'off'}"


class ConflictDecision(models.Model):
    """A reviewer's decision on one unresolved conflict of a research's report: which side
    prevails, or that the sources cannot settle it, and why. Append-only: a newer decision on the
    same conflict supersedes the older one for display, both are kept; the rows are the audit
    record (research does not import governance)."""

    class Decision(models.TextChoices):
        SIDE = "side", _("a side prevails")
        UNSETTLEABLE = "unsettleable", _("cannot be settled")

    task = models.ForeignKey(ResearchTask, on_delete=models.CASCADE, related_name="conflict_decisions")
    # research.services.conflict_decisions.conflict_key: a hash of the conflict's subject and sides
    conflict_key = models.CharField(_("conflict"), max_length=64)
    decision = models.CharField(_("decision"), max_length=16, choices=Decision.choices)
    side = models.PositiveSmallIntegerField(_("prevailing side"), null=True, blank=True)
    reason = models.TextField(_("reason"))
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(_("decided"), auto_now_add=True)

    class Meta:
        db_table = "deep_research_conflict_decision"
        ordering = ["-decided_at", "-pk"]
        indexes = [models.Index(fields=["task", "conflict_key"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(decision="side", side__isnull=False)
                | models.Q(decision="unsettleable", side__isnull=True),
                name="conflict_decision_side_iff_side",
            )
        ]
        verbose_name = _("conflict decision")
        verbose_name_plural = _("conflict decisions")

    def __str__(self) -> str:
        return f"{self.task_id} {self.conflict_key[:8]}: {self.decision}"


class MaterialCoverage(models.Model):
    """Whether the channel's own materials answered a completed research: the parts it was asked
    in (the plan's sub-questions, or the question as a whole when the plan had none), how many of
    them rest on at least one fact from a channel material, and which material pages its facts
    cite. Written once per research, after it completes (research.services.material_coverage);
    the teacher's dashboard reads these rows instead of the reports themselves."""

    task = models.OneToOneField(
        ResearchTask, on_delete=models.CASCADE, primary_key=True, related_name="material_coverage"
    )
    channel = models.ForeignKey("channels_app.Channel", on_delete=models.CASCADE, related_name="+")
    asked_at = models.DateTimeField(_("asked"))  # the research's created_at: the dashboard's ranges
    parts = models.PositiveSmallIntegerField(_("parts"), default=0)
    answered = models.PositiveSmallIntegerField(_("parts the materials answered"), default=0)
    # [[material id, page], …]: the channel material pages the report's facts rest on, each once.
    cited_pages = models.JSONField(_("material pages cited"), default=list, blank=True)
    recorded_at = models.DateTimeField(_("recorded"), auto_now=True)

    class Meta:
        db_table = "deep_research_material_coverage"
        indexes = [models.Index(fields=["channel", "asked_at"], name="coverage_channel_asked")]
        verbose_name = _("material coverage")
        verbose_name_plural = _("material coverage")

    def __str__(self) -> str:
        return f"{self.task_id}: {self.answered}/{self.parts}"


class MaterialGap(models.Model):
    """One part of a completed research that no channel material answered: a sub-question (the
    model's words, `by_model`) or the student's question, with its embedding and the topic it was
    grouped into (the first gap of that topic; research.topics)."""

    coverage = models.ForeignKey(MaterialCoverage, on_delete=models.CASCADE, related_name="gaps")
    channel = models.ForeignKey("channels_app.Channel", on_delete=models.CASCADE, related_name="+")
    asked_at = models.DateTimeField(_("asked"))
    part = models.SmallIntegerField(_("sub-question"))  # index into the plan; -1: the question
    text = models.TextField(_("text"))
    by_model = models.BooleanField(_("written by the AI"), default=True)
    language = models.CharField(_("language"), max_length=2)
    # Untyped, like the material chunks' (materials.vector_index): its size follows the model.
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    topic = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="members"
    )

    class Meta:
        db_table = "deep_research_material_gaps"
        ordering = ["asked_at", "pk"]
        indexes = [
            models.Index(fields=["channel", "asked_at"], name="gap_channel_asked"),
            models.Index(fields=["channel", "topic"], name="gap_channel_topic"),
        ]
        verbose_name = _("material gap")
        verbose_name_plural = _("material gaps")

    def __str__(self) -> str:
        return f"{self.coverage_id}#{self.part}: {self.text[:60]}"
