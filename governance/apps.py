from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GovernanceConfig(AppConfig):
    """IRB research-data governance: studies, researchers' agreements, Super TA NDAs, channel
    consent with per-student withdrawal, pseudonymised exports and their audit log."""

    name = "governance"
    label = "governance"
    verbose_name = _("Research data governance")

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (connects the Deep Research switch to consent records)

    def load_demo_data(self, stdout) -> None:
        from .demo import load_demo_study

        load_demo_study(stdout)
