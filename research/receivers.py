"""Signal receivers of the research app.

Bloom classification hangs on ChatLog's post_save because every writer of a request row goes
through it: the Deep Research start (services.lifecycle.task_start), the ordinary chat service
and anything written later. A service call every writer must remember would be forgotten by one.
The job is queued on commit, so the worker always finds the row (and a rolled-back row queues
nothing); it is the one trigger, the sweep only recovers rows it missed
(research.services.bloom). QuerySet.bulk_create() sends no post_save: a bulk import must call
research.services.bloom.enqueue for its request rows itself."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from channels_app.models import ChatLog


@receiver(post_save, sender=ChatLog, dispatch_uid="research_bloom_on_request_row")
def classify_new_request_rows(sender, instance: ChatLog, created: bool, raw: bool = False, **kwargs) -> None:
    if created and not raw:
        from research.services import bloom

        bloom.enqueue_on_commit(instance)
