from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChatConfig(AppConfig):
    """Ordinary chat (ClassroomGPT) and the channel page, which composes Deep Research."""

    name = "chat"
    verbose_name = _("Course chat")
