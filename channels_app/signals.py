"""Files follow their rows: a deleted material's file is removed once the deletion commits.

A signal rather than a service call because rows also disappear by cascade (a deleted channel)
and through the admin's bulk delete, which never pass through channels_app.materials."""

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from .models import Material


@receiver(post_delete, sender=Material)
def delete_material_file(sender, instance: Material, **kwargs) -> None:
    if instance.file:
        storage, name = instance.file.storage, instance.file.name
        transaction.on_commit(lambda: storage.delete(name))
