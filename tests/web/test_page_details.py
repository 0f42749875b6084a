"""Small things every reader meets: the duration of a research as the student waited it, one term
for each way a research starts, a skip link on every page, and a favicon that is no 404."""

from __future__ import annotations

from datetime import timedelta

import pytest

from research.models import ResearchTask
from tests.support.research_fixtures import stored_research

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def _timed(personas, *, worked: float, waited: float) -> ResearchTask:
    task = stored_research(personas.student, personas.channel)
    ResearchTask.objects.filter(pk=task.pk).update(
        duration_seconds=worked, finished_at=task.created_at + timedelta(seconds=waited)
    )
    return task


def _duration(client, task, **headers) -> str:
    page = client.get(f"/deep_research/task/{task.task_uuid}", **headers).content.decode()
    start = page.index('data-role="duration">') + len('data-role="duration">')
    return page[start : page.index("</dd>", start)]


def test_a_fast_research_shows_tenths_of_a_second_not_zero(client, personas):
    client.force_login(personas.student)
    fast = _timed(personas, worked=0.34, waited=0.4)
    assert _duration(client, fast, **EN) == "0.3 s"
    assert _duration(client, fast) == "0.3 秒"


def test_a_research_that_waited_shows_the_wait_and_its_own_time(client, personas):
    client.force_login(personas.student)
    queued = _timed(personas, worked=0.34, waited=41.2)
    assert _duration(client, queued, **EN) == "41 s (researching: 0.3 s)"
    assert _duration(client, queued) == "41 秒（研究本身：0.3 秒）"
    long = _timed(personas, worked=184.0, waited=185.0)
    assert _duration(client, long, **EN) == "3 min 04 s"  # close enough to the wait: its own time


@pytest.mark.parametrize(
    ("mode", "english", "chinese"),
    [
        ("forced", "Manual (magnifier button)", "手動（放大鏡按鈕）"),
        ("auto", "Automatic (accepted suggestion)", "自動（採納建議）"),
    ],
)
def test_each_way_a_research_starts_has_one_term_in_both_languages(client, personas, mode, english, chinese):
    task = stored_research(personas.student, personas.channel)
    ResearchTask.objects.filter(pk=task.pk).update(trigger_mode=mode)
    client.force_login(personas.student)
    url = f"/deep_research/task/{task.task_uuid}"
    assert english in client.get(url, **EN).content.decode()
    assert chinese in client.get(url).content.decode()


def test_every_page_begins_with_a_skip_link_and_the_channel_pages_leads_to_the_message_box(client, personas):
    client.force_login(personas.student)
    for url in ("/", "/deep_research/my"):
        page = client.get(url, **EN).content.decode()
        assert (
            '<a class="skip-link" href="#main">Skip to the content</a>' in page and '<main id="main"' in page
        )
    page = client.get(f"/channels/{personas.channel.slug}/").content.decode()
    assert '<a class="skip-link" href="#message">跳到訊息輸入框</a>' in page
    assert page.index("skip-link") < page.index('class="topbar"') < page.index('id="message"')


def test_the_favicon_is_linked_and_its_old_address_redirects(client, personas):
    client.force_login(personas.student)
    assert (
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        in client.get("/").content.decode()
    )
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
