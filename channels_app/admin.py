"""Channels in the admin, scoped by the permissions of the role table (channels_app.roles, enforced
by admin_scoping): the channel's teachers (its owner and teacher members) change its settings and
materials; its owner its members; whoever holds channels.administer (the platform admin) creates
channels, names their owners and teachers."""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from . import materials as material_services
from .access import can
from .admin_scoping import ChannelScopedAdmin, ChannelScopedInline, GuardedModelAdmin, PlatformPermissionOnly
from .channel_settings import SYSTEM_PROMPT_MAX_CHARS, clean_domain_list
from .models import Channel, ChannelTermShare, ChatLog, GlossaryTerm, Material, MaterialChunk, Membership
from .roles import (
    CHANNEL_CONFIGURE,
    CHANNELS_ADMINISTER,
    CHATLOG_READ,
    MATERIALS_MANAGE,
    MEMBERS_MANAGE,
    RETRIEVAL_INSPECT,
)

# What a channel's teachers may change: the Deep Research section and the course text. Name, code,
# slug and owner come from the registrar (channels.administer).
TEACHER_EDITABLE = {
    "description",
    "syllabus",
    "deep_research_enabled",
    "web_tools_enabled",
    "auto_suggest_threshold",
    "system_prompt",
    "plan_review",
    "web_allowed_domains",
    "web_denied_domains",
}


# Said where a teacher appoints a Super TA: the role alone opens nothing (channels_app.access).
SUPER_TA_NDA_RULE = _(
    "A Super TA reads students' research in this channel only while a signed NDA for this channel is on file "
    "(recorded by a platform admin); until then they are an ordinary TA."
)


class UsernameField(forms.ModelChoiceField):
    """A member is named by exact username. An autocomplete would need the user list, which a
    teacher must not browse; typing a known username reveals nothing more than it already knows."""

    widget = forms.TextInput

    def __init__(self, **kwargs):
        kwargs.setdefault("queryset", get_user_model().objects.filter(is_active=True))
        kwargs.setdefault("to_field_name", "username")
        kwargs.setdefault("error_messages", {"invalid_choice": _("No active user has this username.")})
        super().__init__(**kwargs)


class MembershipForm(forms.ModelForm):
    user = UsernameField(label=_("username"))

    class Meta:
        model = Membership
        fields = ["user", "role"]

    # Set by the formset/admin: whether the editing user may make or unmake teachers.
    may_grant_teacher = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "role" in self.fields:
            self.fields["role"].help_text = SUPER_TA_NDA_RULE
        if self.instance.pk:  # show (and compare against) the username, not the user's id
            self.initial["user"] = self.instance.user.username

    def clean(self):
        cleaned = super().clean()
        if self.may_grant_teacher:
            return cleaned
        # A channel's owner manages TAs, Super TAs and students. The teacher role means unlimited
        # quota (a cost defence), so only channels.administer grants or takes it away.
        initial_role = self.instance.role if self.instance.pk else None
        if initial_role == Membership.Role.TEACHER and self.has_changed():
            raise ValidationError(_("Only platform admins can change a teacher's membership."))
        if cleaned.get("role") == Membership.Role.TEACHER and initial_role != Membership.Role.TEACHER:
            raise ValidationError(_("Only platform admins can make someone a teacher of a channel."))
        return cleaned


class MembershipFormSet(BaseInlineFormSet):
    may_grant_teacher = True

    def _construct_form(self, i, **kwargs):
        form = super()._construct_form(i, **kwargs)
        form.may_grant_teacher = self.may_grant_teacher
        return form

    def clean(self):
        super().clean()
        if self.may_grant_teacher:
            return
        for form in self.deleted_forms:
            if form.instance.pk and form.instance.role == Membership.Role.TEACHER:
                raise ValidationError(_("Only platform admins can remove a teacher from a channel."))


