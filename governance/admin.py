"""Governance in the admin, by the permissions of the role table (channels_app.roles).

- governance.manage (the platform admin) manages studies, researchers and their agreements, Super
  TA NDAs (per channel) and consent withdrawals, and reads the audit log (which nobody edits or
  deletes); exports.decide decides export requests (the queue: ExportRequestAdmin).
- studies.read and export.request (a researcher: a user listed on a study, the role is the study
  membership, no group needed) see only their studies, read-only, and each one's export screen,
  where they file export requests and export an approved one, once.
- consent.read_periods (a channel's owner) reads the channel's consent periods. Withdrawals stay
  with governance.manage: a teacher who knew who withdrew could pressure them (the IRB's concern).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from django import forms
from django.contrib import admin, messages
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from channels_app.access import can, can_everywhere
from channels_app.admin_scoping import (
    ChannelScopedAdmin,
    GuardedModelAdmin,
    PlatformPermissionOnly,
    ReadOnlyRecords,
)
from channels_app.models import SuperTaNda
from channels_app.roles import (
    CONSENT_READ_PERIODS,
    EXPORT_REQUEST,
    EXPORTS_DECIDE,
    GOVERNANCE_MANAGE,
    STUDIES_READ,
)
from uedu_dr.errors import ServiceError

from . import consent, export, export_requests
from .models import ChannelConsent, ConsentWithdrawal, ExportAudit, ExportRequest, Study, StudyResearcher


def _studies_of(user):
    """The studies whose rows the user's admin lists: every study for whoever reads them all."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Study.objects.none()
    if can_everywhere(user, STUDIES_READ):
        return Study.objects.all()
    return Study.objects.filter(researchers__user=user).distinct()


class StudyResearcherInline(admin.TabularInline):
    model = StudyResearcher
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "agreement_signed_on", "added_at"]
    readonly_fields = ["added_at"]

    # The study's researchers may see who else is on it; only governance.manage changes the list.
    def has_view_permission(self, request, obj=None):
        return can(request.user, GOVERNANCE_MANAGE) or (
            obj is not None and can(request.user, STUDIES_READ, obj)
        )

    def has_change_permission(self, request, obj=None):
        return can(request.user, GOVERNANCE_MANAGE)

    def has_add_permission(self, request, obj=None):
        return can(request.user, GOVERNANCE_MANAGE)

    def has_delete_permission(self, request, obj=None):
        return can(request.user, GOVERNANCE_MANAGE)


class ExportRequestForm(forms.Form):
    purpose = forms.CharField(label=_("Purpose"), widget=forms.Textarea(attrs={"rows": 3}), max_length=4000)
    tables = forms.MultipleChoiceField(
        label=_("Tables"),
        widget=forms.CheckboxSelectMultiple,
        choices=[
            ("tasks", _("Research tasks")),
            ("steps", _("Research steps")),
            ("chat_logs", _("Chat log")),
            ("signals", _("Learning-analytics signals")),
        ],
    )
    date_from = forms.DateField(label=_("From (inclusive)"), widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("To (inclusive)"), widget=forms.DateInput(attrs={"type": "date"}))
    consent_form = forms.FileField(
        label=_("Signed export consent form"), help_text=_("PDF or image, at most 10 MB.")
    )


class ExportForm(forms.Form):
    export_request = forms.IntegerField(widget=forms.HiddenInput)
    format = forms.ChoiceField(
        label=_("Format"),
        choices=[("both", _("CSV and JSONL")), ("csv", _("CSV")), ("jsonl", _("JSONL"))],
        initial="both",
    )


