"""The web pages: who may see what (per object; everyone else gets 404), what they show."""

from __future__ import annotations

import pytest

from channels_app.models import ChatLog
from research.models import ResearchTask
from tests.support.research_fixtures import stored_research


def chat_url(p):
    return f"/channels/{p.channel.slug}/"


@pytest.mark.parametrize("who", ["student", "ta", "super_ta", "teacher", "admin"])
def test_members_see_the_chat_page(client, personas, who):
    client.force_login(getattr(personas, who))
    response = client.get(chat_url(personas))
    assert response.status_code == 200
    assert personas.channel.name in response.content.decode()


@pytest.mark.parametrize("who", ["outsider", "other_teacher", "other_super_ta"])
def test_outsiders_get_404_on_the_chat_page(client, personas, who):
    client.force_login(getattr(personas, who))
    assert client.get(chat_url(personas)).status_code == 404


def test_anonymous_visitors_are_sent_to_log_in(client, personas):
    response = client.get(chat_url(personas))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_home_page_links_each_of_my_channels_to_its_chat(client, personas):
    client.force_login(personas.student)
    page = client.get("/").content.decode()
    assert f'href="{chat_url(personas)}"' in page
    client.force_login(personas.outsider)
    assert chat_url(personas) not in client.get("/").content.decode()


def test_the_chat_page_shows_only_my_own_conversation_oldest_first(client, personas):
    channel = personas.channel
    for user, text in [
        (personas.student, "first question"),
        (personas.other_student, "bob's secret"),
        (personas.student, "second question"),
    ]:
        ChatLog.objects.create(channel=channel, user=user, kind="request", type="chat", content=text)
    client.force_login(personas.student)
    page = client.get(chat_url(personas)).content.decode()
    assert "bob's secret" not in page
    assert page.index("first question") < page.index("second question")


def test_the_magnifier_is_there_only_when_the_channel_has_deep_research(client, personas):
    client.force_login(personas.student)
    assert 'id="dr-toggle"' in client.get(chat_url(personas)).content.decode()
    personas.channel.deep_research_enabled = False
    personas.channel.save()
    assert 'id="dr-toggle"' not in client.get(chat_url(personas)).content.decode()