class MembershipInline(ChannelScopedInline, admin.TabularInline):
    model = Membership
    form = MembershipForm
    formset = MembershipFormSet
    extra = 0
    view_permission = change_permission = add_permission = delete_permission = MEMBERS_MANAGE

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        formset.may_grant_teacher = can(request.user, CHANNELS_ADMINISTER)
        return formset


class ChannelAdminForm(forms.ModelForm):
    """The admin edits the same fields as the teacher's settings page, so it checks them the same
    way (channel_settings.py): domain lists that the web tools can match, a system prompt within
    its limit. Without this the admin stored what the settings page refuses."""

    system_prompt = forms.CharField(
        label=_("System prompt and usage note"),
        required=False,
        max_length=SYSTEM_PROMPT_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 6}),
    )

    class Meta:
        model = Channel
        # The admin's fieldsets decide the form's fields; these are the ones checked here.
        fields = ["web_allowed_domains", "web_denied_domains", "system_prompt"]

    def clean_web_allowed_domains(self):
        return clean_domain_list(self.cleaned_data.get("web_allowed_domains", ""))

    def clean_web_denied_domains(self):
        return clean_domain_list(self.cleaned_data.get("web_denied_domains", ""))


@admin.register(Channel)
class ChannelAdmin(ChannelScopedAdmin):
    form = ChannelAdminForm
    channel_path = ""
    view_permission = change_permission = CHANNEL_CONFIGURE
    add_permission = delete_permission = CHANNELS_ADMINISTER

    list_display = ["name", "slug", "course_code", "owner", "deep_research_enabled", "web_tools_enabled"]
    list_filter = ["deep_research_enabled", "web_tools_enabled"]
    search_fields = ["name", "slug", "course_code", "owner__username"]
    inlines = [MembershipInline]
    fieldsets = [
        (None, {"fields": ["name", "slug", "course_code", "owner", "description", "syllabus"]}),
        (
            _("Deep Research"),
            {
                "fields": [
                    "deep_research_enabled",
                    "web_tools_enabled",
                    "auto_suggest_threshold",
                    "plan_review",
                    "web_allowed_domains",
                    "web_denied_domains",
                    "system_prompt",
                ]
            },
        ),
    ]

    def get_readonly_fields(self, request, obj=None):
        if can(request.user, CHANNELS_ADMINISTER):
            return []
        return [name for name in ("name", "slug", "course_code", "owner") if name not in TEACHER_EDITABLE]

    def get_prepopulated_fields(self, request, obj=None):
        return {"slug": ["name"]} if can(request.user, CHANNELS_ADMINISTER) else {}

    def get_autocomplete_fields(self, request):
        return ["owner"] if can(request.user, CHANNELS_ADMINISTER) else []


@admin.register(Membership)
class MembershipAdmin(ChannelScopedAdmin):
    view_permission = change_permission = add_permission = delete_permission = MEMBERS_MANAGE

    form = MembershipForm
    list_display = ["user", "channel", "role", "joined_at"]
    list_filter = ["role"]
    search_fields = ["user__username", "channel__slug", "channel__name"]
    fields = ["channel", "user", "role"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.may_grant_teacher = can(request.user, CHANNELS_ADMINISTER)
        return form

    def has_delete_permission(self, request, obj=None):
        # The teacher membership goes with channels.administer, like the ownership.
        if (
            obj is not None
            and obj.role == Membership.Role.TEACHER
            and not can(request.user, CHANNELS_ADMINISTER)
        ):
            return False
        return super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs, request):
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        if not can(request.user, CHANNELS_ADMINISTER) and any(
            m.role == Membership.Role.TEACHER for m in objs
        ):
            perms_needed = {*perms_needed, str(Membership._meta.verbose_name)}
        return deleted, model_count, perms_needed, protected


