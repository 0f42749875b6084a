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
        verbose_name = _("usage ledger entry")
        verbose_name_plural = _("usage ledger")

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind} {self.amount} ({self.reference})"
