"""Learning-analytics signals recorded as students use results (see the README's governance notes)."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from research.models import ResearchTask
from uedu_dr.errors import ServiceError


def record_result_view(task: ResearchTask, viewer) -> None:
    """Sociomics: a view of the shared result page by someone other than its owner. Only the
    count is kept, never who looked."""
    if viewer.pk != task.user_id:
        ResearchTask.objects.filter(pk=task.pk).update(shared_views=F("shared_views") + 1)


def acknowledge_disclaimer(task: ResearchTask, user) -> ResearchTask:
    """Ethicomics: the owner clicked "I understand" under the answer's disclaimer (first click counts)."""
    if task.user_id != user.pk:
        raise ServiceError("not_owner", _("Only the person who asked can acknowledge this answer's disclaimer."), status=403)
    if task.status != ResearchTask.Status.COMPLETED:
        raise ServiceError("not_completed", _("This research has no answer to acknowledge."), status=409)
    ResearchTask.objects.filter(pk=task.pk, disclaimer_acknowledged_at__isnull=True).update(disclaimer_acknowledged_at=timezone.now())
    task.refresh_from_db()
    return task
