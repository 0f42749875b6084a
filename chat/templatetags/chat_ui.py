"""Template helpers of the chat page."""

from __future__ import annotations

from datetime import timedelta

from django import template
from django.utils import timezone

register = template.Library()

# The classifier fills a question's Bloom level within moments; past this, the page stops asking.
BLOOM_POLL_WINDOW = timedelta(minutes=10)


@register.filter
def bloom_pending(row) -> bool:
    return row.kind == "request" and not row.bloom_level and row.created_at >= timezone.now() - BLOOM_POLL_WINDOW
