"""Learning-analytics signals of a research task, along the Educational Omics dimensions.

Every signal is derived from what each task already stores (its request row's Bloom level, its
plan and the student's plan edits, its events, its counters, the channel's chat log), so it is
computed when asked (by the export) and is always current: follow-ups, for instance, keep
arriving after the task. Each name says what is counted:

- Cognomics: the Bloom level of the question (its request row); `sub_questions`, the number of
  sub-questions the planner made (the plan before the student's review; `sub_questions_researched`
  is the plan the research ran, after it); `reflection_rounds`, the reflections that gave a
  verdict (reflection_done events; a reflection whose model call failed says `failed` and is not
  counted: it reflected nothing).
- Linguomics: the question's length and language complexity (language_measures below), and the
  follow-ups: chat questions the student asked in the same channel after the answer, while it was
  their latest research there, that refer to it (its link or task id, or one of its numbered
  sources "[N]"), plus follow-up researches (`follow_up_researches`): the student's next research
  in the channel, whose prompts read this answer as the conversation it continues
  (research.services.follow_up), and any later research of theirs whose question names it.
- Sociomics: openings of the result through the share link the student copied, by others who may
  see it (a count; who looked is never stored); diffusion: later chat messages in the channel
  written by anyone but the student (questions people typed, never the assistant's replies,
  which may repeat a link they were given) that reference the result (its link or task id).
- Ethicomics: whether, and how long after the answer, the student acknowledged the disclaimer;
  whether a teacher flagged the result as misused.

CODEBOOK documents each column for the export's manifest. Replays are never counted. The signals
that count other rows (follow-ups, follow-up researches, diffusion) count, in an export, only rows
the export itself may hold: the caller passes its rule (`counted`), so a row outside the period,
written while consent was not in force or while its author was withdrawn, or written by staff or
by someone the consent does not cover, changes no signal either (governance.export).
"""

from __future__ import annotations

import re

