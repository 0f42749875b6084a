from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ResearchConfig(AppConfig):
    name = "research"
    verbose_name = _("Deep Research")

    def ready(self) -> None:
        from agent import tools

        tools.load()  # a tool with a broken definition fails here, at start-up
        from celery.signals import worker_ready

        from research import (
            checks,  # noqa: F401  (check --deploy: the student's quota fits their share of the cap)
            receivers,  # noqa: F401  (Bloom classification of new questions)
            tasks,  # noqa: F401  (registered: services queue them by name, uedu_dr.jobs)
        )
        from uedu_dr.heap import freeze_startup_heap

        # After channels_app's model warm-up (connected in its ready(), which runs first: the
        # apps are set up in INSTALLED_APPS order), so that the model is part of the frozen heap.
        worker_ready.connect(freeze_startup_heap, dispatch_uid="uedu_dr.freeze_startup_heap")
