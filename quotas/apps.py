from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuotasConfig(AppConfig):
    name = "quotas"
    verbose_name = _("Quotas and cost")

    def ready(self) -> None:
        from materials import embeddings

        from .roles import check_settings
        from .services import EmbeddingCostMeter

        check_settings()  # the quota settings are keyed by the role table's quota classes
        # Embeddings live below quotas (channels_app); the paid backend asks this meter to reserve
        # and settle each batch against the daily cap.
        embeddings.install_meter(EmbeddingCostMeter())
