from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuotasConfig(AppConfig):
    name = "quotas"
    verbose_name = _("Quotas and cost")

    def ready(self) -> None:
        from .roles import check_settings

        check_settings()  # the quota settings are keyed by the role table's quota classes
