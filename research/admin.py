"""Research tasks in the admin: read-only records, scoped by the permissions of the role table
(channels_app.roles, enforced by channels_app.admin_scoping).

- research.read_results (the channel's owner, its Super TAs with an NDA on file, platform admins):
  the channel's tasks in full (question, plan, answer, steps, events), the same people the result
  page admits (research.selectors.visible_tasks);
- research.read_records only (teacher members, TAs, Super TAs without an NDA): the channel's tasks
  as operational records (who, status, cost, timing) without the question, answer or steps;
- research.audit, sources.manage, failures.manage, notifications.read: the platform's records.
"""

from django.contrib import admin
from django.db.models import Avg, Count, Sum
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext_lazy as _

from agent.engine.vocabulary import LIMITS
from channels_app.access import can, can_everywhere
from channels_app.admin_scoping import (
    ChannelScopedAdmin,
    ChannelScopedInline,
    GuardedModelAdmin,
    PlatformPermissionOnly,
    ReadOnlyRecords,
    request_channel_ids,
)
from channels_app.roles import (
    FAILURES_MANAGE,
    NOTIFICATIONS_READ,
    RESEARCH_AUDIT,
    RESEARCH_READ_RECORDS,
    RESEARCH_READ_RESULTS,
    RESEARCH_REVIEW,
    SOURCES_MANAGE,
)

from . import vocabulary_labels
from .models import (
    AnswerFeedback,
    FailureCase,
    MaterialCoverage,
    MaterialGap,
    NotificationPreference,
    ResearchClaim,
    ResearchEvent,
    ResearchMetrics,
    ResearchStep,
    ResearchTask,
    SourceReport,
    SourceStat,
    TranscriptEntry,
)

# What a TA sees of a task: enough to follow the channel's usage, nothing the student wrote or got.
TA_FIELDS = [
    "task_uuid",
    "user",
    "channel",
    "status",
    "trigger_mode",
    "language",
    "tokens_used",
    "cost_usd",
    "duration_seconds",
    "limit_hit",
    "stop_reason",
    "created_at",
    "started_at",
    "finished_at",
]


class ResearchStepInline(ChannelScopedInline, admin.TabularInline):
    model = ResearchStep
    parent_channel_path = "channel"
    view_permission = RESEARCH_READ_RESULTS
    extra = 0
    can_delete = False
    fields = ["index", "round", "phase", "tool_name", "status", "duration_ms", "result_preview"]
    readonly_fields = fields
    show_change_link = True


class ResearchClaimInline(ChannelScopedInline, admin.TabularInline):
    model = ResearchClaim
    parent_channel_path = "channel"
    view_permission = RESEARCH_READ_RESULTS
    extra = 0
    can_delete = False
    fields = ["index", "text", "citations", "verdict", "tiers", "confidence", "web_only", "action"]
    readonly_fields = fields
    verbose_name_plural = _("claim ledger")


class LimitHitFilter(admin.AllValuesFieldListFilter):
    """The limit codes in the rows, as Django lists them, each worded by the vocabulary, and the
    blank one named: Django links a blank value with no text at all, a link no screen reader can
    name (WCAG 2.4.4)."""

    def choices(self, changelist):
        for choice in super().choices(changelist):
            display = str(choice["display"])
            code, sep, count = display.partition(" (")  # " (3)" when the admin shows facet counts
            if code == "":
                choice["display"] = _("no limit hit") + display
            elif code in LIMITS:
                choice["display"] = vocabulary_labels.text(LIMITS, code) + (sep + count if sep else "")
            yield choice


