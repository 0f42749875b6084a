"""A channel's dashboard and its CSV: who may open them (everyone else gets 404), what each figure
counts, the questions (named or under a pseudonym), the trend, the conflicts, the cited material
pages and what the materials fail to answer; a bounded number of queries however many rows."""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from channels_app.models import Channel, ChatLog, Material, Membership, SuperTaNda
from research import channel_dashboard as D
from research.models import ResearchTask
from research.services import material_coverage
from tests.support.factories import add_member, make_user
from tests.support.research_fixtures import stored_research
from tests.support.typed_reports import WEB_TOOL, ReportBuilder

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def _research(user, channel, *, bloom="", cost="0.01", days_ago=0, report=None, **fields) -> ResearchTask:
    task = stored_research(user, channel, **fields)
    created = timezone.now() - timedelta(days=days_ago)
    ResearchTask.objects.filter(pk=task.pk).update(
        cost_usd=Decimal(cost), created_at=created, **({"report_json": report} if report else {})
    )
    if bloom:
        ChatLog.objects.filter(deep_research_task=task, kind="request").update(bloom_level=bloom)
    task.refresh_from_db()
    return task


def _material(channel, name="week1.pdf") -> Material:
    return Material.objects.create(
        channel=channel, original_name=name, kind="pdf", size_bytes=1, sha256=name.ljust(64, "0")[:64]
    )


@pytest.fixture
def course(personas):
    """Today: three finished researches (one at a limit, one failed) and one running; yesterday
    one; 40 days ago one; a replay; and the other channel's researches."""
    p = personas
    other = Channel.objects.get(slug="course-b")
    other_student = add_member(other, make_user("s_carol"), Membership.Role.STUDENT)
    slides = _material(p.channel)
    p.slides = slides
    answered = ReportBuilder(
        "比較學習分析與布魯姆分類法", ["學習分析的定義是什麼？", "布魯姆分類法有哪些層次？"]
    )
    answered.fact(0, answered.material(p.channel.slug, slides.pk, 3))
    answered.fact(1, answered.source(WEB_TOOL))
    p.first = _research(p.student, p.channel, bloom="analyze", cost="0.10", report=answered.json())
    unanswered = ReportBuilder("什麼是形成性評量？", ["形成性評量的定義是什麼？"])
    p.second = _research(
        p.other_student,
        p.channel,
        bloom="analyze",
        cost="0.20",
        limit_hit="max_steps",
        question="什麼是形成性評量？",
        report=unanswered.json(),
    )
    p.failed = _research(p.student, p.channel, bloom="remember", status="failed", cost="0.05")
    ResearchTask.objects.create(  # still running: neither completed nor a limit hit yet
        user=p.student, channel=p.channel, user_question="running", trigger_mode="forced", status="running"
    )
    p.yesterday = _research(p.student, p.channel, bloom="create", days_ago=1)
    p.old = _research(p.student, p.channel, bloom="create", days_ago=40, question="一個多月前的問題")
    replay = _research(p.student, p.channel, bloom="create")
    ResearchTask.objects.filter(pk=replay.pk).update(is_replay=True)
    for _ in range(3):
        _research(other_student, other, bloom="evaluate", cost="1.00")
    material_coverage.sweep()
    p.other_channel = other
    return p


def _url(channel, query="", csv=False):
    return f"/deep_research/channel/{channel.slug}/dashboard{'.csv' if csv else ''}" + (
        f"?{query}" if query else ""
    )


def test_the_figures_of_a_period_say_what_they_count(course):
    week = D.figures(course.channel, D.period("7"))
    assert (week["researches"], week["finished"], week["completed"], week["running"]) == (5, 4, 3, 1)
    assert week["limit_hits"] == 1 and week["completed_share"] == 75 and week["limit_share"] == 25
    # Three sub-questions in two recorded researches, one answered by a material; the third completed
    # research (yesterday's) has no report to count.
    assert (week["parts"], week["answered"], week["answered_share"]) == (3, 1, 33)
    assert week["not_yet_analysed"] == 0
    assert week["cost"] == Decimal("0.36")
    assert D.figures(course.channel, D.period("30"))["researches"] == 5
    today = timezone.localdate()
    two_months = D.Period("term", today - timedelta(days=60), today)
    assert D.figures(course.channel, two_months)["researches"] == 6


def test_the_page_words_each_number(client, course):
    client.force_login(course.teacher)
    page = client.get(_url(course.channel, "period=7"), **EN).content.decode()
    assert "3 of 4 finished researches (75 %)" in page
    assert "1 of 4 finished researches (25 %) reached the step, token or time limit" in page
    assert "1 of 3 sub-questions (33 %) of 2 completed researches rest on a fact from this channel" in page
    assert "(1 still running)" in page
    zh = client.get(_url(course.channel, "period=7")).content.decode()
    assert "4 項已結束的研究中有 3 項完成（75 %）" in zh