from django.db.models import (
    Case,
    CharField,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Cast, Coalesce

from channels_app.models import ChatLog
from research.models import ResearchEvent, ResearchTask

CODEBOOK = {
    "bloom_level": "Bloom level of the question (its chat request row's classification); empty if not classified",
    "bloom_confidence": "the classifier's confidence in bloom_level, 0-1",
    "sub_questions": "number of sub-questions the planner made (before the student's plan review)",
    "sub_questions_researched": "number of sub-questions of the plan the research ran (after the student's plan review; "
    "equal to sub_questions when the plan was not edited)",
    "plan_complexity": "the planner's complexity label",
    "reflection_rounds": "number of reflections that gave a verdict (a reflection whose model call failed is not counted)",
    "question_chars": "characters of the question, whitespace excluded",
    "question_tokens": "CJK characters + Latin words + numbers of the question",
    "question_sentences": "sentences of the question",
    "mean_sentence_tokens": "question_tokens / question_sentences",
    "type_token_ratio": "distinct tokens / tokens (case-folded)",
    "language_complexity": "mean_sentence_tokens x type_token_ratio",
    "follow_ups": "follow-up researches (follow_up_researches) plus chat questions by the same student in the same channel "
    "after the answer, before their next research there, that refer to it (its link or task id, or a numbered source [N]); "
    "empty while there is no answer",
    "follow_up_researches": "later researches of the same student in the same channel that follow this one up: their next "
    "research there when this one completed (it reads this answer as its conversation), and any whose question contains "
    "this result's link or task id; empty while there is no answer. Like follow_ups, counts only rows this export holds "
    "(its period, consent in force, nothing written while withdrawn)",
    "share_link_openings": "openings of the result through the share link its student copied, by others who may see the result "
    "(teacher, Super TA with NDA, platform admin); the student's own openings are not counted",
    "diffusion_mentions": "later messages in the channel written by anyone but its student (their questions; the "
    "assistant's replies are not counted) that contain the result's link or task id; only messages this export "
    "itself holds count (in its period, consent in force, by learners who used Deep Research, never staff, "
    "nothing written while withdrawn)",
    "misuse_flagged": "True if a teacher flagged the result as misused",
    "disclaimer_acknowledged": "True if the student clicked 'I understand' under the answer's disclaimer",
    "disclaimer_ack_seconds": "seconds from the answer to that click; empty if none",
}

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


def with_signal_annotations(
    tasks: QuerySet[ResearchTask], *, counted: Q | None = None
) -> QuerySet[ResearchTask]:
    """The database-side signals as annotations, so an export of any size is a few queries.
    `counted`: which chat rows and research tasks the counting signals may count (a filter on
    either model, e.g. the export's learner rule); None counts all."""
    counted = counted if counted is not None else Q()
    request_row = ChatLog.objects.filter(
        deep_research_task=OuterRef("pk"), kind=ChatLog.Kind.REQUEST
    ).order_by("pk")
    reflections = (
        ResearchEvent.objects.filter(task=OuterRef("pk"), type="reflection_done")
        # A failed reflection still reports its round (the loop goes on), marked failed.
        .exclude(data__contains={"failed": True})
        .order_by()
        .values("task")
        .annotate(n=Count("pk"))
        .values("n")
    )
    # A reference to the result: its task id (which its link contains) in the text.
    uuid_text = Cast(OuterRef("task_uuid"), output_field=CharField())
    # A later research of the student in the channel ends this answer's turn as "the latest".
    later_research = ResearchTask.objects.filter(
        channel=OuterRef(OuterRef("channel")),
        user=OuterRef(OuterRef("user")),
        is_replay=False,
        created_at__gt=OuterRef(OuterRef("finished_at")),
        created_at__lt=OuterRef("created_at"),
    )
    follow_up_messages = (
        ChatLog.objects.filter(
            channel=OuterRef("channel"),
            user=OuterRef("user"),
            kind=ChatLog.Kind.REQUEST,
            # A research's question row is counted as a follow-up research below, not twice.
            type=ChatLog.Type.CHAT,
            created_at__gt=OuterRef("finished_at"),
        )
        .exclude(Exists(later_research))
        .filter(Q(content__contains=uuid_text) | Q(content__regex=r"\[[0-9]{1,3}\]"))
        .filter(counted)
        .order_by()
        .values("channel")
        .annotate(n=Count("pk"))
        .values("n")
    )
    researches_after = ResearchTask.objects.filter(
        channel=OuterRef("channel"),
        user=OuterRef("user"),
        is_replay=False,
        created_at__gt=OuterRef("finished_at"),
    ).exclude(pk=OuterRef("pk"))
    # Only a completed answer is in the next research's conversation (research.services.follow_up).
    next_research = Case(
        When(
            status=ResearchTask.Status.COMPLETED,
            then=Subquery(researches_after.order_by("created_at", "pk").values("pk")[:1]),
        ),
        default=None,
        output_field=IntegerField(),
    )
    follow_up_researches = (
        researches_after.filter(Q(pk=OuterRef("signal_next_research")) | Q(user_question__contains=uuid_text))
        .filter(counted)
        .order_by()
        .values("channel")
        .annotate(n=Count("pk"))
        .values("n")
    )
    diffusion = (
        ChatLog.objects.filter(
            channel=OuterRef("channel"),
            # What people wrote: an assistant's reply repeating a link it was given is no one's mention.
            kind=ChatLog.Kind.REQUEST,
            created_at__gt=OuterRef("finished_at"),
            content__contains=uuid_text,
        )
        .exclude(user=OuterRef("user"))  # spreading means others: the student's own mentions are follow-ups
        .exclude(deep_research_task=OuterRef("pk"))
        .filter(counted)
        .order_by()
        .values("channel")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return tasks.annotate(
        signal_bloom_level=Subquery(request_row.values("bloom_level")[:1]),
        signal_bloom_confidence=Subquery(request_row.values("bloom_confidence")[:1]),
        signal_reflection_rounds=Coalesce(Subquery(reflections, output_field=IntegerField()), Value(0)),
        signal_follow_up_messages=Coalesce(
            Subquery(follow_up_messages, output_field=IntegerField()), Value(0)
        ),
        signal_next_research=next_research,
        signal_diffusion=Coalesce(Subquery(diffusion, output_field=IntegerField()), Value(0)),
    ).annotate(
        signal_follow_up_researches=Coalesce(
            Subquery(follow_up_researches, output_field=IntegerField()), Value(0)
        ),
    )


def _sub_questions(plan: dict) -> list:
    questions = plan.get("sub_questions") if isinstance(plan, dict) else None
    return questions if isinstance(questions, list) else []


def task_signals(task: ResearchTask) -> dict:
    """All signals of one task (annotated by with_signal_annotations, or fetched here)."""
    if not hasattr(task, "signal_reflection_rounds"):
        task = with_signal_annotations(ResearchTask.objects.filter(pk=task.pk)).get()
    plan = task.plan_json if isinstance(task.plan_json, dict) else {}
    researched = _sub_questions(plan)
    # The plan stored at the end is the one the research ran; a student's edit keeps the
    # planner's questions beside it (research.services.plan_review.submit).
    edits = task.plan_edits_json if isinstance(task.plan_edits_json, dict) else {}
    planned = edits["original"] if isinstance(edits.get("original"), list) else researched
    finished = task.finished_at is not None
    language = language_measures(task.user_question)
    acknowledged = task.disclaimer_acknowledged_at
    return {
        # Cognomics
        "bloom_level": task.signal_bloom_level or "",
        "bloom_confidence": task.signal_bloom_confidence,
        "sub_questions": len(planned),
        "sub_questions_researched": len(researched),
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
        "follow_ups": task.signal_follow_up_messages + task.signal_follow_up_researches if finished else None,
        "follow_up_researches": task.signal_follow_up_researches if finished else None,
        # Sociomics
        "share_link_openings": task.shared_views,
        "diffusion_mentions": task.signal_diffusion if finished else None,
        # Ethicomics
        "misuse_flagged": task.misuse_flagged_at is not None,
        "disclaimer_acknowledged": acknowledged is not None,
        "disclaimer_ack_seconds": (
            round((acknowledged - task.finished_at).total_seconds(), 1)
            if acknowledged and task.finished_at
            else None
        ),
    }
