"""The channel page pages its turns (chat/conversation.py, docs/ui.md): the latest page costs the
same queries and about the same HTML however long the history; "Load older" walks back through
every turn once, in order; running researches stay on the page; outsiders get the page's 404."""

from __future__ import annotations

import html
import re
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from channels_app.models import ChatLog
from chat.conversation import MAX_PINNED, TURNS_PER_PAGE
from research.models import ResearchTask
from tests.support.chat_history import question_text, seed_history

QUESTION = re.compile(r"question number \d{4} about learning analytics")
LOAD_OLDER = re.compile(r'hx-get="(/channels/[^"]+/turns\?[^"]+)"')


def chat_url(p):
    return f"/channels/{p.channel.slug}/"


def questions_in(page: str) -> list[str]:
    # Each question is in its bubble once; a research's also in its answer's header: keep the first.
    return list(dict.fromkeys(QUESTION.findall(page)))


def older_link(page: str) -> str | None:
    found = LOAD_OLDER.findall(page)
    assert len(found) <= 1, "one Load older control at a time"
    return html.unescape(found[0]) if found else None


def measured(client, url):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), len(response.content), response.content.decode()


def running_research(user, channel, question, *, at):
    task = ResearchTask.objects.create(
        user=user, channel=channel, user_question=question, trigger_mode="forced", status="running"
    )
    row = ChatLog.objects.create(
        channel=channel,
        user=user,
        kind="request",
        type="deep_research",
        content=question,
        deep_research_task=task,
    )
    ChatLog.objects.filter(pk=row.pk).update(created_at=at)
    ResearchTask.objects.filter(pk=task.pk).update(created_at=at)
    return task


def test_the_pages_queries_and_size_do_not_grow_with_the_history(client, personas):
    student, channel = personas.student, personas.channel
    now = timezone.now()
    seed_history(student, channel, TURNS_PER_PAGE, first=1005, start=now - timedelta(seconds=30))
    client.force_login(student)
    client.get(chat_url(personas))  # the session's first use writes; measure what a return costs
    queries_20, _, page_20 = measured(client, chat_url(personas))
    seed_history(student, channel, 5, first=1000, start=now - timedelta(days=1))
    queries_25, size_25, page_25 = measured(client, chat_url(personas))
    # 175 more, older than everything shown: 200 past turns in all.
    seed_history(student, channel, 175, first=0, start=now - timedelta(days=30))
    queries_200, size_200, page_200 = measured(client, chat_url(personas))

    assert ChatLog.objects.filter(user=student, kind="request").count() == 200
    latest = [question_text(n) for n in range(1005, 1025)]
    assert questions_in(page_200) == questions_in(page_25) == questions_in(page_20) == latest
    assert page_200.count('<li class="turn ') == TURNS_PER_PAGE
    assert queries_200 == queries_25 == queries_20  # a first "Load older" costs no query either
    # Only the cursor's digits and the CSRF token may differ between the two renders.
    assert abs(size_200 - size_25) < 100, (size_25, size_200)


def test_load_older_walks_back_through_every_turn_once_in_order(client, personas):
    student, channel = personas.student, personas.channel
    texts = seed_history(student, channel, 3 * TURNS_PER_PAGE + 7)
    # Three turns at the very same instant: the cursor breaks the tie by id, losing none.
    ChatLog.objects.filter(content__in=texts[30:33], kind="request").update(
        created_at=timezone.now() - timedelta(hours=2)
    )
    texts = [*texts[30:33], *texts[:30], *texts[33:]]
    seed_history(personas.other_student, channel, 30, first=5000)  # bob's own turns, never alice's
    client.force_login(student)
    page = client.get(chat_url(personas)).content.decode()
    seen = questions_in(page)
    link = older_link(page)
    pages = 1
    while link:
        # A message sent meanwhile is on the page's end, not in the pages before it.
        ChatLog.objects.create(
            channel=channel, user=student, kind="request", type="chat", content=f"new {pages}"
        )
        response = client.get(link)
        assert response.status_code == 200
        fragment = response.content.decode()
        assert fragment.lstrip().startswith("<li") and "<html" not in fragment
        assert "new " not in fragment
        seen = questions_in(fragment) + seen
        link = older_link(fragment)
        pages += 1
    assert pages == 4
    assert seen == texts  # oldest first, no duplicates, no gaps, none of bob's


def test_running_researches_stay_on_the_page_and_are_not_repeated_in_older_pages(client, personas):
    student, channel = personas.student, personas.channel
    now = timezone.now()
    running = running_research(student, channel, "a long running research", at=now - timedelta(days=2))
    seed_history(student, channel, 2 * TURNS_PER_PAGE, start=now - timedelta(days=1))
    client.force_login(student)
    page = client.get(chat_url(personas)).content.decode()
    assert f'data-task="{running.task_uuid}"' in page and "turn-pinned" in page
    assert 'class="dr-card dr-outcome"' in page  # its live card, not an answer
    link = older_link(page)
    assert f"skip={running.task_uuid}" in link
    fragments = ""
    while link:
        fragment = client.get(link).content.decode()
        fragments += fragment
        link = older_link(fragment)
    assert "a long running research" not in fragments
    assert len(questions_in(fragments)) == TURNS_PER_PAGE

    # Once it has finished it is an ordinary turn: in the page of its time, no longer pinned.
    ResearchTask.objects.filter(pk=running.pk).update(status="completed", final_answer="Done [1].")
    page = client.get(chat_url(personas)).content.decode()
    assert "turn-pinned" not in page and "a long running research" not in page
    assert "skip=" not in older_link(page)


def test_at_most_max_pinned_running_researches_are_pinned(client, personas):
    student, channel = personas.student, personas.channel
    now = timezone.now()
    for number in range(MAX_PINNED + 2):
        running_research(
            student, channel, f"running {number:02d}", at=now - timedelta(days=2, seconds=-number)
        )
    seed_history(student, channel, TURNS_PER_PAGE + 1, start=now - timedelta(days=1))
    client.force_login(student)
    page = client.get(chat_url(personas)).content.decode()
    assert page.count("turn-pinned") == MAX_PINNED
    assert "running 00" not in page and "running 01" not in page and "running 02" in page


@pytest.mark.parametrize("who", ["outsider", "other_teacher", "other_super_ta"])
def test_outsiders_get_the_pages_404_on_older_turns(client, personas, who):
    seed_history(personas.student, personas.channel, TURNS_PER_PAGE + 5)
    client.force_login(personas.student)
    link = older_link(client.get(chat_url(personas)).content.decode())
    assert client.get(link).status_code == 200
    client.force_login(getattr(personas, who))
    assert client.get(chat_url(personas)).status_code == 404
    response = client.get(link)
    assert response.status_code == 404 and QUESTION.search(response.content.decode()) is None


def test_another_member_with_the_link_gets_only_their_own_turns(client, personas):
    seed_history(personas.student, personas.channel, TURNS_PER_PAGE + 5)
    client.force_login(personas.student)
    link = older_link(client.get(chat_url(personas)).content.decode())
    for member in (personas.other_student, personas.teacher):
        client.force_login(member)
        response = client.get(link)
        assert response.status_code == 200 and QUESTION.search(response.content.decode()) is None


def test_anonymous_visitors_are_sent_to_log_in_from_older_turns(client, personas):
    response = client.get(f"/channels/{personas.channel.slug}/turns?before=1.1")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize(
    "query",
    [
        "",
        "before=",
        "before=abc",
        "before=1.x",
        "before=-5.3",
        "before=1" + "0" * 30 + ".1",
        "before=1.1&skip=nope",
        "too many skipped",
    ],
)
def test_a_mangled_cursor_is_a_400_with_a_readable_message(client, personas, query):
    if query == "too many skipped":  # more than the page ever pins
        query = "before=1.1&skip=" + ",".join(str(uuid.uuid4()) for _ in range(MAX_PINNED + 1))
    client.force_login(personas.student)
    response = client.get(f"/channels/{personas.channel.slug}/turns?{query}", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 400
    assert "could not be loaded" in response.content.decode()


def test_the_load_older_control_is_translated(client, personas):
    seed_history(personas.student, personas.channel, TURNS_PER_PAGE + 1)
    client.force_login(personas.student)
    assert "載入較早的訊息" in client.get(chat_url(personas)).content.decode()
    assert "Load older messages" in client.get(chat_url(personas), HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_a_short_history_has_no_load_older_control(client, personas):
    seed_history(personas.student, personas.channel, TURNS_PER_PAGE)
    client.force_login(personas.student)
    page = client.get(chat_url(personas)).content.decode()
    assert len(questions_in(page)) == TURNS_PER_PAGE and older_link(page) is None


# --------------------------------------------------------------------------- the history page


def test_the_history_pager_reads_in_both_languages_and_keeps_the_filter(client, personas):
    from tests.support.research_fixtures import stored_research

    for number in range(12):
        stored_research(personas.student, personas.channel, question=f"history question {number:02d}")
    client.force_login(personas.student)
    first = client.get("/deep_research/my?per_page=10&q=history").content.decode()
    assert "第 1 頁，共 2 頁" in first and ">較舊</a>" in first and ">較新</a>" not in first
    second = client.get("/deep_research/my?per_page=10&q=history&page=2", HTTP_ACCEPT_LANGUAGE="en")
    second = second.content.decode()
    assert "Page 2 of 2" in second and ">Newer</a>" in second and ">Older</a>" not in second
    assert 'href="?status=&amp;per_page=10&amp;q=history&amp;page=1"' in second
    # Newest first, each research on exactly one page.
    shown = re.findall(r"history question \d\d", first) + re.findall(r"history question \d\d", second)
    assert shown == [f"history question {n:02d}" for n in range(11, -1, -1)]


def test_research_answers_on_the_page_do_not_cost_a_query_each(client, personas):
    from research.models import AnswerFeedback

    few, many = personas.student, personas.other_student
    seed_history(few, personas.channel, TURNS_PER_PAGE, research_every=10)  # 2 researches shown
    seed_history(many, personas.channel, TURNS_PER_PAGE, research_every=2)  # 10 researches shown
    # The reader's own feedback is what each answer shows: rated, and a citation reported.
    task = ResearchTask.objects.filter(user=many).latest("created_at")
    AnswerFeedback.objects.create(task=task, user=many, useful=True)
    AnswerFeedback.objects.create(task=task, user=few, useful=False)  # not many's: not shown to many
    queries = {}
    for student in (few, many):
        client.force_login(student)
        client.get(chat_url(personas))
        queries[student.pk], _, page = measured(client, chat_url(personas))
    assert queries[few.pk] == queries[many.pk]
    # Read at once, each answer still shows its own reader's feedback and nobody else's.
    answers = page.split('<article class="bubble assistant dr-answer')[1:]
    assert len(answers) == TURNS_PER_PAGE // 2
    rated = [answer for answer in answers if 'class="secondary small chosen"' in answer]
    assert len(rated) == 1 and f'data-task="{task.task_uuid}"' in rated[0]
