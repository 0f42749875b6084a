from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuotasConfig(AppConfig):
    name = "quotas"
    verbose_name = _("Quotas and cost")

    def ready(self):
        # Embeddings live below quotas (channels_app); the paid backend asks this meter to reserve
        # and settle each batch against the daily cap.
        from channels_app import embeddings

        from .services import EmbeddingCostMeter

        embeddings.install_meter(EmbeddingCostMeter())
