"""The Deep Research switch records consent wherever a channel is saved (see consent.py for why
a save hook rather than a service every caller must remember)."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from channels_app.models import Channel

from .consent import sync_channel_consent


@receiver(post_save, sender=Channel, dispatch_uid="governance_channel_consent")
def record_channel_consent(sender, instance: Channel, raw: bool = False, **kwargs) -> None:
    if raw:  # loading fixtures: the fixture carries its own consent rows
        return
    sync_channel_consent(instance)
