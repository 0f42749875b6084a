"""The chat page's read model: a user's chat log in one channel, grouped into turns.

A turn is a question and what answered it: a ClassroomGPT reply, or a Deep Research task (its
progress card while it runs, its answer or outcome once it ends). The page and the live updates
render turns with the same templates, so a reload shows what was seen live."""

from __future__ import annotations

from dataclasses import dataclass

from channels_app.models import Channel, ChatLog
from research.models import ResearchTask

# The page shows this many of the latest rows; older ones stay in the log (and in /deep_research/my).
PAGE_ROWS = 200


@dataclass
class Turn:
    kind: str  # "chat" or "research"
    question: ChatLog | None = None
    answer: ChatLog | None = None  # the chat reply, or the research's response row
    task: ResearchTask | None = None

    @property
    def is_research(self) -> bool:
        return self.kind == "research"


def conversation(user, channel: Channel, *, limit: int = PAGE_ROWS) -> tuple[list[Turn], bool]:
    """The user's turns in the channel, oldest first, and whether older rows were left out."""
    rows = list(
        ChatLog.objects.filter(user=user, channel=channel)
        .select_related("deep_research_task__channel", "deep_research_task__user")
        .order_by("-created_at", "-id")[: limit + 1]
    )
    truncated = len(rows) > limit
    return turns_of(reversed(rows[:limit])), truncated


def turns_of(rows) -> list[Turn]:
    turns: list[Turn] = []
    by_request: dict[int, Turn] = {}
    by_task: dict[int, Turn] = {}
    for row in rows:
        if row.type == ChatLog.Type.DEEP_RESEARCH and row.deep_research_task_id:
            turn = by_task.get(row.deep_research_task_id)
            if turn is None:
                turn = by_task[row.deep_research_task_id] = Turn("research", task=row.deep_research_task)
                turns.append(turn)
            if row.kind == ChatLog.Kind.REQUEST:
                turn.question = row
            else:
                turn.answer = row
        elif row.kind == ChatLog.Kind.REQUEST:
            turn = by_request[row.pk] = Turn("chat", question=row)
            turns.append(turn)
        else:
            turn = by_request.get(row.in_reply_to_id)
            if turn is None or turn.answer is not None:
                turns.append(Turn("chat", answer=row))
            else:
                turn.answer = row
    return turns


def research_turn(task: ResearchTask) -> Turn:
    """The turn of one research, for the fragment the page inserts after a start."""
    turn = Turn("research", task=task)
    for row in task.chat_logs.order_by("created_at", "id"):
        if row.kind == ChatLog.Kind.REQUEST:
            turn.question = row
        else:
            turn.answer = row
    return turn
