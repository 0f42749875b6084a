"""Template helpers of the chat page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString

from channels_app.models import ChatLog
from research.citation_view import CitationView, citation_views
from research.rendering import render_markdown

register = template.Library()

# The classifier fills a question's Bloom level within moments; past this, the page stops asking.
BLOOM_POLL_WINDOW = timedelta(minutes=10)
# One page asks at most this many times (every 4 s: three minutes), however long the window.
BLOOM_POLLS = 45


@register.filter
def bloom_pending(row) -> bool:
    return (
        row.kind == "request" and not row.bloom_level and row.created_at >= timezone.now() - BLOOM_POLL_WINDOW
    )


@register.filter
def bloom_polls_left(polls) -> bool:
    return int(polls or 0) < BLOOM_POLLS


@dataclass
class ChatAnswerView:
    html: SafeString
    citations: list[CitationView]


@register.simple_tag
def chat_answer_view(row: ChatLog) -> ChatAnswerView:
    """An ordinary chat answer with its sources: the same [N] links, labels and sanitising as a
    research answer (research.citation_view.citation_views, research.rendering)."""
    # Hex like a research's anchor (the sanitiser keeps only #cite-<hex>-N links), but 13 digits
    # where a research's has 12: the two kinds never clash on one page.
    anchor = f"cite-{row.pk:013x}"
    citations = citation_views(row.citations_json, anchor)
    return ChatAnswerView(
        html=render_markdown(
            row.content, citation_anchor=anchor, citation_numbers={c.number for c in citations}
        ),
        citations=citations,
    )