def test_the_term_begins_on_the_latest_term_start():
    assert D.term_start(date(2026, 12, 5), ((2, 1), (8, 1))) == date(2026, 8, 1)
    assert D.term_start(date(2026, 1, 20), ((2, 1), (8, 1))) == date(2025, 8, 1)
    assert D.term_start(date(2026, 2, 1), ((2, 1), (8, 1))) == date(2026, 2, 1)
    p = D.period("7", date(2026, 12, 5))
    assert (p.first, p.last, len(p.days)) == (date(2026, 11, 29), date(2026, 12, 5), 7)


def test_the_trend_has_every_day_of_the_period(client, course):
    trend = D.trend(course.channel, D.period("7"))
    assert len(trend) == 7 and trend[-1]["day"] == timezone.localdate()
    assert (trend[-1]["researches"], trend[-1]["completed"], trend[-1]["limit_hits"]) == (4, 2, 1)
    assert (trend[-2]["researches"], trend[-2]["completed"]) == (1, 1)
    assert sum(row["researches"] for row in trend[:-2]) == 0
    client.force_login(course.teacher)
    page = client.get(_url(course.channel, "period=30"), **EN).content.decode()
    assert page.count("<polyline") == 3 and "Researches asked (5 in all)" in page
    assert '<table class="trend-table">' in page and page.count('<tr><th scope="row">') == 30


def test_the_questions_are_listed_with_their_level_status_and_link(client, course):
    client.force_login(course.teacher)
    page = client.get(_url(course.channel, "period=7"), **EN).content.decode()
    assert f'href="/deep_research/task/{course.first.task_uuid}"' in page
    assert "s_alice" in page and "s_bob" in page  # the channel's teacher sees the names
    assert '<span class="badge bloom bloom-analyze">Analyze</span>' in page
    assert "limit reached" in page and "1 of 2" in page and "0 of 1" in page
    assert "一個多月前的問題" not in page  # outside the period
    today = timezone.localdate()
    two_months = D.Period("term", today - timedelta(days=60), today)
    assert course.old in D.questions(course.channel, two_months, bloom="create")


def test_the_bloom_filter_keeps_one_level(client, course):
    client.force_login(course.teacher)
    rows = lambda q: client.get(_url(course.channel, q)).content.decode().count('<tr data-task="')  # noqa: E731
    assert rows("period=7") == 5
    assert rows("period=7&bloom=analyze") == 2
    assert rows("period=7&bloom=remember") == 1
    assert rows("period=7&bloom=none") == 1  # the running research's question has no row at all


def test_a_super_ta_reads_the_questions_under_stable_pseudonyms(client, course):
    client.force_login(course.super_ta)
    page = client.get(_url(course.channel, "period=7"), **EN).content.decode()
    assert "s_alice" not in page and "s_bob" not in page
    alice = D.student_label(course.channel, course.student.pk)
    assert f"Student {alice}" in page
    assert page.count(f"Student {alice}") == 4  # the same label on each of her questions
    assert D.student_label(course.other_channel, course.student.pk) != alice  # unlinkable across channels
    client.force_login(course.admin)
    assert "s_alice" in client.get(_url(course.channel, "period=7")).content.decode()


def test_unresolved_conflicts_link_to_their_results(client, course):
    ResearchTask.objects.filter(pk=course.first.pk).update(needs_review=True)
    ResearchTask.objects.filter(pk=course.second.pk).update(
        needs_review=True, conflicts_decided_at=timezone.now()
    )
    client.force_login(course.teacher)
    page = client.get(_url(course.channel, "period=7"), **EN).content.decode()
    section = page[page.index('id="conflicts"') : page.index('id="materials"')]
    assert f"/deep_research/task/{course.first.task_uuid}#conflicts" in section
    assert str(course.second.task_uuid) not in section  # decided: reviewed


def test_the_most_cited_materials_and_pages(client, course):
    other = ReportBuilder("q", ["a", "b"])
    other.fact(0, other.material(course.channel.slug, course.slides.pk, 3))
    other.fact(1, other.material(course.channel.slug, course.slides.pk, 7))
    task = _research(course.other_student, course.channel, report=other.json())
    material_coverage.record(task.pk)
    (cited,) = D.cited_materials(course.channel, D.period("7"))
    assert (cited.name, cited.researches, cited.pages) == ("week1.pdf", 2, [("3", 2), ("7", 1)])
    client.force_login(course.teacher)
    page = client.get(_url(course.channel, "period=7"), **EN).content.decode()
    assert f'href="/channels/{course.channel.slug}/materials/{course.slides.pk}/#p3">p. 3</a>' in page
    assert "facts of 2 researches rest on it" in page


def test_what_the_materials_fail_to_answer_is_grouped_and_marked_as_the_ais_words(client, course):
    again = ReportBuilder("形成性評量是什麼", ["什麼是形成性評量？"])
    material_coverage.record(_research(course.student, course.channel, report=again.json()).pk)
    topics, count = D.gap_topics(course.channel, D.period("7"))
    assert count == 2
    first = topics[0]
    assert first.text == "形成性評量的定義是什麼？" and first.researches == 2 and first.by_model
    assert {ex.text for ex in first.examples} == {"形成性評量的定義是什麼？", "什麼是形成性評量？"}
    client.force_login(course.teacher)
    page = client.get(_url(course.channel, "period=7"), **EN).content.decode()
    section = page[page.index('id="gaps"') : page.index('id="questions"')]
    assert "AI&#x27;s sub-question" in section or "AI's sub-question" in section
    assert 'data-by="model">形成性評量的定義是什麼？' in section
    assert "unanswered in 2 researches" in section
    assert f"/deep_research/task/{course.second.task_uuid}" in section