@admin.register(ChatLog)
class ChatLogAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    """The chat log is research data and a record of what was said: chatlog.read reads it (and may
    delete a row), nobody edits it."""

    platform_permission = CHATLOG_READ

    list_display = ["id", "channel", "user", "kind", "type", "bloom_level", "bloom_attempts", "created_at"]
    list_filter = ["kind", "type", "bloom_level", "channel"]
    search_fields = ["content", "user__username", "channel__slug"]
    date_hierarchy = "created_at"

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in ChatLog._meta.fields]

    def has_add_permission(self, request, *args):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class MaterialAddForm(forms.ModelForm):
    """The admin's upload form: a channel and a file; everything else comes from the service."""

    upload = forms.FileField(label=_("File"), allow_empty_file=True, help_text=_("PDF, DOCX or PPTX."))

    class Meta:
        model = Material
        fields = ["channel"]


@admin.register(Material)
class MaterialAdmin(ChannelScopedAdmin):
    """A channel's teachers upload, check and re-index its materials, as on the materials page."""

    channel_path = "channel"
    view_permission = change_permission = add_permission = delete_permission = MATERIALS_MANAGE

    list_display = [
        "original_name",
        "channel",
        "kind",
        "status",
        "error_code",
        "unit_count",
        "chunk_count",
        "size_bytes",
        "created_at",
    ]
    list_filter = ["status", "kind", "error_code", "channel"]
    search_fields = ["original_name", "sha256", "channel__slug", "channel__name"]
    list_select_related = ["channel"]
    autocomplete_fields = ["channel"]
    actions = ["reindex"]
    readonly_fields = [
        "channel",
        "original_name",
        "kind",
        "file",
        "size_bytes",
        "sha256",
        "status",
        "error_code",
        "error",
        "unit_count",
        "chunk_count",
        "embedding_model",
        "uploaded_by",
        "created_at",
        "indexed_at",
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
            self.message_user(
                request,
                gettext("This file is already in the channel; the existing material is shown."),
                messages.WARNING,
            )
        elif material.status == Material.Status.FAILED:
            self.message_user(
                request,
                gettext("The file cannot be indexed: %(error)s") % {"error": material.error},
                messages.ERROR,
            )

    @admin.action(description=_("Re-index selected materials"))
    def reindex(self, request, queryset):
        queued = sum(1 for material in queryset if material_services.material_reindex(material))
        self.message_user(
            request,
            ngettext(
                "%(count)d material queued for indexing.", "%(count)d materials queued for indexing.", queued
            )
            % {"count": queued},
        )
        skipped = queryset.count() - queued
        if skipped:
            self.message_user(
                request,
                gettext("%(count)d refused uploads have no stored file and were skipped.")
                % {"count": skipped},
                messages.WARNING,
            )


@admin.register(MaterialChunk)
class MaterialChunkAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    """Read-only: chunks are written by the indexing job only."""

    platform_permission = RETRIEVAL_INSPECT

    list_display = ["material", "ordinal", "page", "preview", "embedding_model", "embedding_dim"]
    list_filter = ["embedding_model", "embedding_dim"]
    search_fields = ["text", "material__original_name"]
    list_select_related = ["material", "material__channel"]
    fields = [
        "material",
        "channel",
        "ordinal",
        "page",
        "text",
        "search_text",
        "embedding_model",
        "embedding_dim",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("embedding", "search_vector")

    @admin.display(description=_("text"))
    def preview(self, obj):
        return obj.text[:120]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ChannelTermShare)
class ChannelTermShareAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    """Read-only: written by indexing (materials.term_shares); shown to explain a search."""

    platform_permission = RETRIEVAL_INSPECT

    list_display = ["channel", "lexeme", "share"]
    list_filter = [("channel", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["lexeme"]
    list_select_related = ["channel"]
    ordering = ["channel", "-share"]
    fields = ["channel", "lexeme", "share"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(GlossaryTerm)
class GlossaryTermAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    """Read-only: mined by indexing (materials.glossary); shown to explain a bilingual search."""

    platform_permission = RETRIEVAL_INSPECT

    list_display = ["zh", "en", "channel", "material"]
    list_filter = [("channel", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["zh", "en"]
    list_select_related = ["channel", "material"]
    fields = ["channel", "material", "zh", "en"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
