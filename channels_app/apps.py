from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChannelsAppConfig(AppConfig):
    name = "channels_app"
    verbose_name = _("Course channels")
