from django.contrib import admin

from .models import Channel, ChatLog, Membership


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "course_code", "owner", "deep_research_enabled", "web_tools_enabled"]
    list_filter = ["deep_research_enabled", "web_tools_enabled"]
    search_fields = ["name", "slug", "course_code", "owner__username"]
    prepopulated_fields = {"slug": ["name"]}
    autocomplete_fields = ["owner"]
    inlines = [MembershipInline]
    fieldsets = [
        (None, {"fields": ["name", "slug", "course_code", "owner", "description", "syllabus"]}),
        ("Deep Research", {"fields": ["deep_research_enabled", "web_tools_enabled", "auto_suggest_threshold", "system_prompt"]}),
    ]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "channel", "role", "joined_at"]
    list_filter = ["role", "channel"]
    search_fields = ["user__username", "channel__slug", "channel__name"]
    autocomplete_fields = ["user", "channel"]


@admin.register(ChatLog)
class ChatLogAdmin(admin.ModelAdmin):
    list_display = ["id", "channel", "user", "kind", "type", "bloom_level", "created_at"]
    list_filter = ["kind", "type", "bloom_level", "channel"]
    search_fields = ["content", "user__username", "channel__slug"]
    raw_id_fields = ["in_reply_to", "deep_research_task"]
    readonly_fields = ["created_at"]
    date_hierarchy = "created_at"
