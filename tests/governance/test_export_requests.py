"""Export request → approval → export, through the admin as each persona: the researcher files
with the consent form, a platform admin approves or refuses with a note, the approval is used by
one export within its scope, and every step is in the append-only audit."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from governance.models import ExportAudit, ExportRequest
from tests.governance.test_export import study  # noqa: F401  (fixture)

CONSENT_PDF = b"%PDF-1.4 export consent form, signed"


def _file(client, p, *, tables=("tasks", "signals"), purpose="Bloom levels by week", consent=CONSENT_PDF):
    data = {
        "action": "request",
        "purpose": purpose,
        "tables": list(tables),
        "date_from": (p.day - timedelta(days=1)).date().isoformat(),
        "date_to": timezone.localdate().isoformat(),
    }
    if consent is not None:
        data["consent_form"] = SimpleUploadedFile(
            "export-consent.pdf", consent, content_type="application/pdf"
        )
    return client.post(reverse("admin:governance_study_export", args=[p.study_obj.pk]), data)


def _export(client, p, request_pk, fmt="csv"):
    return client.post(
        reverse("admin:governance_study_export", args=[p.study_obj.pk]),
        {"export_request": request_pk, "format": fmt},
    )


def _decide(client, request_pk, decision, note=""):
    return client.post(
        reverse("admin:governance_exportrequest_decide", args=[request_pk]),
        {"decision": decision, "note": note},
    )


def test_request_approval_and_one_export_within_scope(client, study):
    p = study
    client.force_login(p.researcher)
    assert _file(client, p).status_code == 302
    request = ExportRequest.objects.get()
    assert (
        request.status == "pending"
        and request.tables == ["tasks", "signals"]
        and bytes(request.consent_form) == CONSENT_PDF
    )

    # Not approved yet: no export, and the refusal is audited.
    refused = _export(client, p, request.pk)
    assert refused.status_code == 403 and refused["Content-Type"].startswith("text/html")
    # The researcher cannot decide their own request, nor see the decision page.
    assert _decide(client, request.pk, "approve").status_code == 404

    # The platform admin sees the queue (linked from the admin index) and the consent form, and approves with a note.
    client.force_login(p.admin)
    assert "/admin/governance/exportrequest/?status__exact=pending" in client.get("/admin/").content.decode()
    queue = client.get(
        reverse("admin:governance_exportrequest_changelist") + "?status__exact=pending"
    ).content.decode()
    assert (
        "Bloom levels" not in queue
        and reverse("admin:governance_exportrequest_decide", args=[request.pk]) in queue
    )
    form = client.get(reverse("admin:governance_exportrequest_consent_form", args=[request.pk]))
    assert form.status_code == 200 and form.content == CONSENT_PDF
    assert _decide(client, request.pk, "approve", "within protocol").status_code == 302
    assert _decide(client, request.pk, "refuse", "changed my mind").status_code == 409  # decided once

    client.force_login(p.researcher)
    response = _export(client, p, request.pk)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    names = set(zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist())
    assert names == {"tasks.csv", "signals.csv", "manifest.json"}  # only the approved tables
    again = _export(client, p, request.pk)
    assert again.status_code == 403  # the approval is used up
    assert ExportRequest.objects.get().status == "exported"

    trail = list(
        ExportAudit.objects.order_by("pk").values_list("action", "outcome", "requested_by__username")
    )
    assert trail == [
        ("request_filed", "completed", p.researcher.username),
        ("export", "refused", p.researcher.username),
        ("request_approved", "completed", p.admin.username),
        ("export", "completed", p.researcher.username),
        ("export", "refused", p.researcher.username),
    ]
    assert ExportAudit.objects.filter(export_request=request).count() == 5
    last = ExportAudit.objects.filter(outcome="refused").order_by("pk").last()
    assert last.refusal.startswith("approval_used")


def test_a_refusal_needs_a_note_and_a_refused_request_never_exports(client, study):
    p = study
    client.force_login(p.researcher)
    _file(client, p)
    request = ExportRequest.objects.get()
    client.force_login(p.admin)
    assert _decide(client, request.pk, "refuse").status_code == 400  # why?
    assert _decide(client, request.pk, "refuse", "purpose outside the protocol").status_code == 302
    client.force_login(p.researcher)
    assert _export(client, p, request.pk).status_code == 403
    page = client.get(reverse("admin:governance_study_export", args=[p.study_obj.pk])).content.decode()
    assert "purpose outside the protocol" in page
    assert list(ExportAudit.objects.order_by("pk").values_list("action", "outcome")) == [
        ("request_filed", "completed"),
        ("request_refused", "refused"),
        ("export", "refused"),
    ]


@pytest.mark.parametrize(
    "change, field",
    [
        ({"consent": None}, "consent_form"),
        ({"tables": ()}, "tables"),
        ({"purpose": ""}, "purpose"),
    ],
)
def test_an_incomplete_request_is_not_filed(client, study, change, field):
    client.force_login(study.researcher)
    response = _file(client, study, **change)
    assert (
        response.status_code == 400
        and not ExportRequest.objects.exists()
        and not ExportAudit.objects.exists()
    )


def test_only_the_requester_uses_an_approval_and_others_never_see_it(client, study):
    from governance.models import StudyResearcher
    from tests.support.factories import make_user

    p = study
    client.force_login(p.researcher)
    _file(client, p)
    request = ExportRequest.objects.get()
    client.force_login(p.admin)
    _decide(client, request.pk, "approve", "ok")
    colleague = make_user("res_colleague", staff=True)
    StudyResearcher.objects.create(
        study=p.study_obj, user=colleague, agreement_signed_on=timezone.localdate()
    )
    client.force_login(colleague)
    assert _export(client, p, request.pk).status_code == 404
    assert client.get(reverse("admin:governance_exportrequest_change", args=[request.pk])).status_code == 404
    assert (
        client.get(reverse("admin:governance_exportrequest_consent_form", args=[request.pk])).status_code
        == 404
    )
    assert ExportRequest.objects.get().status == "approved"
    for user in (p.teacher, p.super_ta, p.student):
        client.force_login(user)
        assert client.get(reverse("admin:governance_exportrequest_changelist")).status_code in (302, 403)
