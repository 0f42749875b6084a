"""Export requests: a researcher asks (study, purpose, tables, date range, the signed export
consent form); a platform admin, the IRB delegate, approves or refuses with a note; the export
(export.py) then uses the approval once. Every step writes an ExportAudit row."""

from __future__ import annotations

import hashlib
from datetime import date

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from channels_app.access import can
from channels_app.roles import EXPORTS_DECIDE
from uedu_dr.errors import ServiceError

from .models import ExportAudit, ExportRequest, Study, StudyResearcher

DATASETS = ("tasks", "steps", "chat_logs", "signals")
MAX_CONSENT_FORM_BYTES = 10 * 1024 * 1024
MAX_NOTE = 4000


def audit(
    *,
    action: str,
    actor,
    outcome: str = ExportAudit.Outcome.COMPLETED,
    export_request: ExportRequest | None = None,
    study: Study | None = None,
    channel=None,
    note: str = "",
    **fields,
) -> ExportAudit:
    """One append-only row of the governance audit trail."""
    if export_request is not None:
        study = study or export_request.study
        fields.setdefault("date_from", export_request.date_from)
        fields.setdefault("date_to", export_request.date_to)
    return ExportAudit.objects.create(
        action=action,
        requested_by=actor,
        outcome=outcome,
        export_request=export_request,
        study=study,
        channel=channel,
        note=note[:MAX_NOTE],
        **fields,
    )


def _signed_researcher(user, study: Study) -> bool:
    return StudyResearcher.objects.filter(
        study=study,
        user=user,
        agreement_signed_on__isnull=False,
        agreement_signed_on__lte=timezone.localdate(),
    ).exists()


@transaction.atomic
def file_export_request(
    *,
    requester,
    study: Study,
    purpose: str,
    tables,
    date_from: date,
    date_to: date,
    consent_form_name: str,
    consent_form: bytes,
) -> ExportRequest:
    if not (requester.is_active and _signed_researcher(requester, study)):
        raise ServiceError(
            "no_signed_agreement",
            _(
                "Only a researcher of this study who has signed the researcher's responsibility agreement may request an export."
            ),
            status=403,
        )
    purpose = (purpose or "").strip()
    if not purpose:
        raise ServiceError("no_purpose", _("State the purpose of the export."))
    tables = [t for t in DATASETS if t in set(tables or ())]
    unknown = set(tables or ()) - set(DATASETS)
    if not tables or unknown:
        raise ServiceError(
            "bad_tables", _("Choose one or more of the tables: %(tables)s.") % {"tables": ", ".join(DATASETS)}
        )
    if date_from is None or date_to is None or date_from > date_to:
        raise ServiceError("bad_date_range", _("Give a date range whose start is not after its end."))
    if date_from < study.approved_from or date_to > study.approved_to:
        raise ServiceError(
            "outside_approval",
            _("The date range must lie inside the study's approval period (%(start)s to %(end)s).")
            % {"start": study.approved_from.isoformat(), "end": study.approved_to.isoformat()},
        )
    if not consent_form:
        raise ServiceError("no_consent_form", _("Attach the signed export consent form."))
    if len(consent_form) > MAX_CONSENT_FORM_BYTES:
        raise ServiceError("consent_form_too_large", _("The consent form is too large (at most 10 MB)."))
    request = ExportRequest.objects.create(
        study=study,
        requested_by=requester,
        purpose=purpose[:MAX_NOTE],
        tables=tables,
        date_from=date_from,
        date_to=date_to,
        consent_form_name=(consent_form_name or "consent-form")[:200],
        consent_form=consent_form,
        consent_form_sha256=hashlib.sha256(consent_form).hexdigest(),
    )
    audit(
        action=ExportAudit.Action.REQUEST_FILED,
        actor=requester,
        export_request=request,
        filters={"tables": tables, "consent_form_sha256": request.consent_form_sha256},
        note=purpose,
    )
    return request


@transaction.atomic
def decide_export_request(
    *, export_request: ExportRequest, decided_by, approve: bool, note: str
) -> ExportRequest:
    if not can(decided_by, EXPORTS_DECIDE):
        raise ServiceError(
            "not_approver", _("Only a platform admin (the IRB delegate) decides export requests."), status=403
        )
    if decided_by.pk == export_request.requested_by_id:
        raise ServiceError("own_request", _("Nobody approves their own export request."), status=403)
    note = (note or "").strip()
    if not approve and not note:
        raise ServiceError("no_note", _("Say why the request is refused."))
    status = ExportRequest.Status.APPROVED if approve else ExportRequest.Status.REFUSED
    # Conditional: two admins deciding at once cannot both decide, nor re-decide a used request.
    pinned = sorted(export_request.study.channels.values_list("pk", flat=True)) if approve else None
    updated = ExportRequest.objects.filter(pk=export_request.pk, status=ExportRequest.Status.PENDING).update(
        status=status,
        decided_by=decided_by,
        decided_at=timezone.now(),
        decision_note=note[:MAX_NOTE],
        approved_channel_ids=pinned,
    )
    if not updated:
        raise ServiceError("already_decided", _("This export request has already been decided."), status=409)
    export_request.refresh_from_db()
    audit(
        action=ExportAudit.Action.REQUEST_APPROVED if approve else ExportAudit.Action.REQUEST_REFUSED,
        actor=decided_by,
        export_request=export_request,
        note=note,
        outcome=ExportAudit.Outcome.COMPLETED if approve else ExportAudit.Outcome.REFUSED,
    )
    return export_request


def claim_approval(export_request: ExportRequest, requester) -> None:
    """Use the approval: it becomes 'exported' now, so a second export needs a new approval."""
    if export_request.requested_by_id != requester.pk:
        raise ServiceError(
            "not_requester", _("Only the researcher who filed this request may export with it."), status=403
        )
    updated = ExportRequest.objects.filter(pk=export_request.pk, status=ExportRequest.Status.APPROVED).update(
        status=ExportRequest.Status.EXPORTED, exported_at=timezone.now()
    )
    if not updated:
        export_request.refresh_from_db()
        if export_request.status == ExportRequest.Status.EXPORTED:
            raise ServiceError(
                "approval_used",
                _("This approval has been used; a new export needs a new approval."),
                status=403,
            )
        raise ServiceError("not_approved", _("Only an approved export request can be exported."), status=403)
    export_request.refresh_from_db()


def release_approval(export_request: ExportRequest) -> None:
    """An export that failed half-way did not use the approval."""
    ExportRequest.objects.filter(pk=export_request.pk, status=ExportRequest.Status.EXPORTED).update(
        status=ExportRequest.Status.APPROVED, exported_at=None
    )


def pending_requests():
    return ExportRequest.objects.filter(status=ExportRequest.Status.PENDING).select_related(
        "study", "requested_by"
    )
