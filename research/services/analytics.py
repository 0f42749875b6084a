"""Learning-analytics signals recorded as people use results (computed ones are in
learning_analytics.py, which documents each in its CODEBOOK)."""

from __future__ import annotations

import hmac
import logging
import secrets

from django.core.cache import cache
from django.db.models import F
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _

from channels_app.access import can
from channels_app.roles import RESEARCH_REVIEW
from research.models import ResearchTask
from uedu_dr.errors import ServiceError

MAX_MISUSE_NOTE = 2000
# One reader opening a shared result again and again counts once a day: the count measures how
# far a result travels, not how often one person reloads it.
SHARE_VIEW_DEDUPE_SECONDS = 24 * 3600

log = logging.getLogger(__name__)


def share_token(task: ResearchTask) -> str:
    """The secret of the task's share link, made the first time its owner sees the page."""
    if not task.share_token:
        ResearchTask.objects.filter(pk=task.pk, share_token__isnull=True).update(
            share_token=secrets.token_urlsafe(16)[:22]
        )
        task.share_token = ResearchTask.objects.filter(pk=task.pk).values_list("share_token", flat=True).get()
    return task.share_token


def record_result_view(task: ResearchTask, viewer, *, via_share: str | None = None) -> bool:
    """Sociomics: an opening of the result through its share link by someone other than its
    owner (the caller has already checked that the viewer may see it), once per viewer a day.
    Only the count is kept, never who looked. Openings without the link (a teacher browsing the
    queue) are not shares."""
    if viewer.pk == task.user_id or not via_share or not task.share_token or task.is_replay:
        return False
    if not hmac.compare_digest(via_share.encode(), task.share_token.encode()):
        return False
    # Who looked is not stored: the cache holds a keyed hash of (task, viewer) for a day, then
    # forgets it. With the cache away the opening is not counted (an undercount, never a flood).
    seen = "share-view:" + salted_hmac("share-view", f"{task.pk}:{viewer.pk}").hexdigest()
    try:
        first = cache.add(seen, 1, timeout=SHARE_VIEW_DEDUPE_SECONDS)
    except Exception as exc:
        log.warning("share view not counted (cache unavailable): %s", exc)
        return False
    if not first:
        return False
    ResearchTask.objects.filter(pk=task.pk).update(shared_views=F("shared_views") + 1)
    return True


def flag_misuse(task: ResearchTask, user, *, note: str = "", flagged: bool = True) -> ResearchTask:
    """A reviewer of the channel's research (research.review: its owner, a Super TA with an NDA, a
    platform admin) marks someone else's result as misused, or clears the mark."""
    if task.user_id == user.pk or not can(user, RESEARCH_REVIEW, task.channel_id):
        raise ServiceError(
            "not_teacher", _("Only the channel's teacher can flag a result as misused."), status=403
        )
    note = (note or "").strip()
    if len(note) > MAX_MISUSE_NOTE:
        raise ServiceError(
            "note_too_long", _("The note is too long (at most %(n)d characters).") % {"n": MAX_MISUSE_NOTE}
        )
    if flagged:
        ResearchTask.objects.filter(pk=task.pk).update(
            misuse_flagged_at=timezone.now(), misuse_flagged_by=user, misuse_note=note
        )
    else:
        ResearchTask.objects.filter(pk=task.pk).update(
            misuse_flagged_at=None, misuse_flagged_by=None, misuse_note=""
        )
    task.refresh_from_db()
    return task


def acknowledge_disclaimer(task: ResearchTask, user) -> ResearchTask:
    """Ethicomics: the owner clicked "I understand" under the answer's disclaimer (first click counts)."""
    if task.user_id != user.pk:
        raise ServiceError(
            "not_owner", _("Only the person who asked can acknowledge this answer's disclaimer."), status=403
        )
    if task.status != ResearchTask.Status.COMPLETED:
        raise ServiceError("not_completed", _("This research has no answer to acknowledge."), status=409)
    ResearchTask.objects.filter(pk=task.pk, disclaimer_acknowledged_at__isnull=True).update(
        disclaimer_acknowledged_at=timezone.now()
    )
    task.refresh_from_db()
    return task
