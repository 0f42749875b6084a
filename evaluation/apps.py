from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationConfig(AppConfig):
    """Quality evaluation of Deep Research over a dataset (no models of its own)."""

    name = "evaluation"
    verbose_name = _("Research evaluation")
