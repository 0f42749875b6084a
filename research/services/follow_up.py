"""The conversation a new answer continues: the student's recent turns in one channel, with each
finished Deep Research's conclusions and numbered sources. Ordinary chat sends it with every
message; a Deep Research started in the conversation receives the turns before its question,
so a follow-up research builds on the earlier one instead of starting blind. A research the
student follows up on from its result page ("ask a follow-up") is attached explicitly, however far
back it is: the chat message carries it, a research stores it (`ResearchTask.follow_up_of`)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models import Subquery

from channels_app.models import Channel, ChatLog
from research.models import ResearchTask
from research.selectors import request_log_id_subquery, visible_tasks

# How much of the conversation goes back to the model.
HISTORY_ROWS = 20
HISTORY_CHARS = 24_000
ANSWER_CHARS = 8_000
# A research's planner, researcher and writer each read it: a smaller share of their prompts.
RESEARCH_HISTORY_CHARS = 8_000


def attachable(user, channel: Channel, task_uuid) -> ResearchTask | None:
    """The research a follow-up in `channel` may attach ("ask a follow-up" on a result page): a
    completed research of this channel that the user may read (research.selectors' rule), not a
    replay. None for anything else, which says nothing about whether such a research exists."""
    if not task_uuid:
        return None
    try:
        return (
            visible_tasks(user)
            .filter(
                task_uuid=task_uuid, channel=channel, status=ResearchTask.Status.COMPLETED, is_replay=False
            )
            .only(
                "pk", "task_uuid", "user_question", "final_answer", "citations_json", "status", "channel_id"
            )
            .first()
        )
    except (ValueError, ValidationError):
        return None


def conversation_messages(
    user,
    channel: Channel,
    *,
    before_id: int | Subquery | None = None,
    budget: int = HISTORY_CHARS,
    attach: ResearchTask | None = None,
) -> list[dict]:
    """The user's recent turns in the channel as chat messages, oldest first, within `budget`
    characters (the most recent turns are kept). A finished Deep Research answer comes with its
    numbered source list; researches that did not finish leave only the question. `attach`: a
    research the student follows up on, put first (its question and answer) unless its answer is
    among the turns already."""
    # Only what the text is made of: a task row's other JSON columns (plan, verification, report)
    # are large, and a long conversation would parse twenty of them for every message.
    rows = (
        ChatLog.objects.filter(user=user, channel=channel)
        .select_related("deep_research_task")
        .only(
            "kind",
            "type",
            "content",
            "created_at",
            "deep_research_task__status",
            "deep_research_task__final_answer",
            "deep_research_task__citations_json",
        )
    )
    if before_id is not None:
        rows = rows.filter(pk__lt=before_id)
    messages: list[dict] = []
    used = 0
    # Newest first: the budget keeps the latest.
    latest = list(rows.order_by("-created_at", "-id")[:HISTORY_ROWS])
    attached: list[dict] = []
    if attach is not None and all(row.deep_research_task_id != attach.pk for row in latest):
        attached = [
            {"role": "user", "content": attach.user_question},
            {"role": "assistant", "content": _research_text(attach)},
        ]
        used = sum(len(m["content"]) for m in attached)
    for row in latest:
        content = _context_text(row)
        if content is None:
            continue
        if used + len(content) > budget:
            break
        used += len(content)
        role = "user" if row.kind == ChatLog.Kind.REQUEST else "assistant"
        messages.append({"role": role, "content": content})
    messages.reverse()
    return attached + messages


def research_follow_up(task: ResearchTask) -> str:
    """The turns before this research's question, as text for the research's prompts ('' when
    the research starts a conversation)."""
    # The question's row as a subquery, not a lookup of its own: a task stored without one has
    # no id to compare with, so no turn comes before it.
    messages = conversation_messages(
        task.user,
        task.channel,
        before_id=request_log_id_subquery(task.pk),
        budget=RESEARCH_HISTORY_CHARS,
        attach=task.follow_up_of,
    )
    speaker = {"user": "Student", "assistant": "Assistant"}
    return "\n\n".join(f"{speaker[m['role']]}: {m['content']}" for m in messages)


def _context_text(row: ChatLog) -> str | None:
    if row.kind == ChatLog.Kind.REQUEST:
        return row.content
    if row.type == ChatLog.Type.CHAT:
        return row.content[:ANSWER_CHARS]
    task = row.deep_research_task
    if task is None or task.status != ResearchTask.Status.COMPLETED:
        return None
    return _research_text(task)


def _research_text(task: ResearchTask) -> str:
    sources = "\n".join(
        f"[{c.get('number')}] {c.get('title', '')}" + (f" — {c['url']}" if c.get("url") else "")
        for c in task.citations_json
    )
    text = f"Deep Research answer:\n{task.final_answer[:ANSWER_CHARS]}"
    return text + (f"\n\nSources:\n{sources}" if sources else "")
