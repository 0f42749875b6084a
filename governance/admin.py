"""Governance in the admin.

- Platform admins manage studies, researchers and their agreements, Super TA NDAs and consent
  withdrawals, and read consent periods and the export audit log (which nobody edits or deletes).
- A researcher (a user listed on a study: the role is the study membership, no group needed)
  sees only the studies they belong to, read-only, and each one's export screen.
- A teacher reads the consent periods of the channels they own. Withdrawals stay with platform
  admins: a teacher who knew who withdrew could pressure them (the IRB's concern).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from django import forms
from django.contrib import admin, messages
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from channels_app.admin_scoping import OWNER, ChannelScopedAdmin, PlatformAdminOnly, ReadOnlyRecords, is_platform_admin
from uedu_dr.errors import ServiceError

from . import export
from .models import ChannelConsent, ConsentWithdrawal, ExportAudit, Study, StudyResearcher, SuperTaNda


def _studies_of(user):
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Study.objects.none()
    return Study.objects.filter(researchers__user=user).distinct()


class StudyResearcherInline(admin.TabularInline):
    model = StudyResearcher
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "agreement_signed_on", "added_at"]
    readonly_fields = ["added_at"]

    # The study's researchers may see who else is on it; only platform admins change the list.
    def has_view_permission(self, request, obj=None):
        return is_platform_admin(request.user) or (obj is not None and _studies_of(request.user).filter(pk=obj.pk).exists())

    def has_change_permission(self, request, obj=None):
        return is_platform_admin(request.user)

    def has_add_permission(self, request, obj=None):
        return is_platform_admin(request.user)

    def has_delete_permission(self, request, obj=None):
        return is_platform_admin(request.user)


class ExportForm(forms.Form):
    date_from = forms.DateField(label=_("From (inclusive)"), widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("To (inclusive)"), widget=forms.DateInput(attrs={"type": "date"}))
    format = forms.ChoiceField(
        label=_("Format"), choices=[("both", _("CSV and JSONL")), ("csv", _("CSV")), ("jsonl", _("JSONL"))], initial="both"
    )


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["protocol_number", "title", "status", "approved_from", "approved_to", "export_link"]
    list_filter = ["status"]
    search_fields = ["protocol_number", "title"]
    filter_horizontal = ["channels"]
    # pseudonym_key is not editable and is never listed here: it must never be displayed.
    fields = ["protocol_number", "title", "status", "approved_from", "approved_to", "channels"]
    inlines = [StudyResearcherInline]
    actions = ["export_data"]

    # ------------------------------------------------------------------ scope

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset if is_platform_admin(request.user) else queryset.filter(pk__in=_studies_of(request.user))

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None:  # out of scope looks exactly like absent
            raise Http404("No such study.")
        return obj

    def _is_researcher(self, request, obj=None) -> bool:
        studies = _studies_of(request.user)
        return studies.filter(pk=obj.pk).exists() if obj is not None else studies.exists()

    def has_module_permission(self, request):
        return is_platform_admin(request.user) or self._is_researcher(request)

    def has_view_permission(self, request, obj=None):
        return is_platform_admin(request.user) or self._is_researcher(request, obj)

    def has_change_permission(self, request, obj=None):
        return is_platform_admin(request.user)

    def has_add_permission(self, request):
        return is_platform_admin(request.user)

    def has_delete_permission(self, request, obj=None):
        return is_platform_admin(request.user)

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not is_platform_admin(request.user):
            actions.pop("delete_selected", None)
        return actions

    # ------------------------------------------------------------------ export

    @admin.display(description=_("export"))
    def export_link(self, obj):
        return format_html('<a href="{}">{}</a>', reverse("admin:governance_study_export", args=[obj.pk]), gettext("Export data"))

    @admin.action(description=_("Export research data of the selected study"))
    def export_data(self, request, queryset):
        # An export is of one study; the action leads to that study's export screen.
        if queryset.count() != 1:
            self.message_user(request, gettext("Select exactly one study to export."), messages.WARNING)
            return None
        return HttpResponseRedirect(reverse("admin:governance_study_export", args=[queryset.get().pk]))

    def get_urls(self):
        return [
            path("<int:study_id>/export/", self.admin_site.admin_view(self.export_view), name="governance_study_export"),
            *super().get_urls(),
        ]

    def export_view(self, request, study_id: int):
        study = self.get_object(request, str(study_id))  # 404 outside the user's studies
        if not self.has_view_permission(request, study):
            raise Http404("No such study.")
        form = ExportForm(request.POST or None, initial={"date_from": study.approved_from, "date_to": study.approved_to})
        status = 200
        if request.method == "POST" and form.is_valid():
            try:
                return self._export_response(request, study, form.cleaned_data)
            except ServiceError as error:
                form.add_error(None, error.message)
                status = error.status
        signed = StudyResearcher.objects.filter(study=study, user=request.user).values_list("agreement_signed_on", flat=True).first()
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Export research data: %(protocol)s") % {"protocol": study.protocol_number},
            "opts": self.model._meta,
            "original": study,
            "study": study,
            "form": form,
            "agreement_signed_on": signed,
            "channels": study.channels.order_by("slug"),
        }
        return TemplateResponse(request, "admin/governance/study/export.html", context, status=status)

    def _export_response(self, request, study: Study, data: dict) -> FileResponse:
        """Export into a private temporary folder, zip the files (with a manifest of their
        hashes) into a temporary file on disk and stream it; nothing stays on the server and
        no export, however large, is held in memory."""
        with tempfile.TemporaryDirectory(prefix="uedu-export-") as tmp:
            result = export.export_study(
                requester=request.user,
                study=study,
                date_from=data["date_from"],
                date_to=data["date_to"],
                fmt=data["format"],
                out_dir=Path(tmp),
                destination="admin download",
            )
            archive = export.write_zip(result)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", study.protocol_number).strip("-")
        name = f"uedu-{slug}-{data['date_from']:%Y%m%d}-{data['date_to']:%Y%m%d}.zip"
        # FileResponse reads the file in blocks and closes it (and so removes it) when done.
        response = FileResponse(archive, as_attachment=True, filename=name, content_type="application/zip")
        response["X-Export-Audit-Id"] = str(result.audit.pk)
        return response


@admin.register(StudyResearcher)
class StudyResearcherAdmin(PlatformAdminOnly, admin.ModelAdmin):
    """Every study's researchers and their agreements in one list (edited on the study too)."""

    list_display = ["user", "study", "agreement_signed_on", "added_at"]
    list_filter = ["study"]
    search_fields = ["user__username", "study__protocol_number"]
    autocomplete_fields = ["user"]