def test_a_reload_renders_a_research_as_its_answer_with_links_to_its_citations(client, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    page = client.get(chat_url(personas)).content.decode()
    anchor = f"cite-{task.task_uuid.hex[:12]}"
    assert f'href="#{anchor}-1"' in page and f'id="{anchor}-1"' in page
    assert f'href="#{anchor}-2"' in page and f'id="{anchor}-2"' in page
    assert "https://docs.example/la" in page and "week1.pdf p. 3" in page
    assert 'class="badge origin-internal"' in page and 'class="badge origin-external"' in page
    assert "本答案由 AI 整合多個資料來源，請自行核對引用內容；不可直接用於作業繳交" in page
    assert 'data-action="acknowledge"' in page


def test_the_outcome_fragment_is_the_same_html_the_page_renders(client, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    fragment = client.get(f"/deep_research/task/{task.task_uuid}/outcome").content.decode().strip()
    assert fragment.startswith("<article") and fragment in client.get(chat_url(personas)).content.decode()


@pytest.mark.parametrize(
    "status, text", [("cancelled", "This research was cancelled"), ("failed", "could not be finished")]
)
def test_unfinished_researches_show_a_calm_message(client, personas, settings, status, text):
    settings.LANGUAGE_CODE = "en"
    stored_research(
        personas.student,
        personas.channel,
        status=status,
        error="planner failed: timeout" if status == "failed" else "",
    )
    client.force_login(personas.student)
    page = client.get(chat_url(personas), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert text in page and "dr-answer" not in page


def test_conflicts_and_a_limit_are_shown(client, personas):
    from research.models import ResearchTask
    from tests.support import report_examples as X

    task = X.stored_report(personas.student, personas.channel, X.english_report())
    ResearchTask.objects.filter(pk=task.pk).update(limit_hit="max_steps")
    client.force_login(personas.student)
    page = client.get(f"/deep_research/task/{task.task_uuid}", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "The sources give different figures (number) for 2021" in page
    assert "Online enrolment reached" in page and "In 2021," in page  # both sides, as their spans
    assert "Reached the step limit" in page and "<dd>the step limit</dd>" in page


# --------------------------------------------------------------------------- result page


@pytest.mark.parametrize("who", ["student", "teacher", "super_ta", "admin"])
def test_the_result_page_is_for_the_owner_the_teacher_super_tas_and_admins(client, personas, who):
    task = stored_research(personas.student, personas.channel, question="我的研究問題")
    client.force_login(getattr(personas, who))
    response = client.get(f"/deep_research/task/{task.task_uuid}")
    assert response.status_code == 200
    page = response.content.decode()
    assert (
        "我的研究問題" in page
        and "search_channel_materials" in page
        and "What is learning analytics?" in page
    )


@pytest.mark.parametrize("who", ["other_student", "ta", "outsider", "other_teacher", "other_super_ta"])
@pytest.mark.parametrize("path", ["", "/answer.md", "/turn", "/outcome"])
def test_everybody_else_gets_404_on_every_research_page(client, personas, who, path):
    task = stored_research(personas.student, personas.channel)
    client.force_login(getattr(personas, who))
    assert client.get(f"/deep_research/task/{task.task_uuid}{path}").status_code == 404


def test_openings_of_the_share_link_by_others_who_may_see_it_are_counted(client, personas):
    import re
    from html import unescape

    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    page = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    link = unescape(re.search(r'class="share-link" type="text" readonly value="([^"]+)"', page).group(1))
    path = link.split("testserver", 1)[1]
    client.get(path)  # the owner's own opening does not count
    client.force_login(personas.teacher)
    for _ in range(5):
        client.get(path)  # one reader reloading counts once (L9)
    client.force_login(personas.super_ta)
    client.get(path)
    client.get(f"/deep_research/task/{task.task_uuid}")  # not through the link
    client.force_login(personas.other_student)  # may not see it: 404, not counted
    assert client.get(path).status_code == 404
    task.refresh_from_db()
    assert task.shared_views == 2
    # Only the owner is offered the link.
    client.force_login(personas.teacher)
    assert "share-link" not in client.get(path).content.decode()


def test_only_the_owner_gets_the_i_understand_button(client, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.teacher)
    assert (
        'data-action="acknowledge"'
        not in client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    )


def test_the_markdown_download_has_the_answer_and_a_numbered_source_list(client, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    response = client.get(f"/deep_research/task/{task.task_uuid}/answer.md")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert (
        response["Content-Disposition"].startswith("attachment;") and ".md" in response["Content-Disposition"]
    )
    text = response.content.decode()
    assert "Learning analytics studies learner data [1]" in text
    assert "1. Learning analytics overview — <https://docs.example/la>" in text
    assert "2. Retrieval-augmented generation — <https://papers.example/rag>" in text
    assert f"/deep_research/task/{task.task_uuid}" in text


def test_an_unfinished_research_has_no_download(client, personas):
    task = stored_research(personas.student, personas.channel, status="cancelled")
    client.force_login(personas.student)
    assert client.get(f"/deep_research/task/{task.task_uuid}/answer.md").status_code == 404


# --------------------------------------------------------------------------- history


def test_my_history_lists_only_my_researches_filtered_and_paged(client, personas):
    for i in range(3):
        stored_research(personas.student, personas.channel, question=f"completed question {i}")
    stored_research(personas.student, personas.channel, question="cancelled question", status="cancelled")
    stored_research(personas.other_student, personas.channel, question="someone else's question")
    client.force_login(personas.student)
    page = client.get("/deep_research/my").content.decode()
    assert page.count('class="history-link"') == 4 and "someone else" not in page
    page = client.get("/deep_research/my?status=cancelled").content.decode()
    assert page.count('class="history-link"') == 1 and "cancelled question" in page
    page = client.get("/deep_research/my?status=completed&per_page=10").content.decode()
    assert page.count('class="history-link"') == 3
    task = ResearchTask.objects.get(user_question="completed question 0")
    assert f'href="/deep_research/task/{task.task_uuid}"' in page


def test_history_pages_by_the_chosen_size(client, personas):
    for i in range(12):
        stored_research(personas.student, personas.channel, question=f"question number {i}")
    client.force_login(personas.student)
    first = client.get("/deep_research/my?per_page=10").content.decode()
    second = client.get("/deep_research/my?per_page=10&page=2").content.decode()
    assert first.count('class="history-link"') == 10 and second.count('class="history-link"') == 2


def test_a_bad_history_filter_says_so_and_shows_everything(client, personas):
    stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    response = client.get("/deep_research/my?status=bogus&per_page=7", HTTP_ACCEPT_LANGUAGE="en")
    page = response.content.decode()
    assert response.status_code == 200 and "That filter is not valid" in page
    assert page.count('class="history-link"') == 1


# --------------------------------------------------------------------------- Bloom badge


def test_the_bloom_badge_is_served_to_the_questions_owner_only(client, personas):
    row = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", type="chat", content="q"
    )
    client.force_login(personas.student)
    pending = client.get(f"/chat/log/{row.pk}/bloom?polls=3")
    assert pending.status_code == 200
    # Not classified yet: no badge, and the slot asks again, counting its polls.
    assert "badge" not in pending.content.decode()
    assert f'hx-get="/chat/log/{row.pk}/bloom?polls=4"' in pending.content.decode()
    row.bloom_level = "analyze"
    row.save()
    for language, label, title in (
        ("zh-hant", "分析", "這個問題的 Bloom 認知層次"),
        ("en", "Analyze", "Bloom level of this question"),
    ):
        badge = client.get(
            f"/chat/log/{row.pk}/bloom?polls=4", HTTP_ACCEPT_LANGUAGE=language
        ).content.decode()
        assert f'<span class="badge bloom bloom-analyze" title="{title}">{label}</span>' in badge
        assert "hx-get" not in badge  # classified: the asking stops
    for other in (personas.other_student, personas.teacher, personas.admin):
        client.force_login(other)
        assert client.get(f"/chat/log/{row.pk}/bloom").status_code == 404


def test_a_pending_bloom_badge_stops_asking_after_its_last_poll(client, personas):
    from chat.templatetags.chat_ui import BLOOM_POLLS

    row = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", type="chat", content="q"
    )
    client.force_login(personas.student)
    assert "hx-get" in client.get(f"/chat/log/{row.pk}/bloom?polls={BLOOM_POLLS - 1}").content.decode()
    for polls in (BLOOM_POLLS, "x"):
        assert "hx-get" not in client.get(f"/chat/log/{row.pk}/bloom?polls={polls}").content.decode()


def test_a_filled_bloom_level_is_rendered_on_the_question_and_not_polled(client, personas):
    ChatLog.objects.create(
        channel=personas.channel,
        user=personas.student,
        kind="request",
        type="chat",
        content="q",
        bloom_level="evaluate",
    )
    client.force_login(personas.student)
    page = client.get(chat_url(personas), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'class="badge bloom bloom-evaluate"' in page and "/bloom?polls=" not in page


def test_a_fresh_question_on_the_page_polls_for_its_bloom_badge(client, personas):
    row = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", type="chat", content="q"
    )
    client.force_login(personas.student)
    page = client.get(chat_url(personas)).content.decode()
    assert f'hx-get="/chat/log/{row.pk}/bloom?polls=1" hx-trigger="load delay:4s"' in page


# --------------------------------------------------------------------------- headers


def test_every_page_carries_a_strict_content_security_policy(client, personas):
    client.force_login(personas.student)
    for path in ["/", chat_url(personas), "/deep_research/my", "/accounts/login/"]:
        response = client.get(path)
        policy = response["Content-Security-Policy"]
        assert (
            "default-src 'self'" in policy
            and "script-src 'self'" in policy
            and "img-src 'self' data:" in policy
        )
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
        assert response["X-Frame-Options"] == "DENY" and response["Referrer-Policy"] == "same-origin"


def test_templates_hold_no_inline_script_handler_or_style(client, personas):
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    for path in ["/", chat_url(personas), "/deep_research/my", f"/deep_research/task/{task.task_uuid}"]:
        page = client.get(path).content.decode()
        for script in page.split("<script")[1:]:
            head = script.split(">", 1)[0]
            assert "src=" in head or 'type="application/json"' in head, head
        assert " onclick=" not in page and " onchange=" not in page and " style=" not in page


def test_a_chat_answer_and_a_research_answer_list_their_sources_with_one_template(client, personas):
    question = ChatLog.objects.create(
        channel=personas.channel, user=personas.student, kind="request", content="What is Bloom's taxonomy?"
    )
    ChatLog.objects.create(
        channel=personas.channel,
        user=personas.student,
        kind="response",
        in_reply_to=question,
        content="It orders cognitive skills [1].",
        citations_json=[
            {
                "number": 1,
                "title": "Bloom's taxonomy handout",
                "url": "https://docs.example/bloom",
                "source_tool": "search_channel_materials",
                "snippet": "Remembering to creating.",
                "locator": "week2.pdf p. 1",
                "origin": "internal",
            }
        ],
    )
    task = stored_research(personas.student, personas.channel)
    client.force_login(personas.student)
    response = client.get(chat_url(personas))
    page = response.content.decode()

    used = [t.name for t in response.templates]
    assert used.count("research/_citations.html") == 2 and "chat/_sources.html" not in used
    lists = page.split('<section class="citations">')[1:]
    assert len(lists) == 2
    chat_list, research_list = sorted(lists, key=lambda html: "Bloom's taxonomy handout" not in html)
    assert "week2.pdf p. 1" in chat_list and 'class="badge origin-internal"' in chat_list
    # only a research's sources can be reported (the chat answer's have no report form)
    assert "citation_report" not in chat_list.split("</section>")[0]
    assert f"/deep_research/task/{task.task_uuid}/citation_report" in research_list.split("</section>")[0]


def test_the_result_page_shows_the_questions_bloom_level_as_a_badge(client, personas):
    from django.utils import translation

    task = stored_research(personas.student, personas.channel, question="比較兩種方法")
    client.force_login(personas.teacher)
    assert "badge bloom" not in client.get(f"/deep_research/task/{task.task_uuid}").content.decode()

    # The classifier's level is stored on the question's chat row as a code.
    ChatLog.objects.filter(deep_research_task=task, kind="request").update(
        bloom_level="analyze", bloom_confidence=0.8
    )
    page = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    with translation.override("zh-hant"):  # the page is in the reader's language
        label = str(ChatLog.Bloom.ANALYZE.label)
    assert label != "Analyze"
    assert f'<span class="badge bloom bloom-analyze" title="這個問題的 Bloom 認知層次">{label}</span>' in page