@admin.register(ResearchTask)
class ResearchTaskAdmin(ChannelScopedAdmin):
    view_permission = RESEARCH_READ_RECORDS
    # Nobody edits a research record; research.review may write the reviewer note of a task
    # flagged for review; records.manage may delete one (ChannelScopedAdmin's default).

    list_display = [
        "task_uuid",
        "user",
        "channel",
        "status",
        "trigger_mode",
        "tokens_used",
        "cost_usd",
        "limit_hit",
        "created_at",
    ]
    # Related-only: the filter lists the channels of the rows in scope, not every channel's name.
    list_filter = [
        "status",
        "trigger_mode",
        "needs_review",
        ("limit_hit", LimitHitFilter),
        ("channel", admin.RelatedOnlyFieldListFilter),
    ]
    date_hierarchy = "created_at"
    inlines = [ResearchClaimInline, ResearchStepInline]
    list_select_related = ["user", "channel"]

    def _sees_content(self, request, obj=None) -> bool:
        if obj is None:
            return can_everywhere(request.user, RESEARCH_READ_RESULTS)
        return obj.channel_id in request_channel_ids(request, RESEARCH_READ_RESULTS)

    def has_change_permission(self, request, obj=None):
        # Only the reviewer note is ever editable, by those who may review the task.
        if obj is None:
            return request.user.is_staff and can(request.user, RESEARCH_REVIEW)
        return (
            request.user.is_staff
            and obj.needs_review
            and obj.channel_id in request_channel_ids(request, RESEARCH_REVIEW)
        )

    def get_fields(self, request, obj=None):
        if self._sees_content(request, obj):
            return [f.name for f in ResearchTask._meta.fields if f.name != "id"]
        return TA_FIELDS

    def get_readonly_fields(self, request, obj=None):
        fields = self.get_fields(request, obj)
        if obj is not None and self.has_change_permission(request, obj):
            return [f for f in fields if f != "review_note"]
        return fields

    def save_model(self, request, obj, form, change):
        from research.services.review import add_review_note

        if change and "review_note" in form.changed_data:
            add_review_note(task=obj, user=request.user, note=obj.review_note)

    def get_search_fields(self, request):
        if can_everywhere(request.user, RESEARCH_READ_RESULTS):
            return ["task_uuid", "user__username", "user_question", "channel__slug"]
        return ["task_uuid", "user__username", "channel__slug"]

    def get_search_results(self, request, queryset, search_term):
        # Searching the question would let a TA probe what students asked: questions are only
        # searched in the channels where the user may read them.
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        if search_term and not can_everywhere(request.user, RESEARCH_READ_RESULTS):
            content_ids = request_channel_ids(request, RESEARCH_READ_RESULTS)
            if content_ids:
                results = results | queryset.filter(
                    channel__in=content_ids, user_question__icontains=search_term
                )
        return results, may_have_duplicates

    def get_inlines(self, request, obj):
        return self.inlines if self._sees_content(request, obj) else []


class _TaskContentAdmin(ChannelScopedAdmin):
    channel_path = "task__channel"
    view_permission = RESEARCH_READ_RESULTS

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields]


@admin.register(ResearchStep)
class ResearchStepAdmin(_TaskContentAdmin):
    list_display = ["task", "index", "round", "phase", "tool_name", "status", "duration_ms"]
    list_filter = ["phase", "status", "tool_name"]
    search_fields = ["task__task_uuid", "tool_name"]
    list_select_related = ["task"]


@admin.register(ResearchEvent)
class ResearchEventAdmin(_TaskContentAdmin):
    list_display = ["task", "seq", "type", "created_at"]
    list_filter = ["type"]
    search_fields = ["task__task_uuid", "type"]
    list_select_related = ["task"]


@admin.register(MaterialCoverage)
class MaterialCoverageAdmin(_TaskContentAdmin):
    """Read-only: written once per completed research (research.services.material_coverage) for
    the teacher's dashboard; shown to explain its figures."""

    channel_path = "channel"
    list_display = ["task", "channel", "asked_at", "answered", "parts"]
    list_select_related = ["task", "channel"]
    search_fields = ["task__task_uuid"]


@admin.register(MaterialGap)
class MaterialGapAdmin(_TaskContentAdmin):
    """Read-only: the parts of a research no channel material answered, as the dashboard groups them."""

    channel_path = "channel"
    list_display = ["text", "channel", "asked_at", "by_model", "language"]
    list_select_related = ["channel"]
    search_fields = ["text"]
    exclude = ["embedding"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.fields if f.name != "embedding"]


class AuditRecordsAdmin(ReadOnlyRecords, PlatformPermissionOnly, GuardedModelAdmin):
    """Platform-wide figures and raw transcripts: research.audit reads them, nobody edits them."""

    platform_permission = RESEARCH_AUDIT


