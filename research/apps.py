from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ResearchConfig(AppConfig):
    name = "research"
    verbose_name = _("Deep Research")

    def ready(self) -> None:
        from agent import tools

        tools.load()  # a tool with a broken definition fails here, at start-up
        from research import receivers  # noqa: F401  (Bloom classification of new questions)
