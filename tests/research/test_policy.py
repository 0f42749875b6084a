"""Deep Research and the light calls around it under the one policy: the teacher's rules in
every phase's prompt, the follow-up conversation, the tool context built in one place (channel
rules, the admin's pins, the country rule), every model call metered against the daily cap, the
rate limiter closed when its cache is away, and the reaper's bill."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from agent.engine.boundaries import narrowed_countries, url_observed, url_permitted
from agent.tools import REGISTRY
from quotas import services as quotas
from quotas.models import CostReservation
from research.models import ResearchTask, SourceStat, TranscriptEntry
from research.services import assistant_policy, bloom, lifecycle, runner
from tests.support.corpus_tools import corpus_registry
from tests.support.fake_openalex import FakeOpenAlex, work
from tests.support.research_fixtures import stored_research

RULE = "Never give complete homework solutions; explain the method and let the student finish."
PHASES = ("planner", "action", "reflection", "selector", "interpreter")


def run_here(personas, question="比較學習分析與布魯姆分類法在課程設計中的角色"):
    task, _ = lifecycle.task_start(
        user=personas.student, channel=personas.channel, question=question, queue=False
    )
    runner.execute_task(task.pk, registry=corpus_registry())
    task.refresh_from_db()
    return task


# --------------------------------------------------------------------------- the teacher's rules


def test_the_teachers_rule_reaches_every_phases_prompt(transactional_db, personas, llm):
    personas.channel.system_prompt = RULE
    personas.channel.save()
    task = run_here(personas)

    assert task.status == "completed", task.error
    for phase in PHASES:
        calls = llm.calls(phase)
        assert calls, f"no {phase} call"
        for call in calls:
            systems = [m["content"] for m in call["messages"] if m["role"] == "system"]
            # one system message (chat templates that refuse a second accept it): the phase's own
            # prompt first, the teacher's rule after it
            assert len(systems) == 1 and call["messages"][0]["role"] == "system", phase
            assert RULE in systems[0], f"{phase} did not receive the teacher's rule"
            assert systems[0].index(RULE) > 0 and not systems[0].startswith(RULE), (
                "the phase's own prompt stays first"
            )


def test_a_channel_without_rules_adds_nothing_to_the_prompts(transactional_db, personas, llm):
    run_here(personas)
    assert all(len([m for m in c["messages"] if m["role"] == "system"]) == 1 for c in llm.calls("planner"))


def test_the_judge_and_the_context_check_are_metered_against_the_cap(client, db, personas, llm):
    client.force_login(personas.student)
    client.post(
        "/api/deep_research/judge",
        {"question": "請比較學習分析的研究證據", "channel_id": personas.channel.pk},
        content_type="application/json",
    )
    client.post(
        "/api/deep_research/context_check",
        {"question": "請比較學習分析的研究證據", "channel_id": personas.channel.pk},
        content_type="application/json",
    )
    kinds = sorted(CostReservation.objects.filter(user=personas.student).values_list("kind", "settled"))
    assert kinds == [("context", True), ("judge", True)]


# --------------------------------------------------------------------------- follow-up research


def test_a_follow_up_research_receives_the_conversation_it_continues(transactional_db, personas, llm):
    stored_research(personas.student, personas.channel, question="比較學習分析與布魯姆分類法")
    task = run_here(personas, question="延續上一個研究：這些證據在台灣的大學適用嗎？")

    assert task.status == "completed", task.error
    planner_prompt = "\n".join(
        m["content"] for m in llm.calls("planner")[0]["messages"] if m["role"] == "user"
    )
    assert "Earlier conversation this question follows up" in planner_prompt
    assert "Student: 比較學習分析與布魯姆分類法" in planner_prompt
    assert "Learning analytics studies learner data [1]" in planner_prompt  # the earlier conclusions
    assert "[2] Retrieval-augmented generation — https://papers.example/rag" in planner_prompt  # and sources
    for role in ("selector", "interpreter"):
        prompt = "\n".join(m["content"] for m in llm.calls(role)[0]["messages"] if m["role"] == "user")
        assert "Earlier conversation this question follows up" in prompt, role


def test_a_first_research_has_no_conversation_and_sees_no_one_elses(transactional_db, personas, llm):
    stored_research(personas.other_student, personas.channel, question="bob's private question")
    run_here(personas)
    sent = str(llm.calls("planner")[0]["messages"])
    assert "Earlier conversation" not in sent and "bob's private question" not in sent


def test_the_follow_up_is_read_in_one_statement_and_a_task_without_its_question_row_continues_nothing(
    db, personas, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from channels_app.models import ChatLog
    from research.services import follow_up

    stored_research(personas.student, personas.channel, question="比較學習分析與布魯姆分類法")
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            queue=False, user=personas.student, channel=personas.channel, question="延續：在台灣適用嗎？"
        )
    with CaptureQueriesContext(connection) as queries:
        text = follow_up.research_follow_up(task)
    assert (
        text.startswith("Student: 比較學習分析與布魯姆分類法") and "延續" not in text
    )  # only the turns before it
    assert len(queries) == 1
    ChatLog.objects.filter(deep_research_task=task).delete()
    assert follow_up.research_follow_up(task) == ""


# --------------------------------------------------------------------------- the tool context


def test_the_tool_context_is_built_from_the_channel_and_the_admins_pins(db, personas, settings):
    personas.channel.web_allowed_domains = "edu.tw"
    personas.channel.web_denied_domains = "spam.example"
    personas.channel.scholarly_extra_countries = "us,gb"
    personas.channel.save()
    SourceStat.objects.create(
        kind=SourceStat.Kind.DOMAIN, key="content-farm.example", pinned=SourceStat.Pin.DENY
    )

    ctx = assistant_policy.tool_context(user_id=personas.student.pk, channel=personas.channel, language="en")

    assert (ctx.user_id, ctx.channel_id) == (personas.student.pk, personas.channel.pk)
    assert ctx.allowed_domains == ("edu.tw",)
    assert ctx.denied_domains == ("spam.example", "content-farm.example")
    assert ctx.scholarly_countries == (*settings.OPENALEX_COUNTRY_CODES, "us", "gb")


def test_one_domain_rule_for_every_caller_including_a_url_without_a_host():
    allowed, denied = ("edu.tw",), ("spam.example",)
    assert url_permitted("https://www.ntnu.edu.tw/x", allowed, denied)
    assert not url_permitted("https://edu.tw.evil.example/x", allowed, denied)
    assert not url_permitted("https://a.spam.example/x", (), denied)
    # A site-relative link is a Uedu record, not the web: the web rules do not apply to it.
    assert url_permitted("/catalogue/papers/7", allowed, denied)
    # Any other URL without a host is refused, with or without an allow-list.
    for hostless in ("mailto:someone@edu.tw", "javascript:alert(1)", "http:///etc/passwd", "//", ""):
        assert not url_permitted(hostless, allowed, denied), hostless
        assert not url_permitted(hostless, (), ()), hostless


def test_the_observed_url_rule():
    seen = {"https://news.example/a"}
    assert url_observed("https://news.example/a/#top", seen_urls=seen, student_text="")
    assert url_observed(
        "https://student.example/p", seen_urls=seen, student_text="please read https://student.example/p"
    )
    assert not url_observed("https://planted.example/", seen_urls=seen, student_text="read news.example")


def test_the_model_may_narrow_the_countries_never_widen_them():
    permitted = ("tw", "sg", "jp", "kr", "cn")
    assert narrowed_countries(None, permitted) == (list(permitted), [])
    assert narrowed_countries(["TW", "jp"], permitted) == (["tw", "jp"], [])
    assert narrowed_countries(["tw", "us"], permitted) == (["tw"], ["us"])


@pytest.fixture
def openalex(settings):
    with FakeOpenAlex(
        [
            work("W1", "Learning analytics in Taiwan", year=2023, countries=["tw"]),
            work("W2", "Learning analytics in the US", year=2023, countries=["us"]),
        ]
    ) as server:
        settings.OPENALEX_BASE_URL = server.url
        settings.UEDU_TOOL_CACHE_SECONDS = 0
        yield server


def test_search_external_papers_refuses_countries_outside_the_course_rule(db, personas, openalex):
    ctx = assistant_policy.tool_context(user_id=personas.student.pk, channel=personas.channel, language="en")
    toolbox = REGISTRY.bind(ctx)

    widened = toolbox.call("search_external_papers", {"query": "learning analytics", "countries": ["us"]})
    assert not widened.ok and "outside this course's countries" in widened.error
    assert openalex.requests_to("/works") == []  # refused before any request
    narrowed = toolbox.call("search_external_papers", {"query": "learning analytics", "countries": ["tw"]})
    assert narrowed.ok and narrowed.data["filters"]["countries"] == ["tw"]
    default = toolbox.call("search_external_papers", {"query": "learning analytics"})
    assert default.data["filters"]["countries"] == ["tw", "sg", "jp", "kr", "cn"]


def test_a_teacher_setting_may_widen_the_countries(db, personas, openalex):
    personas.channel.scholarly_extra_countries = "us"
    personas.channel.save()
    toolbox = REGISTRY.bind(
        assistant_policy.tool_context(user_id=personas.student.pk, channel=personas.channel, language="en")
    )
    result = toolbox.call("search_external_papers", {"query": "learning analytics", "countries": ["us"]})
    assert result.ok and result.data["filters"]["countries"] == ["us"]


# --------------------------------------------------------------------------- metering


def test_the_judge_is_refused_when_the_platform_cap_is_reached_without_calling_the_model(
    client, db, personas, llm, settings
):
    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("0")
    client.force_login(personas.student)
    response = client.post(
        "/api/deep_research/judge",
        {"question": "請比較學習分析的研究證據", "channel_id": personas.channel.pk},
        content_type="application/json",
    )
    assert response.status_code == 503 and response.json()["error"]["code"] == "platform_cap_reached"
    assert int(response["Retry-After"]) >= 60
    assert llm.calls("judge") == [] and CostReservation.objects.count() == 0


def test_bloom_is_metered_and_a_capped_day_leaves_the_level_for_a_retry(db, personas, llm, settings):
    from channels_app.models import ChatLog

    row = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", content="比較學習分析的研究"
    )
    assert bloom.classify(row.pk).status == "classified"
    spent = CostReservation.objects.get(kind="bloom")
    assert spent.user == personas.student and spent.settled and spent.spent_usd > 0

    settings.UEDU_DEEP_RESEARCH_DAILY_CAP_USD = Decimal("0")
    other = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", content="另一個問題"
    )
    assert bloom.classify(other.pk).status == "retry"
    assert len(llm.calls("bloom")) == 1


def test_the_rate_limiter_fails_closed_for_endpoints_that_call_a_model(client, db, personas, llm, settings):
    # The cache (Redis) is unreachable: nothing listens on port 1.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    client.force_login(personas.student)
    judged = client.post(
        "/api/deep_research/judge",
        {"question": "請比較學習分析的研究證據", "channel_id": personas.channel.pk},
        content_type="application/json",
    )
    checked = client.post(
        "/api/deep_research/context_check",
        {"question": "請比較學習分析的研究證據", "channel_id": personas.channel.pk},
        content_type="application/json",
    )
    assert judged.status_code == checked.status_code == 503
    assert judged.json()["error"]["code"] == "rate_limit_unavailable"
    assert llm.calls() == []


def test_the_reaper_settles_a_dead_task_at_the_cost_its_transcript_recorded(
    db, personas, settings, django_capture_on_commit_callbacks
):
    settings.UEDU_LLM_PRICES = {"default": [1.0, 10.0]}
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question="比較學習分析與布魯姆分類法"
        )
    long_ago = timezone.now() - timedelta(hours=1)
    ResearchTask.objects.filter(pk=task.pk).update(
        status="running", started_at=long_ago, last_heartbeat_at=long_ago
    )
    for seq, (prompt, completion) in enumerate([(1000, 200), (3000, 500)], start=1):
        TranscriptEntry.objects.create(
            task=task,
            seq=seq,
            role="planner",
            model="m",
            request={},
            response={"usage": {"prompt_tokens": prompt, "completion_tokens": completion}},
        )

    assert lifecycle.reap_stale_tasks()["running"] == 1

    task.refresh_from_db()
    expected = Decimal("0.011")  # (4000 × $1 + 700 × $10) / 1M
    assert task.status == "failed" and task.cost_usd == expected
    reservation = CostReservation.objects.get(reference=str(task.task_uuid))
    assert reservation.settled and reservation.spent_usd == expected
    assert quotas.cost_status().by_kind["research"] == expected


def test_the_cost_dashboard_shows_spend_by_kind_of_call(client, db, personas):
    today = timezone.localdate()
    for reference, kind, spent in (
        ("a", "research", "1.5"),
        ("b", "chat", "0.25"),
        ("c", "chat", "0.25"),
        ("d", "bloom", "0.01"),
        ("e", "eval_judge", "0.02"),
    ):
        CostReservation.objects.create(
            reference=reference,
            kind=kind,
            user=personas.student,
            day=today,
            reserved_usd=Decimal("9"),
            spent_usd=Decimal(spent),
            settled=True,
        )
    client.force_login(personas.admin)
    page = client.get("/admin/cost-dashboard/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    table = page[page.index('id="cost-by-kind"') : page.index('id="tasks-by-status"')]
    assert '<tr data-kind="research"><td>Deep Research</td><td>1.5000</td></tr>' in table
    assert '<tr data-kind="chat"><td>Ordinary chat</td><td>0.5000</td></tr>' in table
    assert '<tr data-kind="judge"><td>Deep Research suggestion (judge)</td><td>0.0000</td></tr>' in table
    assert '<tr data-kind="eval_judge"><td>Evaluation judge</td><td>0.0200</td></tr>' in table


# --------------------------------------------------------------------------- L1, L2: domain and URL rules


def test_an_internationalised_domain_is_denied_in_either_spelling():
    # The teacher writes the name in Unicode; the URL may carry it in punycode, or the reverse.
    assert not url_permitted("https://xn--fsqu00a.tw/page", allowed=(), denied=("例子.tw",))
    assert not url_permitted("https://sub.例子.tw/page", allowed=(), denied=("xn--fsqu00a.tw",))
    assert url_permitted("https://例子.tw/page", allowed=("xn--fsqu00a.tw",), denied=())
    assert url_permitted("https://other.tw/page", allowed=(), denied=("例子.tw",))


def test_the_observed_url_rule_matches_whole_addresses_not_parts_of_them():
    wrote = "please read https://example.com/a, and 請讀https://papers.example/p的第二段"
    assert url_observed("https://example.com/a", seen_urls=set(), student_text=wrote)
    assert url_observed("https://papers.example/p", seen_urls=set(), student_text=wrote)
    assert not url_observed("https://example.co", seen_urls=set(), student_text=wrote)
    assert not url_observed("https://example.com/", seen_urls=set(), student_text=wrote)
    assert not url_observed("https://papers.example/p的第二段", seen_urls=set(), student_text=wrote)