@admin.register(Study)
class StudyAdmin(GuardedModelAdmin):
    list_display = ["protocol_number", "title", "status", "approved_from", "approved_to", "export_link"]
    list_filter = ["status"]
    search_fields = ["protocol_number", "title"]
    filter_horizontal = ["channels"]
    # The pseudonym key lives in StudyPseudonymKey, which no admin registers or filters on.
    fields = ["protocol_number", "title", "status", "approved_from", "approved_to", "channels"]
    inlines = [StudyResearcherInline]
    actions = ["export_data"]

    # ------------------------------------------------------------------ scope

    def get_queryset(self, request):
        return super().get_queryset(request).filter(pk__in=_studies_of(request.user).values("pk"))

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None:  # out of scope looks exactly like absent
            raise Http404("No such study.")
        return obj

    def has_module_permission(self, request):
        return can(request.user, STUDIES_READ)

    def has_view_permission(self, request, obj=None):
        return can(request.user, STUDIES_READ, obj)

    def has_change_permission(self, request, obj=None):
        return can(request.user, GOVERNANCE_MANAGE)

    def has_add_permission(self, request):
        return can(request.user, GOVERNANCE_MANAGE)

    def has_delete_permission(self, request, obj=None):
        return can(request.user, GOVERNANCE_MANAGE)

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not can(request.user, GOVERNANCE_MANAGE):
            actions.pop("delete_selected", None)
        return actions

    # ------------------------------------------------------------------ export

    @admin.display(description=_("export"))
    def export_link(self, obj):
        return format_html(
            '<a href="{}">{}</a>',
            reverse("admin:governance_study_export", args=[obj.pk]),
            gettext("Export data"),
        )

    @admin.action(description=_("Export research data of the selected study"))
    def export_data(self, request, queryset):
        # An export is of one study; the action leads to that study's export screen.
        if queryset.count() != 1:
            self.message_user(request, gettext("Select exactly one study to export."), messages.WARNING)
            return None
        return HttpResponseRedirect(reverse("admin:governance_study_export", args=[queryset.get().pk]))

    def get_urls(self):
        return [
            path(
                "<int:study_id>/export/",
                self.admin_site.admin_view(self.export_view),
                name="governance_study_export",
            ),
            *super().get_urls(),
        ]

    def export_view(self, request, study_id: int):
        """The researcher's screen: file an export request; export an approved one (once)."""
        study = self.get_object(request, str(study_id))  # 404 outside the user's studies
        if not self.has_view_permission(request, study):
            raise Http404("No such study.")
        request_form = ExportRequestForm(
            initial={"date_from": study.approved_from, "date_to": study.approved_to}
        )
        export_form = ExportForm()
        status = 200
        if request.method == "POST" and not can(request.user, EXPORT_REQUEST, study):
            raise Http404("No such study.")
        if request.method == "POST" and request.POST.get("action") == "request":
            request_form = ExportRequestForm(request.POST, request.FILES)
            if request_form.is_valid():
                data = request_form.cleaned_data
                upload = data["consent_form"]
                if upload.size > export_requests.MAX_CONSENT_FORM_BYTES:
                    request_form.add_error(
                        "consent_form", gettext("The consent form is too large (at most 10 MB).")
                    )
                else:
                    try:
                        export_requests.file_export_request(
                            requester=request.user,
                            study=study,
                            purpose=data["purpose"],
                            tables=data["tables"],
                            date_from=data["date_from"],
                            date_to=data["date_to"],
                            consent_form_name=upload.name,
                            consent_form=upload.read(),
                        )
                    except ServiceError as error:
                        request_form.add_error(None, error.message)
                        status = error.status
                    else:
                        self.message_user(
                            request,
                            gettext("Export request filed; a platform admin will decide it."),
                            messages.SUCCESS,
                        )
                        return HttpResponseRedirect(reverse("admin:governance_study_export", args=[study.pk]))
            if status == 200:
                status = 400
        elif request.method == "POST":
            export_form = ExportForm(request.POST)
            if export_form.is_valid():
                export_request = ExportRequest.objects.filter(
                    pk=export_form.cleaned_data["export_request"], study=study, requested_by=request.user
                ).first()
                if export_request is None:
                    raise Http404("No such export request.")
                try:
                    return self._export_response(request, export_request, export_form.cleaned_data["format"])
                except ServiceError as error:
                    export_form.add_error(None, error.message)
                    status = error.status
            else:
                status = 400
        signed = (
            StudyResearcher.objects.filter(study=study, user=request.user)
            .values_list("agreement_signed_on", flat=True)
            .first()
        )
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Export research data: %(protocol)s") % {"protocol": study.protocol_number},
            "opts": self.model._meta,
            "original": study,
            "study": study,
            "request_form": request_form,
            "form": export_form,
            "my_requests": ExportRequest.objects.filter(study=study, requested_by=request.user).order_by(
                "-requested_at"
            ),
            "agreement_signed_on": signed,
            "channels": study.channels.order_by("slug"),
        }
        return TemplateResponse(request, "admin/governance/study/export.html", context, status=status)

    def _export_response(self, request, export_request: ExportRequest, fmt: str) -> FileResponse:
        """Export into a private temporary folder, zip the files (with a manifest of their
        hashes) into a temporary file on disk and stream it; nothing stays on the server and
        no export, however large, is held in memory."""
        with tempfile.TemporaryDirectory(prefix="uedu-export-") as tmp:
            result = export.export_study(
                requester=request.user,
                export_request=export_request,
                fmt=fmt,
                out_dir=Path(tmp),
                destination="admin download",
            )
            archive = export.write_zip(result)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", export_request.study.protocol_number).strip("-")
        name = f"uedu-{slug}-{export_request.date_from:%Y%m%d}-{export_request.date_to:%Y%m%d}-r{export_request.pk}.zip"
        # FileResponse reads the file in blocks and closes it (and so removes it) when done.
        response = FileResponse(archive, as_attachment=True, filename=name, content_type="application/zip")
        response["X-Export-Audit-Id"] = str(result.audit.pk)
        return response


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[("approve", _("Approve")), ("refuse", _("Refuse"))], widget=forms.RadioSelect
    )
    note = forms.CharField(
        label=_("Note"), widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=4000
    )


