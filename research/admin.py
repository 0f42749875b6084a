"""Research tasks in the admin: read-only records, scoped by role (channels_app.admin_scoping).

- platform admins: every task, step and event;
- a channel's teacher (owner) and its Super TAs: the channel's tasks in full (question, plan,
  answer, steps) — the same people the result page admits (research.selectors.visible_tasks);
- its TAs: the channel's tasks as operational records (who, status, cost, timing) without the
  question, answer or steps, which the source document reserves for the roles above.
"""

from django.contrib import admin

from channels_app.admin_scoping import CONTENT_ROLES, TA, ChannelScopedAdmin, ChannelScopedInline, is_platform_admin, request_channel_ids

from .models import ResearchEvent, ResearchStep, ResearchTask

# What a TA sees of a task: enough to follow the channel's usage, nothing the student wrote or got.
TA_FIELDS = [
    "task_uuid", "user", "channel", "status", "trigger_mode", "language", "tokens_used", "cost_usd",
    "duration_seconds", "limit_hit", "stop_reason", "created_at", "started_at", "finished_at",
]


class ResearchStepInline(ChannelScopedInline, admin.TabularInline):
    model = ResearchStep
    parent_channel_path = "channel"
    view_roles = CONTENT_ROLES
    extra = 0
    can_delete = False
    fields = ["index", "round", "phase", "tool_name", "status", "duration_ms", "result_preview"]
    readonly_fields = fields
    show_change_link = True


@admin.register(ResearchTask)
class ResearchTaskAdmin(ChannelScopedAdmin):
    view_roles = CONTENT_ROLES | {TA}
    # Nobody edits a research record; platform admins may delete one (ChannelScopedAdmin).

    list_display = ["task_uuid", "user", "channel", "status", "trigger_mode", "tokens_used", "cost_usd", "limit_hit", "created_at"]
    # Related-only: the filter lists the channels of the rows in scope, not every channel's name.
    list_filter = ["status", "trigger_mode", "limit_hit", ("channel", admin.RelatedOnlyFieldListFilter)]
    date_hierarchy = "created_at"
    inlines = [ResearchStepInline]
    list_select_related = ["user", "channel"]

    def _sees_content(self, request, obj=None) -> bool:
        if is_platform_admin(request.user):
            return True
        ids = request_channel_ids(request, CONTENT_ROLES)
        return obj.channel_id in ids if obj is not None else False

    def has_change_permission(self, request, obj=None):
        return False

    def get_fields(self, request, obj=None):
        if self._sees_content(request, obj):
            return [f.name for f in ResearchTask._meta.fields if f.name != "id"]
        return TA_FIELDS

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)

    def get_search_fields(self, request):
        if is_platform_admin(request.user):
            return ["task_uuid", "user__username", "user_question", "channel__slug"]
        return ["task_uuid", "user__username", "channel__slug"]

    def get_search_results(self, request, queryset, search_term):
        # Searching the question would let a TA probe what students asked: questions are only
        # searched in the channels where the user may read them.
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        if search_term and not is_platform_admin(request.user):
            content_ids = request_channel_ids(request, CONTENT_ROLES)
            if content_ids:
                results = results | queryset.filter(channel__in=content_ids, user_question__icontains=search_term)
        return results, may_have_duplicates

    def get_inlines(self, request, obj):
        return self.inlines if self._sees_content(request, obj) else []


class _TaskContentAdmin(ChannelScopedAdmin):
    channel_path = "task__channel"
    view_roles = CONTENT_ROLES

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

