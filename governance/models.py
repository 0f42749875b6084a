"""Research data governance under the platform's IRB approval (NTU-REC 202507EM058).

A Study names the channels whose Deep Research data it may analyse, its approval period and its
researchers (each with the date they signed the researcher's responsibility agreement). Channels
record the consent framework in force while Deep Research is on; a student who withdraws is left
out of every export. An export needs an approved ExportRequest; exports are pseudonymised with a
key per study (StudyPseudonymKey) and every step is audited, append-only (ExportAudit)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


def new_pseudonym_key() -> bytes:
    return secrets.token_bytes(32)


class Study(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        ACTIVE = "active", _("Active")
        CLOSED = "closed", _("Closed")

    protocol_number = models.CharField(
        _("IRB protocol number"), max_length=64, unique=True, help_text=_("e.g. NTU-REC 202507EM058")
    )
    title = models.CharField(_("title"), max_length=300)
    approved_from = models.DateField(_("approved from"))
    approved_to = models.DateField(_("approved to"))
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.DRAFT)
    channels = models.ManyToManyField(
        "channels_app.Channel", related_name="studies", blank=True, verbose_name=_("channels")
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["-approved_from", "protocol_number"]
        constraints = [
            models.CheckConstraint(
                condition=Q(approved_to__gte=models.F("approved_from")), name="study_period_in_order"
            )
        ]
        verbose_name = _("study")
        verbose_name_plural = _("studies")

    def __str__(self) -> str:
        return f"{self.protocol_number} — {self.title}"


class StudyPseudonymKey(models.Model):
    """The HMAC key of a study's pseudonyms, in a model of its own that no admin registers: a key
    on the Study itself could be read through an admin URL filter one hex digit at a time.
    Random per study (never SECRET_KEY, which would make pseudonyms linkable across studies and
    change when the secret rotates); migrated unchanged from the old column, so pseudonyms stay
    stable."""

    study = models.OneToOneField(
        Study, on_delete=models.CASCADE, primary_key=True, related_name="pseudonym_secret"
    )
    key = models.BinaryField(default=new_pseudonym_key, editable=False)

    def __str__(self) -> str:
        return f"pseudonym key of study {self.study_id}"  # never the key itself

    @classmethod
    def key_of(cls, study: Study) -> bytes:
        secret, _created = cls.objects.get_or_create(study=study)
        return bytes(secret.key)


class StudyResearcher(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="researchers")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="study_memberships",
        verbose_name=_("researcher"),
    )
    agreement_signed_on = models.DateField(
        _("responsibility agreement signed on"),
        null=True,
        blank=True,
        help_text=_(
            "Empty until the researcher's responsibility agreement is signed; no export before that."
        ),
    )
    added_at = models.DateTimeField(_("added"), auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user"], name="one_researcher_row_per_study")]
        verbose_name = _("study researcher")
        verbose_name_plural = _("study researchers")

    def __str__(self) -> str:
        return f"{self.user} @ {self.study.protocol_number}"


class ChannelConsent(models.Model):
    """A period during which a channel's Deep Research ran under a consent framework: opened when
    the teacher switches Deep Research on, closed when it is switched off (consent.py)."""

    channel = models.ForeignKey(
        "channels_app.Channel", on_delete=models.CASCADE, related_name="consents", verbose_name=_("channel")
    )
    framework = models.CharField(
        _("consent framework"),
        max_length=120,
        help_text=_("The IRB approval whose informed-consent framework applies."),
    )
    started_at = models.DateTimeField(_("in force from"))
    ended_at = models.DateTimeField(_("in force until"), null=True, blank=True)

    class Meta:
        ordering = ["channel", "-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["channel"], condition=Q(ended_at__isnull=True), name="one_open_consent_per_channel"
            ),
        ]
        verbose_name = _("channel consent")
        verbose_name_plural = _("channel consents")

    def __str__(self) -> str:
        return f"{self.channel.slug}: {self.framework} from {self.started_at:%Y-%m-%d}"


class ConsentWithdrawal(models.Model):
    """A student withdrew from research use of their data: in one channel, or (channel empty) in
    all. A withdrawn student is left out of every export of every study touching that channel."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="consent_withdrawals",
        verbose_name=_("student"),
    )
    channel = models.ForeignKey(
        "channels_app.Channel",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="consent_withdrawals",
        verbose_name=_("channel"),
        help_text=_("Empty: withdrawn from every channel."),
    )
    withdrawn_at = models.DateTimeField(_("withdrawn at"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("recorded by"),
    )
    note = models.TextField(_("note"), blank=True)
    # A student who re-joins keeps the row (with this date): rows written before the re-join stay
    # out of every export, rows written after it count again (consent.py).
    rejoined_at = models.DateTimeField(_("re-joined at"), null=True, blank=True)

    class Meta:
        ordering = ["-withdrawn_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "channel"], name="one_withdrawal_per_channel"),
            models.UniqueConstraint(
                fields=["user"], condition=Q(channel__isnull=True), name="one_global_withdrawal"
            ),
        ]
        verbose_name = _("consent withdrawal")
        verbose_name_plural = _("consent withdrawals")

    def __str__(self) -> str:
        return f"{self.user} withdrew ({self.channel.slug if self.channel_id else 'all channels'})"


class AppendOnlyError(Exception):
    pass


class ExportRequest(models.Model):
    """A researcher's request to export part of a study's data, with the export consent form, and
    the platform admin's (IRB delegate's) decision. Only an approved request can be exported,
    within its scope (tables, dates), once: the export marks it used (export.py)."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting for approval")
        APPROVED = "approved", _("Approved")
        REFUSED = "refused", _("Refused")
        EXPORTED = "exported", _("Exported")

    study = models.ForeignKey(
        Study, on_delete=models.PROTECT, related_name="export_requests", verbose_name=_("study")
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("requested by")
    )
    requested_at = models.DateTimeField(_("requested at"), auto_now_add=True)
    purpose = models.TextField(_("purpose"))
    tables = models.JSONField(_("tables"), default=list)
    date_from = models.DateField(_("from"))
    date_to = models.DateField(_("to"))
    # The signed export consent form, kept in the database (not under /media/) and shown only to
    # platform admins and the requester (admin.py).
    consent_form_name = models.CharField(_("export consent form"), max_length=200)
    consent_form_sha256 = models.CharField(_("SHA-256 of the consent form"), max_length=64)
    consent_form = models.BinaryField(editable=False)
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)
    decision_note = models.TextField(_("decision note"), blank=True)
    exported_at = models.DateTimeField(_("exported at"), null=True, blank=True)
    # The study's channels when the request was approved: the export takes these and no channel
    # added to the study later (a later edit must not widen what was approved). None: approved
    # before channels were pinned.
    approved_channel_ids = models.JSONField(_("channels at approval"), null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-requested_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(date_to__gte=models.F("date_from")), name="export_request_dates_in_order"
            )
        ]
        verbose_name = _("export request")
        verbose_name_plural = _("export requests")

    def __str__(self) -> str:
        return f"#{self.pk} {self.study.protocol_number} {self.date_from}..{self.date_to} ({self.status})"


class ExportAudit(models.Model):
    """The governance audit trail: one row per step (an export request filed, approved or refused;
    an export done or refused; a student's withdrawal or re-join). Append-only: the model refuses
    updates and deletes, and a database trigger refuses them from any other path (migration 0002)."""

    class Outcome(models.TextChoices):
        COMPLETED = "completed", _("Completed")
        REFUSED = "refused", _("Refused")

    class Action(models.TextChoices):
        EXPORT = "export", _("Export")
        REQUEST_FILED = "request_filed", _("Export request filed")
        REQUEST_APPROVED = "request_approved", _("Export request approved")
        REQUEST_REFUSED = "request_refused", _("Export request refused")
        CONSENT_WITHDRAWN = "consent_withdrawn", _("Consent withdrawn")
        CONSENT_REJOINED = "consent_rejoined", _("Consent given again")

    action = models.CharField(_("action"), max_length=24, choices=Action.choices, default=Action.EXPORT)
    export_request = models.ForeignKey(
        ExportRequest,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="audit_entries",
        verbose_name=_("export request"),
    )
    channel = models.ForeignKey(
        "channels_app.Channel",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("channel"),
    )
    note = models.TextField(_("note"), blank=True)
    study = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="exports",
        verbose_name=_("study"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("requested by")
    )
    requested_at = models.DateTimeField(_("requested at"), auto_now_add=True)
    outcome = models.CharField(_("outcome"), max_length=16, choices=Outcome.choices)
    refusal = models.CharField(_("refusal reason"), max_length=300, blank=True)
    date_from = models.DateField(_("from"), null=True)
    date_to = models.DateField(_("to"), null=True)
    filters = models.JSONField(_("filters"), default=dict)
    row_counts = models.JSONField(_("row counts"), default=dict)
    file_hashes = models.JSONField(_("SHA-256 of each file"), default=dict)
    destination = models.CharField(_("destination"), max_length=500, blank=True)

    class Meta:
        ordering = ["-requested_at"]
        verbose_name = _("export audit entry")
        verbose_name_plural = _("governance audit log")

    def __str__(self) -> str:
        what = self.study.protocol_number if self.study_id else (self.channel.slug if self.channel_id else "")
        return f"{self.action} {what} {self.outcome} by {self.requested_by} at {self.requested_at:%Y-%m-%d %H:%M}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not self._state.adding:
            raise AppendOnlyError("The export audit log is append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("The export audit log is append-only.")
