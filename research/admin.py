from django.contrib import admin

from .models import ResearchEvent, ResearchStep, ResearchTask


class ResearchStepInline(admin.TabularInline):
    model = ResearchStep
    extra = 0
    can_delete = False
    fields = ["index", "round", "phase", "tool_name", "status", "duration_ms", "result_preview"]
    readonly_fields = fields
    show_change_link = True


@admin.register(ResearchTask)
class ResearchTaskAdmin(admin.ModelAdmin):
    list_display = ["task_uuid", "user", "channel", "status", "trigger_mode", "tokens_used", "cost_usd", "limit_hit", "created_at"]
    list_filter = ["status", "trigger_mode", "limit_hit", "channel"]
    search_fields = ["task_uuid", "user__username", "user_question", "channel__slug"]
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in ResearchTask._meta.fields]
    inlines = [ResearchStepInline]


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
