"""Celery jobs of channel materials. Thin: the work and its rules live in channels_app.materials."""

from celery import shared_task

from . import materials


@shared_task(name="channels_app.index_material", ignore_result=True)
def index_material_task(material_id: int) -> None:
    # Re-fetches by id; a material deleted (or already indexed) since it was queued is a no-op.
    materials.index_material(material_id)