@admin.register(ExportRequest)
class ExportRequestAdmin(ReadOnlyRecords, GuardedModelAdmin):
    """The approval queue: platform admins (the IRB delegate) decide; a researcher reads their own
    requests. Filed from the study's export screen, decided on the decision page."""

    list_display = [
        "requested_at",
        "study",
        "requested_by",
        "date_from",
        "date_to",
        "status",
        "decided_by",
        "decide_link",
    ]
    list_filter = ["status", "study"]
    search_fields = ["requested_by__username", "study__protocol_number"]
    date_hierarchy = "requested_at"
    fields = [
        "study",
        "requested_by",
        "requested_at",
        "purpose",
        "tables",
        "date_from",
        "date_to",
        "consent_form_link",
        "consent_form_sha256",
        "status",
        "decided_by",
        "decided_at",
        "decision_note",
        "exported_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        queryset = super().get_queryset(request).select_related("study", "requested_by", "decided_by")
        return queryset if can(request.user, EXPORTS_DECIDE) else queryset.filter(requested_by=request.user)

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such export request.")
        return obj

    def has_module_permission(self, request):
        return can(request.user, EXPORTS_DECIDE) or can(request.user, EXPORT_REQUEST)

    def has_view_permission(self, request, obj=None):
        if can(request.user, EXPORTS_DECIDE):
            return True
        if obj is None:
            return can(request.user, EXPORT_REQUEST)
        return obj.requested_by_id == request.user.pk

    @admin.display(description=_("decision"))
    def decide_link(self, obj):
        if obj.status != ExportRequest.Status.PENDING:
            return "—"
        return format_html(
            '<a href="{}">{}</a>',
            reverse("admin:governance_exportrequest_decide", args=[obj.pk]),
            gettext("Decide"),
        )

    @admin.display(description=_("export consent form"))
    def consent_form_link(self, obj):
        return format_html(
            '<a href="{}">{}</a>',
            reverse("admin:governance_exportrequest_consent_form", args=[obj.pk]),
            obj.consent_form_name,
        )

    def get_urls(self):
        return [
            path(
                "<int:request_id>/decide/",
                self.admin_site.admin_view(self.decide_view),
                name="governance_exportrequest_decide",
            ),
            path(
                "<int:request_id>/consent-form/",
                self.admin_site.admin_view(self.consent_form_view),
                name="governance_exportrequest_consent_form",
            ),
            *super().get_urls(),
        ]

    def consent_form_view(self, request, request_id: int):
        export_request = self.get_object(request, str(request_id))  # scoped: admins, or the requester
        response = HttpResponse(bytes(export_request.consent_form), content_type="application/octet-stream")
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", export_request.consent_form_name) or "consent-form"
        response["Content-Disposition"] = f'attachment; filename="{safe}"'
        return response

    def decide_view(self, request, request_id: int):
        if not can(request.user, EXPORTS_DECIDE):
            raise Http404("No such export request.")
        export_request = self.get_object(request, str(request_id))
        form = DecisionForm(request.POST or None)
        status = 200
        if request.method == "POST":
            if form.is_valid():
                try:
                    export_requests.decide_export_request(
                        export_request=export_request,
                        decided_by=request.user,
                        approve=form.cleaned_data["decision"] == "approve",
                        note=form.cleaned_data["note"],
                    )
                except ServiceError as error:
                    form.add_error(None, error.message)
                    status = error.status
                else:
                    self.message_user(request, gettext("Decision recorded."), messages.SUCCESS)
                    return HttpResponseRedirect(reverse("admin:governance_exportrequest_changelist"))
            else:
                status = 400
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Decide export request #%(id)s") % {"id": export_request.pk},
            "opts": self.model._meta,
            "original": export_request,
            "export_request": export_request,
            "form": form,
        }
        return TemplateResponse(request, "admin/governance/exportrequest/decide.html", context, status=status)


