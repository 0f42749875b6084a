from __future__ import annotations

from celery import shared_task

from quotas import services


@shared_task(ignore_result=True)
def cost_alert() -> bool:
    return services.send_cost_alert() is not None
