from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GovernanceConfig(AppConfig):
    """IRB research-data governance: studies, researchers' agreements, Super TA NDAs, channel
    consent with per-student withdrawal, pseudonymised exports and their audit log."""

    name = "governance"
    label = "governance"
    verbose_name = _("Research data governance")

    def ready(self) -> None:
        from channels_app.access import register_study_roles

        from . import receivers  # noqa: F401  (connects the Deep Research switch to consent records)
        from .study_roles import study_roles_held

        register_study_roles(study_roles_held)

    def load_demo_data(self, stdout) -> None:
        from .demo import load_demo_study

        load_demo_study(stdout)
