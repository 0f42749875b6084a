from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChannelsAppConfig(AppConfig):
    name = "channels_app"
    verbose_name = _("Course channels")

    def ready(self) -> None:
        from celery.signals import worker_ready

        from materials.embeddings import warm_local_model

        from . import (
            signals,  # noqa: F401  (connects the file clean-up receiver)
            tasks,  # noqa: F401  (registered: materials queues them by name, uedu_dr.jobs)
        )

        worker_ready.connect(warm_local_model, dispatch_uid="channels_app.warm_local_model")

        from .models import Membership
        from .roles import check_membership_roles

        check_membership_roles(Membership.Role.values)  # a new role needs its row in the role table

    def load_demo_data(self, stdout) -> None:
        """Sample materials for the demo channel, uploaded and indexed through the real service."""
        from .demo_materials import load_demo_materials

        load_demo_materials(stdout)