@admin.register(StudyResearcher)
class StudyResearcherAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    """Every study's researchers and their agreements in one list (edited on the study too)."""

    platform_permission = GOVERNANCE_MANAGE

    list_display = ["user", "study", "agreement_signed_on", "added_at"]
    list_filter = ["study"]
    search_fields = ["user__username", "study__protocol_number"]
    autocomplete_fields = ["user"]


@admin.register(SuperTaNda)
class SuperTaNdaAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    """NDAs on file, one per Super TA and channel: only with one does a Super TA read students'
    research in that channel (channels_app.roles). Recorded under governance.manage."""

    platform_permission = GOVERNANCE_MANAGE

    list_display = ["user", "channel", "signed_on", "recorded_by", "recorded_at"]
    list_filter = ["channel"]
    search_fields = ["user__username", "channel__slug"]
    autocomplete_fields = ["user", "channel"]
    fields = ["user", "channel", "signed_on", "recorded_by"]
    readonly_fields = ["recorded_by"]

    def save_model(self, request, obj, form, change):
        obj.recorded_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(ChannelConsent)
class ChannelConsentAdmin(ReadOnlyRecords, ChannelScopedAdmin):
    """Written by the Deep Research switch (consent.py); read here, never edited."""

    view_permission = CONSENT_READ_PERIODS
    list_display = ["channel", "framework", "started_at", "ended_at"]
    list_filter = ["framework"]
    search_fields = ["channel__slug", "channel__name"]

    def get_readonly_fields(self, request, obj=None):
        return ["channel", "framework", "started_at", "ended_at"]


@admin.register(ConsentWithdrawal)
class ConsentWithdrawalAdmin(PlatformPermissionOnly, GuardedModelAdmin):
    platform_permission = GOVERNANCE_MANAGE
    list_display = ["user", "channel", "withdrawn_at", "rejoined_at", "recorded_by"]
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
        # Through the service, so an admin-recorded withdrawal is audited like the student's own.
        withdrawal = consent.withdraw_consent(
            student=obj.user, channel=obj.channel, recorded_by=request.user, note=obj.note
        )
        obj.pk = withdrawal.pk
        obj._state.adding = False


@admin.register(ExportAudit)
class ExportAuditAdmin(ReadOnlyRecords, PlatformPermissionOnly, GuardedModelAdmin):
    platform_permission = GOVERNANCE_MANAGE
    # Append-only: the admin offers no way to write, change or remove an entry.
    list_display = [
        "requested_at",
        "action",
        "study",
        "channel",
        "requested_by",
        "outcome",
        "export_request",
        "date_from",
        "date_to",
    ]
    list_filter = ["action", "outcome", "study"]
    search_fields = ["requested_by__username", "study__protocol_number"]
    date_hierarchy = "requested_at"

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in ExportAudit._meta.fields]
