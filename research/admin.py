from django.contrib import admin

from django.db.models import Avg, Count, Sum
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext_lazy as _

from .models import (
    AnswerFeedback,
    FailureCase,
    ResearchClaim,
    ResearchEvent,
    ResearchMetrics,
    ResearchStep,
    ResearchTask,
    SourceStat,
    TranscriptEntry,
)


class ResearchStepInline(admin.TabularInline):
    model = ResearchStep
    extra = 0
    can_delete = False
    fields = ["index", "round", "phase", "tool_name", "status", "duration_ms", "result_preview"]
    readonly_fields = fields
    show_change_link = True


class ResearchClaimInline(admin.TabularInline):
    model = ResearchClaim
    extra = 0
    can_delete = False
    fields = ["index", "text", "citations", "verdict", "tiers", "confidence", "web_only", "action"]
    readonly_fields = fields
    verbose_name_plural = _("claim ledger")


@admin.register(ResearchTask)
class ResearchTaskAdmin(admin.ModelAdmin):
    list_display = ["task_uuid", "user", "channel", "status", "trigger_mode", "tokens_used", "cost_usd", "limit_hit", "created_at"]
    list_filter = ["status", "trigger_mode", "limit_hit", "channel"]
    search_fields = ["task_uuid", "user__username", "user_question", "channel__slug"]
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in ResearchTask._meta.fields]
    inlines = [ResearchClaimInline, ResearchStepInline]


@admin.register(ResearchStep)
class ResearchStepAdmin(admin.ModelAdmin):
    list_display = ["task", "index", "round", "phase", "tool_name", "status", "duration_ms"]
    list_filter = ["phase", "status", "tool_name"]
    search_fields = ["task__task_uuid", "tool_name"]
    readonly_fields = [f.name for f in ResearchStep._meta.fields]


@admin.register(ResearchEvent)
class ResearchEventAdmin(admin.ModelAdmin):
    list_display = ["task", "seq", "type", "created_at"]
    list_filter = ["type"]
    search_fields = ["task__task_uuid", "type"]
    readonly_fields = [f.name for f in ResearchEvent._meta.fields]


class SuperuserOnlyAdmin(admin.ModelAdmin):
    """Platform-wide figures and raw transcripts are for platform admins only."""

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ResearchMetrics)
class ResearchMetricsAdmin(SuperuserOnlyAdmin):
    list_display = ["task", "day", "model_name", "status", "citation_coverage", "unsupported_rate", "conflict_disclosure",
                    "low_credibility_share", "tool_calls", "searches", "tokens", "cost_usd"]
    list_filter = ["day", "model_name", "status", "limit_hit"]
    search_fields = ["task__task_uuid", "model_name"]
    change_list_template = "admin/research/researchmetrics/change_list.html"

    def get_urls(self):
        return [path("by-day/", self.admin_site.admin_view(self.by_day_view), name="research_researchmetrics_by_day"),
                path("dashboard/", self.admin_site.admin_view(self.dashboard_view), name="research_researchmetrics_dashboard"),
                *super().get_urls()]

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
            start = date.fromisoformat(request.GET.get("start", "")) if request.GET.get("start") else today - timedelta(days=29)
            end = date.fromisoformat(request.GET.get("end", "")) if request.GET.get("end") else today
        except ValueError:
            start, end = today - timedelta(days=29), today
        rows = dashboard.figures(group=group, start=start, end=end)
        context = {
            **self.admin_site.each_context(request), "title": _("Speed and cost dashboard"), "opts": self.model._meta,
            "rows": rows, "group": group, "figure": figure, "start": start, "end": end, "groups": list(dashboard.GROUPS),
            "figures": dashboard.FIGURES, "chart": dashboard.chart(rows, figure),
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
        context = {**self.admin_site.each_context(request), "title": _("Research quality by day and model"), "rows": rows,
                   "opts": self.model._meta}
        return TemplateResponse(request, "admin/research/researchmetrics/by_day.html", context)


@admin.register(ResearchClaim)
class ResearchClaimAdmin(SuperuserOnlyAdmin):
    list_display = ["task", "index", "verdict", "confidence", "web_only", "action"]
    list_filter = ["verdict", "action", "web_only"]
    search_fields = ["task__task_uuid", "text"]


@admin.register(TranscriptEntry)
class TranscriptEntryAdmin(SuperuserOnlyAdmin):
    list_display = ["task", "seq", "kind", "role", "model", "seconds", "created_at"]
    list_filter = ["role", "model"]
    search_fields = ["task__task_uuid"]


@admin.register(AnswerFeedback)
class AnswerFeedbackAdmin(admin.ModelAdmin):
    list_display = ["task", "user", "useful", "reason", "citation_number", "created_at"]
    list_filter = ["useful", "reason"]
    search_fields = ["task__task_uuid", "note"]
    readonly_fields = ["task", "user", "useful", "reason", "citation_number", "note", "created_at"]
    actions = ["promote"]

    def has_add_permission(self, request):
        return False

    @admin.action(description=_("Promote the reported answers to the failure dataset"), permissions=["promote"])
    def promote(self, request, queryset):
        from research.services.feedback import promote_to_failure

        created = 0
        for feedback in queryset.select_related("task"):
            what = f"{feedback.get_reason_display() or _('Not useful')}: {feedback.note}".strip(": ")
            promote_to_failure(task=feedback.task, user=request.user, what_was_wrong=what)
            created += 1
        self.message_user(request, _("%(n)d failure case(s) added; edit them to add the expected correction.") % {"n": created})

    def has_promote_permission(self, request):
        return request.user.is_superuser


@admin.register(SourceStat)
class SourceStatAdmin(admin.ModelAdmin):
    list_display = ["kind", "key", "passed", "failed", "reports", "weight", "pinned"]
    list_filter = ["kind", "pinned"]
    list_editable = ["pinned"]
    search_fields = ["key"]
    readonly_fields = ["passed", "failed", "reports"]

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description=_("history factor"))
    def weight(self, obj):
        from research.services.credibility import history_factor

        return round(history_factor(obj.passed, obj.failed, obj.reports), 3)


@admin.register(FailureCase)
class FailureCaseAdmin(admin.ModelAdmin):
    list_display = ["id", "question", "language", "created_by", "created_at"]
    search_fields = ["question", "what_was_wrong"]
    readonly_fields = ["task", "created_by", "created_at"]

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser
