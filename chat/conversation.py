"""The chat page's read model: a user's chat log in one channel, grouped into turns.

A turn is a question and what answered it: a ClassroomGPT reply, or a Deep Research task (its
progress card while it runs, its answer or outcome once it ends). The page and the live updates
render turns with the same templates, so a reload shows what was seen live.

Paging (docs/ui.md, "How the channel page pages its turns"): the page renders the latest
`TURNS_PER_PAGE` turns; "Load older" asks for the page before a cursor. A turn is keyed by the
row that opens it (its question; an answer whose question is gone opens its own turn), ordered by
(created_at, id), and the cursor is the key of the oldest turn shown: keyset paging, so a page
costs the same queries and the same work however long the history, and a page never repeats or
skips a turn when new messages arrive meanwhile. Answers are fetched by their question, not by
time: a research's answer row is written when it ends, after any chat that happened meanwhile,
yet it belongs to the turn of its question. Researches still running are always on the page
(their cards must keep updating), pinned above the latest turns however old they are; the pages
of older turns leave them out by their uuids."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Q

from channels_app.models import Channel, ChatLog
from research.models import ResearchTask
from research.selectors import read_feedback_given

# The channel page shows this many of the latest turns; "Load older" fetches as many again.
TURNS_PER_PAGE = 20

# The newest this many running researches are looked for, and those older than the page pinned;
# any others stay in their pages. It bounds the page's work and the "skip" list of "Load older".
MAX_PINNED = 10

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


class BadCursor(ValueError):
    """A "Load older" cursor this module did not write."""


@dataclass(frozen=True)
class Cursor:
    """The key of the oldest turn a page shows: older pages start strictly before it."""

    created_at: datetime
    pk: int

    def encode(self) -> str:
        # Whole microseconds since the epoch: exact (no float), and what decode reads back.
        return f"{(self.created_at - _EPOCH) // _MICROSECOND}.{self.pk}"

    @classmethod
    def decode(cls, text: str) -> Cursor:
        micros, _, pk = (text or "").partition(".")
        if not (micros.isdigit() and pk.isdigit()) or len(micros) > 17 or len(pk) > 18:
            raise BadCursor(text)  # 17 digits of microseconds: well inside datetime's range
        return cls(_EPOCH + int(micros) * _MICROSECOND, int(pk))

    @classmethod
    def of(cls, row: ChatLog) -> Cursor:
        return cls(row.created_at, row.pk)


@dataclass
class Turn:
    kind: str  # "chat" or "research"
    question: ChatLog | None = None
    answer: ChatLog | None = None  # the chat reply, or the research's response row
    task: ResearchTask | None = None

    @property
    def is_research(self) -> bool:
        return self.kind == "research"


@dataclass
class TurnPage:
    turns: list[Turn]  # oldest first
    older: Cursor | None  # where the page before this one starts; None: this is the first turn
    pinned: list[Turn]  # running researches older than the page (the channel page only)

    @property
    def pinned_uuids(self) -> str:
        return ",".join(str(turn.task.task_uuid) for turn in self.pinned)


# A row opens a turn when it is a question, or a chat answer whose question is gone (SET_NULL). A
# research's answer never does: its turn is its question's, which every research writes at start.
_OPENS_A_TURN = Q(kind=ChatLog.Kind.REQUEST) | Q(
    kind=ChatLog.Kind.RESPONSE, in_reply_to__isnull=True, deep_research_task__isnull=True
)
_TASK_ROWS = ("deep_research_task__channel", "deep_research_task__user")


def _before(cursor: Cursor) -> Q:
    return Q(created_at__lt=cursor.created_at) | Q(created_at=cursor.created_at, pk__lt=cursor.pk)


def conversation(
    user,
    channel: Channel,
    *,
    before: Cursor | None = None,
    skip: frozenset = frozenset(),
    limit: int = TURNS_PER_PAGE,
) -> TurnPage:
    """One page of the user's turns in the channel: the latest `limit` (or the `limit` before
    `before`), oldest first. The latest page also pins the researches still running older than
    it; `skip` names research tasks (uuids) a page of older turns leaves out, being pinned."""
    mine = ChatLog.objects.filter(user=user, channel=channel)
    openers = mine.filter(_OPENS_A_TURN)
    if before is not None:
        openers = openers.filter(_before(before))
    if skip:
        openers = openers.exclude(kind=ChatLog.Kind.REQUEST, deep_research_task__task_uuid__in=skip)
    # Newest first, one more than a page: whether there is an older page, at no extra query.
    heads = list(openers.select_related(*_TASK_ROWS).order_by("-created_at", "-id")[: limit + 1])
    older = Cursor.of(heads[limit - 1]) if len(heads) > limit else None
    heads = heads[:limit]
    asked = [row.pk for row in heads if row.kind == ChatLog.Kind.REQUEST]
    replies = list(mine.filter(kind=ChatLog.Kind.RESPONSE, in_reply_to_id__in=asked)) if asked else []
    rows = sorted([*heads, *replies], key=lambda row: (row.created_at, row.pk))
    pinned: list[Turn] = []
    if before is None:
        # Asked whether or not there is an older page, so the page's queries are the same for
        # any history; the running researches the page shows anyway are dropped here.
        # Named positively, the statuses reach the tasks' (status, …) index: the few unfinished
        # tasks are found first, not by reading the whole history.
        unfinished = [status for status in ResearchTask.Status.values if status not in ResearchTask.TERMINAL]
        running = (
            mine.filter(kind=ChatLog.Kind.REQUEST, deep_research_task__status__in=unfinished)
            .select_related(*_TASK_ROWS)
            .order_by("-created_at", "-id")[:MAX_PINNED]
        )
        shown = {row.pk for row in heads}
        pinned = turns_of(reversed([row for row in running if row.pk not in shown]))
    turns = turns_of(rows)
    # Each research answer shows the reader's feedback: read for all of them in one query.
    read_feedback_given(
        user, [t.task for t in turns if t.task and t.task.status == ResearchTask.Status.COMPLETED]
    )
    return TurnPage(turns=turns, older=older, pinned=pinned)


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