@admin.register(ResearchMetrics)
class ResearchMetricsAdmin(AuditRecordsAdmin):
    list_display = [
        "task",
        "day",
        "model_name",
        "status",
        "citation_coverage",
        "unsupported_rate",
        "conflict_disclosure",
        "low_credibility_share",
        "tool_calls",
        "searches",
        "tokens",
        "cost_usd",
    ]
    list_filter = ["day", "model_name", "status", "limit_hit"]
    search_fields = ["task__task_uuid", "model_name"]
    change_list_template = "admin/research/researchmetrics/change_list.html"

    def get_urls(self):
        return [
            path(
                "by-day/",
                self.admin_site.admin_view(self.by_day_view),
                name="research_researchmetrics_by_day",
            ),
            path(
                "dashboard/",
                self.admin_site.admin_view(self.dashboard_view),
                name="research_researchmetrics_dashboard",
            ),
            *super().get_urls(),
        ]

    def dashboard_view(self, request):
        """Speed and cost per day, model or channel, with a server-drawn chart of one figure."""
        from datetime import date, timedelta

        from django.core.exceptions import PermissionDenied
        from django.utils import timezone

        from research import dashboard

        if not self.has_view_permission(request):
            raise PermissionDenied
        group = request.GET.get("group", "day")
        figure = request.GET.get("figure", "mean_duration")
        if group not in dashboard.GROUPS:
            group = "day"
        if figure not in dict(dashboard.FIGURES):
            figure = "mean_duration"
        today = timezone.localdate()
        try:
            start = (
                date.fromisoformat(request.GET.get("start", ""))
                if request.GET.get("start")
                else today - timedelta(days=29)
            )
            end = date.fromisoformat(request.GET.get("end", "")) if request.GET.get("end") else today
        except ValueError:
            start, end = today - timedelta(days=29), today
        rows = dashboard.figures(group=group, start=start, end=end)
        context = {
            **self.admin_site.each_context(request),
            "title": _("Speed and cost dashboard"),
            "opts": self.model._meta,
            "rows": rows,
            "group": group,
            "figure": figure,
            "start": start,
            "end": end,
            "groups": list(dashboard.GROUPS),
            "figures": dashboard.FIGURES,
            "chart": dashboard.chart(rows, figure),
        }
        return TemplateResponse(request, "admin/research/researchmetrics/dashboard.html", context)

    def by_day_view(self, request):
        if not self.has_view_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        rows = (
            ResearchMetrics.objects.values("day", "model_name")
            .annotate(
                tasks=Count("id"),
                coverage=Avg("citation_coverage"),
                unsupported=Avg("unsupported_rate"),
                disclosure=Avg("conflict_disclosure"),
                low_credibility=Avg("low_credibility_share"),
                tool_calls=Avg("tool_calls"),
                searches=Avg("searches"),
                tokens=Avg("tokens"),
                cost=Sum("cost_usd"),
            )
            .order_by("-day", "model_name")
        )
        context = {
            **self.admin_site.each_context(request),
            "title": _("Research quality by day and model"),
            "rows": rows,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/research/researchmetrics/by_day.html", context)


@admin.register(ResearchClaim)
class ResearchClaimAdmin(AuditRecordsAdmin):
    list_display = ["task", "index", "verdict", "confidence", "web_only", "action"]
    list_filter = ["verdict", "action", "web_only"]
    search_fields = ["task__task_uuid", "text"]


@admin.register(TranscriptEntry)
class TranscriptEntryAdmin(AuditRecordsAdmin):
    list_display = ["task", "seq", "kind", "role", "model", "seconds", "created_at"]
    list_filter = ["role", "model"]
    search_fields = ["task__task_uuid"]


@admin.register(AnswerFeedback)
class AnswerFeedbackAdmin(ChannelScopedAdmin):
    """Feedback on answers: visible to those who review the channel's research; promoting a report
    to the failure dataset needs failures.manage."""

    channel_path = "task__channel"
    view_permission = RESEARCH_REVIEW

    list_display = ["task", "user", "useful", "reason", "citation_number", "created_at"]
    list_filter = ["useful", "reason"]
    search_fields = ["task__task_uuid", "note"]
    readonly_fields = ["task", "user", "useful", "reason", "citation_number", "note", "created_at"]
    actions = ["promote"]

    def has_add_permission(self, request):
        return False

    @admin.action(
        description=_("Promote the reported answers to the failure dataset"), permissions=["promote"]
    )
    def promote(self, request, queryset):
        from research.services.feedback import promote_to_failure

        created = 0
        for feedback in queryset.select_related("task"):
            what = f"{feedback.get_reason_display() or _('Not useful')}: {feedback.note}".strip(": ")
            promote_to_failure(task=feedback.task, user=request.user, what_was_wrong=what)
            created += 1
        self.message_user(
            request,
            _("%(n)d failure case(s) added; edit them to add the expected correction.") % {"n": created},
        )

    def has_promote_permission(self, request):
        return can(request.user, FAILURES_MANAGE)


@admin.register(SourceStat)
class SourceStatAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    platform_permission = SOURCES_MANAGE
    list_display = ["kind", "key", "passed", "failed", "reports", "weight", "pinned"]
    list_filter = ["kind", "pinned"]
    list_editable = ["pinned"]
    search_fields = ["key"]
    readonly_fields = ["passed", "failed", "reports"]

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description=_("history factor"))
    def weight(self, obj):
        from research.services.credibility import history_factor

        return round(history_factor(obj.passed, obj.failed, obj.reports), 3)


@admin.register(SourceReport)
class SourceReportAdmin(ReadOnlyRecords, PlatformPermissionOnly, GuardedModelAdmin):
    """Who reported which source: each reader moves a source's credibility once."""

    platform_permission = SOURCES_MANAGE

    list_display = ["kind", "key", "user", "created_at"]
    list_filter = ["kind"]
    search_fields = ["key", "user__username"]


@admin.register(FailureCase)
class FailureCaseAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    platform_permission = FAILURES_MANAGE
    list_display = ["id", "question", "language", "created_by", "created_at"]
    search_fields = ["question", "what_was_wrong"]
    readonly_fields = ["task", "created_by", "created_at"]

    def has_add_permission(self, request, *args):
        return False  # cases come from reported answers (the feedback admin's action)


@admin.register(NotificationPreference)
class NotificationPreferenceAdmin(ReadOnlyRecords, PlatformPermissionOnly, GuardedModelAdmin):
    """Who asked to be e-mailed when a research finishes: the user sets it on their own page."""

    platform_permission = NOTIFICATIONS_READ

    list_display = ("user", "email_when_done", "updated_at")
    list_filter = ("email_when_done",)
