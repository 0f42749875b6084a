"""A teacher's dashboard of their channel's researches per day: who may open it, what it counts."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from channels_app.models import ChatLog, Membership
from research.models import ResearchMetrics, ResearchTask
from research.selectors import channel_dashboard
from tests.support.factories import add_member, make_user
from tests.support.research_fixtures import stored_research


def _research(user, channel, *, bloom="", coverage=None, cost="0.01", **fields) -> ResearchTask:
    task = stored_research(user, channel, **fields)
    ResearchTask.objects.filter(pk=task.pk).update(cost_usd=Decimal(cost))
    if bloom:
        ChatLog.objects.filter(deep_research_task=task, kind="request").update(bloom_level=bloom)
    if coverage is not None:
        ResearchMetrics.objects.create(
            task=task,
            day=timezone.localdate(),
            model_name="m",
            channel=channel,
            status=task.status,
            citation_coverage=coverage,
        )
    return task


@pytest.fixture
def two_channels(personas):
    from channels_app.models import Channel

    other = Channel.objects.get(slug="course-b")
    other_student = add_member(other, make_user("s_carol"), Membership.Role.STUDENT)
    p = personas
    _research(p.student, p.channel, bloom="analyze", coverage=1.0, cost="0.10")
    _research(p.other_student, p.channel, bloom="analyze", coverage=0.5, cost="0.20", limit_hit="max_steps")
    _research(p.student, p.channel, bloom="remember", status="failed", cost="0.05")
    ResearchTask.objects.create(  # still running: neither completed nor a limit hit yet
        user=p.student, channel=p.channel, user_question="q", trigger_mode="forced", status="running"
    )
    yesterday = _research(p.student, p.channel, bloom="create")
    ResearchTask.objects.filter(pk=yesterday.pk).update(created_at=timezone.now() - timedelta(days=1))
    # A replay is an evaluation record, not a student's research.
    replay = _research(p.student, p.channel, bloom="create")
    ResearchTask.objects.filter(pk=replay.pk).update(is_replay=True)
    # The other channel's researches: its own teacher's business.
    for _ in range(3):
        _research(other_student, other, bloom="evaluate", coverage=0.1, cost="1.00")
    p.other_channel = other
    return p


def test_the_dashboard_counts_a_channels_researches_of_one_day(two_channels):
    p = two_channels
    figures = channel_dashboard(p.channel, timezone.localdate())
    assert figures["researches"] == 4 and figures["finished"] == 3 and figures["completed"] == 2
    assert figures["completion_rate"] == round(2 / 3, 3) and figures["limit_hits"] == 1
    assert figures["limit_hit_rate"] == round(1 / 3, 3)
    bloom = {row["level"]: row["count"] for row in figures["bloom"]}
    assert bloom["analyze"] == 2 and bloom["remember"] == 1 and bloom["create"] == 0
    assert figures["unclassified"] == 1
    assert figures["citation_coverage"] == 0.75 and figures["coverage_answers"] == 2
    assert figures["cost_usd"] == Decimal("0.35")

    yesterday = channel_dashboard(p.channel, timezone.localdate() - timedelta(days=1))
    assert (
        yesterday["researches"] == 1 and {r["level"]: r["count"] for r in yesterday["bloom"]}["create"] == 1
    )


def _url(channel, day=None):
    return f"/deep_research/channel/{channel.slug}/dashboard" + (f"?day={day}" if day else "")


def test_each_teacher_sees_their_own_channels_dashboard_only(client, two_channels):
    p = two_channels
    client.force_login(p.teacher)
    page = client.get(_url(p.channel)).content.decode()
    assert p.channel.name in page
    assert '<dd data-figure="researches">4</dd>' in page
    assert '<td data-bloom="analyze">2</td>' in page and '<td data-bloom="evaluate">0</td>' in page
    assert '<dd data-figure="cost_usd">0.3500</dd>' in page
    # The review queue links the dashboards of the teacher's channels, and only those.
    queue = client.get("/deep_research/review").content.decode()
    assert _url(p.channel) in queue and _url(p.other_channel) not in queue
    # The other channel's dashboard does not exist for this teacher.
    assert client.get(_url(p.other_channel)).status_code == 404

    client.force_login(p.other_teacher)
    page = client.get(_url(p.other_channel)).content.decode()
    assert '<dd data-figure="researches">3</dd>' in page and '<td data-bloom="evaluate">3</td>' in page
    assert '<td data-bloom="analyze">0</td>' in page
    assert client.get(_url(p.channel)).status_code == 404


@pytest.mark.parametrize("who", ["super_ta", "admin"])
def test_who_may_read_results_may_read_the_dashboard(client, two_channels, who):
    client.force_login(getattr(two_channels, who))
    assert client.get(_url(two_channels.channel)).status_code == 200


@pytest.mark.parametrize("who", ["student", "ta", "outsider", "other_super_ta"])
def test_everybody_else_gets_404(client, two_channels, who):
    client.force_login(getattr(two_channels, who))
    assert client.get(_url(two_channels.channel)).status_code == 404


def test_a_day_that_is_not_a_date_is_a_readable_400(client, two_channels):
    client.force_login(two_channels.teacher)
    response = client.get(_url(two_channels.channel, "yesterday"))
    assert response.status_code == 400 and "YYYY-MM-DD" in response.content.decode()
    earlier = client.get(_url(two_channels.channel, (timezone.localdate() - timedelta(days=1)).isoformat()))
    assert '<dd data-figure="researches">1</dd>' in earlier.content.decode()
