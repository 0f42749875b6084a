"""Celery jobs of channel materials. Thin: the work and its rules live in channels_app.materials,
which queues these by name (uedu_dr.jobs) rather than importing this module."""

from celery import shared_task

from uedu_dr import jobs

from . import materials


@shared_task(name=jobs.INDEX_MATERIAL, ignore_result=True)
def index_material_task(material_id: int) -> None:
    # Re-fetches by id; a material deleted (or already indexed) since it was queued is a no-op.
    materials.index_material(material_id)
