"""The usage ledger: one row per charge or refund of Deep Research quota.

The quota app knows nothing of research: a charge is tied to an opaque reference
(the research passes its task uuid)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class UsageEntry(models.Model):
    class Kind(models.TextChoices):
        CHARGE = "charge", _("Charge")
        REFUND = "refund", _("Refund")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="usage_entries")
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices)
    # +1.0 for a start, -1.0 / -0.5 for refunds.
    amount = models.DecimalField(_("amount"), max_digits=5, decimal_places=2)
    reference = models.CharField(_("reference"), max_length=64, db_index=True)
    reason = models.CharField(_("reason"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)

    class Meta:
        db_table = "deep_research_usage_ledger"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "created_at"])]
        # One charge and at most one refund per reference: settling twice cannot refund twice.
        constraints = [
            models.UniqueConstraint(fields=["reference", "kind"], name="one_entry_per_reference_and_kind")
        ]
        verbose_name = _("usage ledger entry")
        verbose_name_plural = _("usage ledger")

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind} {self.amount} ({self.reference})"


class CostReservation(models.Model):
    """A start reserves its worst-case cost against the platform's daily cap; the reservation
    is settled with the real cost when the work ends. Spent + still-reserved never passes the cap."""

    class Kind(models.TextChoices):
        # Every kind of model call the platform makes for someone; each reserves against the cap.
        RESEARCH = "research", _("Deep Research")
        CHAT = "chat", _("Ordinary chat")
        JUDGE = "judge", _("Deep Research suggestion (judge)")
        CONTEXT = "context", _("Context check")
        BLOOM = "bloom", _("Bloom classification")
        EVAL_JUDGE = "eval_judge", _("Evaluation judge")
        EMBEDDING = "embedding", _("Embeddings (paid backend)")

    reference = models.CharField(_("reference"), max_length=64, unique=True)
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices, default=Kind.RESEARCH)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    day = models.DateField(_("day"), db_index=True)
    reserved_usd = models.DecimalField(_("reserved (USD)"), max_digits=10, decimal_places=6)
    spent_usd = models.DecimalField(_("spent (USD)"), max_digits=10, decimal_places=6, default=0)
    settled = models.BooleanField(_("settled"), default=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    settled_at = models.DateTimeField(_("settled at"), null=True, blank=True)

    class Meta:
        db_table = "deep_research_cost_reservations"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["day", "settled"]),
            models.Index(fields=["user", "kind", "created_at"]),
        ]
        verbose_name = _("cost reservation")
        verbose_name_plural = _("cost reservations")

    def __str__(self) -> str:
        return f"{self.reference} {self.day} reserved {self.reserved_usd} spent {self.spent_usd}"


class CostAlert(models.Model):
    """One row per day on which the admins were told the cost passed the alert threshold."""

    day = models.DateField(_("day"), unique=True)
    cost_usd = models.DecimalField(_("cost (USD)"), max_digits=10, decimal_places=6)
    threshold_usd = models.DecimalField(_("threshold (USD)"), max_digits=10, decimal_places=2)
    recipients = models.TextField(_("recipients"), blank=True)
    sent_at = models.DateTimeField(_("sent at"), auto_now_add=True)

    class Meta:
        db_table = "deep_research_cost_alerts"
        ordering = ["-day"]
        verbose_name = _("cost alert")
        verbose_name_plural = _("cost alerts")

    def __str__(self) -> str:
        return f"{self.day}: {self.cost_usd} > {self.threshold_usd}"
