from django import forms
from django.contrib import admin, messages
from django.utils.translation import gettext as _, gettext_lazy, ngettext

from . import materials as material_services
from .models import Channel, ChatLog, Material, MaterialChunk, Membership


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


class MaterialAddForm(forms.ModelForm):
    """The admin's upload form: a channel and a file; everything else comes from the service."""

    upload = forms.FileField(label=gettext_lazy("File"), allow_empty_file=True, help_text=gettext_lazy("PDF, DOCX or PPTX."))

    class Meta:
        model = Material
        fields = ["channel"]


@admin.register(Material)
class MaterialAdmin(admin.ModelAdmin):
    list_display = ["original_name", "channel", "kind", "status", "error_code", "unit_count", "chunk_count", "size_bytes", "created_at"]
    list_filter = ["status", "kind", "error_code", "channel"]
    search_fields = ["original_name", "sha256", "channel__slug", "channel__name"]
    list_select_related = ["channel"]
    autocomplete_fields = ["channel"]
    actions = ["reindex"]
    readonly_fields = [
        "channel", "original_name", "kind", "file", "size_bytes", "sha256", "status", "error_code", "error",
        "unit_count", "chunk_count", "embedding_model", "uploaded_by", "created_at", "indexed_at",
    ]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = MaterialAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else []

    def get_fields(self, request, obj=None):
        return ["channel", "upload"] if obj is None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            return
        # Uploads go through the same service as the channel page (hash, checks, indexing job).
        # Re-uploading known content returns the existing material, which the admin then shows.
        material, created = material_services.material_upload(
            channel=form.cleaned_data["channel"], user=request.user, uploaded_file=form.cleaned_data["upload"]
        )
        obj.pk = material.pk
        obj.refresh_from_db()
        if not created:
            self.message_user(request, _("This file is already in the channel; the existing material is shown."), messages.WARNING)
        elif material.status == Material.Status.FAILED:
            self.message_user(request, _("The file cannot be indexed: %(error)s") % {"error": material.error}, messages.ERROR)

    @admin.action(description=gettext_lazy("Re-index selected materials"))
    def reindex(self, request, queryset):
        queued = sum(1 for material in queryset if material_services.material_reindex(material))
        self.message_user(request, ngettext("%(count)d material queued for indexing.", "%(count)d materials queued for indexing.", queued) % {"count": queued})
        skipped = queryset.count() - queued
        if skipped:
            self.message_user(request, _("%(count)d refused uploads have no stored file and were skipped.") % {"count": skipped}, messages.WARNING)


@admin.register(MaterialChunk)
class MaterialChunkAdmin(admin.ModelAdmin):
    """Read-only: chunks are written by the indexing job only."""

    list_display = ["material", "ordinal", "page", "preview", "embedding_model", "embedding_dim"]
    list_filter = ["embedding_model", "embedding_dim"]
    search_fields = ["text", "material__original_name"]
    list_select_related = ["material", "material__channel"]
    fields = ["material", "channel", "ordinal", "page", "text", "search_text", "embedding_model", "embedding_dim"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("embedding", "search_vector")

    @admin.display(description=gettext_lazy("text"))
    def preview(self, obj):
        return obj.text[:120]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
