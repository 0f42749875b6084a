from django.contrib import admin

from django.db.models import Avg, Count, Sum
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext_lazy as _

from .models import ResearchClaim, ResearchEvent, ResearchMetrics, ResearchStep, ResearchTask, TranscriptEntry


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
                *super().get_urls()]

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