@admin.register(SuperTaNda)
class SuperTaNdaAdmin(PlatformAdminOnly, admin.ModelAdmin):
    list_display = ["user", "signed_on", "recorded_at"]
    search_fields = ["user__username"]
    autocomplete_fields = ["user"]


@admin.register(ChannelConsent)
class ChannelConsentAdmin(ReadOnlyRecords, ChannelScopedAdmin):
    """Written by the Deep Research switch (consent.py); read here, never edited."""

    view_roles = {OWNER}
    list_display = ["channel", "framework", "started_at", "ended_at"]
    list_filter = ["framework"]
    search_fields = ["channel__slug", "channel__name"]

    def get_readonly_fields(self, request, obj=None):
        return ["channel", "framework", "started_at", "ended_at"]


@admin.register(ConsentWithdrawal)
class ConsentWithdrawalAdmin(PlatformAdminOnly, admin.ModelAdmin):
    list_display = ["user", "channel", "withdrawn_at", "recorded_by"]
    search_fields = ["user__username", "channel__slug"]
    autocomplete_fields = ["user", "channel"]
    fields = ["user", "channel", "withdrawn_at", "note", "recorded_by"]
    readonly_fields = ["recorded_by"]

    # A withdrawal is a record: it is added, never edited or taken back here.
    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_changeform_initial_data(self, request):
        from django.utils import timezone

        return {"withdrawn_at": timezone.now()}

    def save_model(self, request, obj, form, change):
        obj.recorded_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(ExportAudit)
class ExportAuditAdmin(ReadOnlyRecords, PlatformAdminOnly, admin.ModelAdmin):
    # Append-only: the admin offers no way to write, change or remove an entry.
    list_display = ["requested_at", "study", "requested_by", "outcome", "date_from", "date_to", "destination"]
    list_filter = ["outcome", "study"]
    search_fields = ["requested_by__username", "study__protocol_number"]
    date_hierarchy = "requested_at"

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in ExportAudit._meta.fields]
