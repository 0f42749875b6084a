"""Learning-analytics signals of a research task, along the Educational Omics dimensions.

Every signal is derived from what each task already stores (its request row's Bloom level, its
plan, its events, its counters, the channel's chat log), so it is computed when asked (by the
export) and is always current: follow-up questions, for instance, keep arriving after the task.

- Cognomics: the Bloom level of the question (its request row), the number of sub-questions the
  planner made, the number of reflection rounds (reflection_done events).
- Linguomics: the question's length and language complexity (language_measures below), and the
  follow-up questions the same student asked in the same channel within FOLLOW_UP_WINDOW after
  the answer.
- Sociomics: views of the shared result by others (a count; who looked is never stored).
- Ethicomics: whether, and how long after the answer, the student acknowledged the disclaimer.
"""

from __future__ import annotations

import re
from datetime import timedelta

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from channels_app.models import ChatLog
from research.models import ResearchEvent, ResearchTask

FOLLOW_UP_WINDOW = timedelta(hours=24)

# One token per CJK character (no segmenter is needed, and character diversity is the usual
# lexical measure for Chinese learners' text), one per Latin word or number.
_CJK = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_TOKEN = re.compile(_CJK + r"|[A-Za-z]+(?:['’\-][A-Za-z]+)*|\d+(?:[.,]\d+)*")
# Sentence ends: Chinese and English end punctuation, a full stop before a space or the end, lines.
_SENTENCE_END = re.compile(r"[。！？!?；;…]+|\.(?=\s|$)|\n+")


def language_measures(text: str) -> dict:
    """The question's length and a language-complexity measure that works for Chinese, English
    and mixed text:

    - chars: characters without whitespace;
    - tokens: CJK characters + Latin words + numbers; sentences: non-empty pieces between ends;
    - mean_sentence_tokens: tokens per sentence (syntactic load);
    - type_token_ratio: distinct tokens / tokens, case-folded (lexical variety);
    - complexity: mean_sentence_tokens × type_token_ratio, i.e. distinct tokens per sentence —
      long sentences only score high when their vocabulary is varied too.
    """
    text = text or ""
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    sentences = [s for s in _SENTENCE_END.split(text) if _TOKEN.search(s)]
    n_tokens = len(tokens)
    n_sentences = max(1, len(sentences)) if tokens else 0  # text without end punctuation is one sentence
    mean = n_tokens / n_sentences if n_sentences else 0.0
    ttr = len(set(tokens)) / n_tokens if n_tokens else 0.0
    return {
        "chars": sum(1 for c in text if not c.isspace()),
        "tokens": n_tokens,
        "sentences": n_sentences,
        "mean_sentence_tokens": round(mean, 3),
        "type_token_ratio": round(ttr, 3),
        "complexity": round(mean * ttr, 3),
    }


def with_signal_annotations(tasks: QuerySet[ResearchTask]) -> QuerySet[ResearchTask]:
    """The database-side signals as annotations, so an export of any size is a few queries."""
    request_row = ChatLog.objects.filter(deep_research_task=OuterRef("pk"), kind=ChatLog.Kind.REQUEST).order_by("pk")
    reflections = (
        ResearchEvent.objects.filter(task=OuterRef("pk"), type="reflection_done")
        .order_by()
        .values("task")
        .annotate(n=Count("pk"))
        .values("n")
    )
    follow_ups = (
        ChatLog.objects.filter(
            channel=OuterRef("channel"),
            user=OuterRef("user"),
            kind=ChatLog.Kind.REQUEST,
            created_at__gt=OuterRef("finished_at"),
            created_at__lte=OuterRef("finished_at") + FOLLOW_UP_WINDOW,
        )
        .order_by()
        .values("user")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return tasks.annotate(
        signal_bloom_level=Subquery(request_row.values("bloom_level")[:1]),
        signal_bloom_confidence=Subquery(request_row.values("bloom_confidence")[:1]),
        signal_reflection_rounds=Coalesce(Subquery(reflections, output_field=IntegerField()), Value(0)),
        signal_follow_ups=Coalesce(Subquery(follow_ups, output_field=IntegerField()), Value(0)),
    )


def task_signals(task: ResearchTask) -> dict:
    """All signals of one task (annotated by with_signal_annotations, or fetched here)."""
    if not hasattr(task, "signal_reflection_rounds"):
        task = with_signal_annotations(ResearchTask.objects.filter(pk=task.pk)).get()
    plan = task.plan_json if isinstance(task.plan_json, dict) else {}
    language = language_measures(task.user_question)
    acknowledged = task.disclaimer_acknowledged_at
    return {
        # Cognomics
        "bloom_level": task.signal_bloom_level or "",
        "bloom_confidence": task.signal_bloom_confidence,
        "sub_questions": len(plan.get("sub_questions") or []),
        "plan_complexity": plan.get("complexity") or "",
        "reflection_rounds": task.signal_reflection_rounds,
        # Linguomics
        "question_chars": language["chars"],
        "question_tokens": language["tokens"],
        "question_sentences": language["sentences"],
        "mean_sentence_tokens": language["mean_sentence_tokens"],
        "type_token_ratio": language["type_token_ratio"],
        "language_complexity": language["complexity"],
        # Counted only once the answer exists: "follow-ups" are questions after it.
        "follow_ups_24h": task.signal_follow_ups if task.finished_at else None,
        # Sociomics
        "shared_views": task.shared_views,
        # Ethicomics
        "disclaimer_acknowledged": acknowledged is not None,
        "disclaimer_ack_seconds": (
            round((acknowledged - task.finished_at).total_seconds(), 1) if acknowledged and task.finished_at else None
        ),
    }
