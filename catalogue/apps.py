from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CatalogueConfig(AppConfig):
    name = "catalogue"
    label = "catalogue"
    verbose_name = _("Uedu catalogue")

    def load_demo_data(self, stdout) -> None:
        """Called by `manage.py load_demo_data` after the demo users and channels exist."""
        from .demo import load_demo_catalogue

        counts = load_demo_catalogue()
        stdout.write("Demo catalogue ready: " + ", ".join(f"{n} {what}" for what, n in counts.items()) + ".")