def _csv(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode("utf-8")
    assert body.startswith("\ufeff")
    return list(csv.reader(io.StringIO(body[1:])))


def test_the_csv_has_the_pages_rows_and_refuses_formulas(client, course):
    ResearchTask.objects.filter(pk=course.failed.pk).update(user_question="=HYPERLINK(1)")
    client.force_login(course.teacher)
    response = client.get(_url(course.channel, "period=7", csv=True), **EN)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    rows = _csv(response)
    assert rows[0][:3] == ["Asked", "Student", "Question"] and len(rows) == 6
    assert "'=HYPERLINK(1)" in [r[2] for r in rows]
    first = next(r for r in rows if r[-1].endswith(str(course.first.task_uuid)))
    assert first[1] == "s_alice" and first[3] == "Analyze" and first[6:8] == ["2", "1"]
    assert len(_csv(client.get(_url(course.channel, "period=7&bloom=analyze", csv=True)))) == 3
    topics = _csv(client.get(_url(course.channel, "period=7&table=topics", csv=True), **EN))
    assert topics[0][0] == "Topic" and len(topics) == 3
    assert {r[2] for r in topics[1:]} == {"布魯姆分類法有哪些層次？", "形成性評量的定義是什麼？"}


def test_the_csv_names_no_student_to_a_super_ta(client, course):
    client.force_login(course.super_ta)
    rows = _csv(client.get(_url(course.channel, "period=7", csv=True), **EN))
    students = {r[1] for r in rows[1:]}
    assert (
        "s_alice" not in students
        and f"Student {D.student_label(course.channel, course.student.pk)}" in students
    )


@pytest.mark.parametrize("who", ["super_ta", "admin", "teacher"])
def test_who_may_read_results_may_read_the_dashboard_and_its_csv(client, course, who):
    client.force_login(getattr(course, who))
    assert client.get(_url(course.channel)).status_code == 200
    assert client.get(_url(course.channel, csv=True)).status_code == 200


@pytest.mark.parametrize("who", ["student", "ta", "outsider", "other_super_ta", "other_teacher"])
def test_everybody_else_gets_404_on_the_page_and_the_csv(client, course, who):
    client.force_login(getattr(course, who))
    assert client.get(_url(course.channel)).status_code == 404
    assert client.get(_url(course.channel, "table=topics", csv=True)).status_code == 404


def test_a_super_ta_without_an_nda_is_refused(client, course):
    SuperTaNda.objects.filter(user=course.super_ta).delete()
    client.force_login(course.super_ta)
    assert client.get(_url(course.channel)).status_code == 404
    assert client.get(_url(course.channel, csv=True)).status_code == 404


def test_anonymous_visitors_are_sent_to_log_in(client, course):
    for url in (_url(course.channel), _url(course.channel, csv=True)):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_a_period_or_level_the_dashboard_does_not_know_is_a_readable_400(client, course):
    client.force_login(course.teacher)
    for query in ("period=yesterday", "bloom=genius", "page=0"):
        response = client.get(_url(course.channel, query), **EN)
        assert (
            response.status_code == 400
            and "Choose the last 7 or 30 days or this term" in response.content.decode()
        )
        assert client.get(_url(course.channel, query, csv=True)).status_code == 400


def test_the_channel_page_and_the_settings_link_the_dashboard_for_its_readers(client, course):
    dashboard = _url(course.channel)
    for who, sees in (("teacher", True), ("super_ta", True), ("student", False), ("ta", False)):
        client.force_login(getattr(course, who))
        assert (dashboard in client.get(f"/channels/{course.channel.slug}/").content.decode()) is sees, who
    client.force_login(course.teacher)
    assert dashboard in client.get(f"/channels/{course.channel.slug}/settings/").content.decode()
    queue = client.get("/deep_research/review").content.decode()
    assert dashboard in queue and _url(course.other_channel) not in queue


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_page_costs_the_same_queries_whatever_the_period_holds(client, course):
    client.force_login(course.teacher)
    url = _url(course.channel, "period=30")
    few = _queries(client, url)
    for n in range(30):
        report = ReportBuilder(f"問題 {n}", [f"子問題 {n}", f"另一個子問題 {n}"])
        report.fact(0, report.material(course.channel.slug, course.slides.pk, n % 4 + 1))
        task = _research(course.student, course.channel, bloom="apply", days_ago=n % 7, report=report.json())
        ResearchTask.objects.filter(pk=task.pk).update(needs_review=True)
    material_coverage.sweep()
    assert _queries(client, url) == few
