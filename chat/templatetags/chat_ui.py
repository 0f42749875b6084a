"""Template helpers of the chat page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django import template
from django.utils import timezone

from channels_app.models import ChatLog
from chat.answer_spans import AnswerPart, answer_parts
from research.citation_view import CitationView, citation_views

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
    parts: list[AnswerPart]
    citations: list[CitationView]


@register.simple_tag
def chat_answer_view(row: ChatLog) -> ChatAnswerView:
    """An ordinary chat answer with its sources: the assistant's words in labelled blocks, and
    the sentences that are a span of the source they cite as that source's words, their [N]
    linked (chat/answer_spans.py); the sources listed as a research's are."""
    # Hex like a research's anchor (the sanitiser keeps only #cite-<hex>-N links), but 13 digits
    # where a research's has 12: the two kinds never clash on one page.
    anchor = f"cite-{row.pk:013x}"
    citations = citation_views(row.citations_json, anchor)
    sources = {}
    for raw in row.citations_json or []:
        if isinstance(raw, dict) and isinstance(raw.get("number"), int):
            # what the assistant was shown of the source (older rows kept its excerpt only)
            sources[raw["number"]] = str(raw.get("text") or raw.get("snippet") or "")
    return ChatAnswerView(parts=answer_parts(row.content, sources, anchor), citations=citations)
