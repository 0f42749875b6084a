"""A research that verifies nothing is not a dead end, on the real path: the demo course, the
product's tools over its materials, the runner, the scripted server, a question nothing in the
course answers and a model that chooses no passage. The result page (zh-Hant and English) links
each consulted source to its passage, says why nothing was verified and shows the AI's
suggestions; the Markdown download, the API's answer and the terminal carry the same. Where the
channel allows the web and the research ran without it, the page offers "retry with the web on",
a POST (with CSRF) that the server checks and that starts the new research through the one start
service. (The same renderings on stored reports: test_report_pages.py, test_report_text.py.)"""

from __future__ import annotations

import html
import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from channels_app.models import Channel, ChatLog
from quotas.models import CostReservation
from research.management.commands.deep_research import Command
from research.models import ResearchTask
from research.services import lifecycle, runner
from tests.support import report_examples as X
from tests.support.model_blocks import page_model_blocks, page_outside_model
from tests.support.scripted_llm import Scenario, interpret_from_facts

pytestmark = pytest.mark.slow

QUESTION = "What do dolphins eat in winter?"
EN = {"HTTP_ACCEPT_LANGUAGE": "en"}
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hant"}
WORDS = {
    "en": {
        "headline": "Nothing could be verified",
        "consulted": "Sources consulted",
        "why": [
            "The AI could not translate the research question",
            "1 source(s) contained instructions addressed to an AI; they were not used as evidence.",
            "The web was not searched: the web tools were off for this research.",
        ],
        "label": "Written by the AI — not the sources' words",
        "suggested": "Questions the AI suggests",
        "facts": ["Facts from the sources", "Findings"],
        "retry": "Retry with the web on",
    },
    "zh": {
        "headline": "無法驗證任何內容",
        "consulted": "查閱過的來源",
        "why": [
            "AI 無法翻譯研究問題",
            "有 1 個來源含有寫給 AI 的指令；這些內容未被當作證據。",
            "沒有搜尋網路：這次研究未開啟網路工具。",
        ],
        "label": "AI 撰寫（非來源原文）",
        "suggested": "AI 建議的問題",
        "facts": ["來源中的事實", "發現"],
        "retry": "開啟網路搜尋後重試",
    },
}
HEADERS = {"en": EN, "zh": ZH}


@pytest.fixture
def nothing(settings, transactional_db, llm, django_capture_on_commit_callbacks):
    """The research: the demo course with its web tools off, a question about dolphins, a model
    that chooses no passage (the search ranking finds none that shares the question's words) and
    suggests the question itself before two narrower ones."""
    settings.DEBUG = True  # the demo accounts: loaded only with DEBUG on
    settings.UEDU_DR_RATE_START = "1000/m"  # the per-minute rate is not what is under test
    call_command("load_demo_data", verbosity=0)
    channel = Channel.objects.get(slug="demo-course")
    Channel.objects.filter(pk=channel.pk).update(web_tools_enabled=False)
    student = get_user_model().objects.get(username="student1")
    llm.reset(
        Scenario(
            complexity="simple",
            select_per_call=0,
            preferred_tools=["search_channel_materials", "get_course_overview"],
        )
    )

    def weak_interpreter(body):  # it suggests the student's own question first
        reply = interpret_from_facts(body)
        reply["suggestions"].insert(0, QUESTION)
        return {"content": json.dumps(reply)}

    llm.on("interpreter", weak_interpreter)
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(user=student, channel=channel, question=QUESTION, queue=False)
        runner.execute_task(task.pk)
    task.refresh_from_db()
    assert task.status == "completed", task.error
    return task


def consulted_list(page: str) -> str:
    return page.split('<ul class="consulted">')[1].split("</ul>")[0]


def unescaped(text: str) -> str:
    return text.replace("\\", "")


def test_the_page_the_download_the_api_and_the_terminal_say_why_and_list_the_sources(client, nothing):
    task = nothing
    report = task.report_json
    assert task.web_tools is False and report["facts"] == [] and report["sections"] == []
    assert {"no_facts", "no_web_tools"} <= {x["code"] for x in report["limitations"]}
    # the stored answer (the chat's row of the research) says it all too
    assert "## Nothing could be verified" in task.final_answer
    assert WORDS["en"]["why"][2] in task.final_answer
    sources = report["sources"]
    assert len(sources) >= 3 and all(s["url"].startswith("/channels/demo-course/materials/") for s in sources)
    # the model's suggestions: the question again is dropped by code (a dead end), the two
    # narrower ones remain
    suggestions = report["suggestions"]["items"]
    assert len(suggestions) == 2 and all(s.rstrip("?") != QUESTION.rstrip("?") for s in suggestions)
    assert {"kind": "suggestion", "reason": "repeats_question", "span": "", "index": 0} in report["not_shown"]
    client.force_login(task.user)

    for lang, words in WORDS.items():
        page = client.get(f"/deep_research/task/{task.task_uuid}", **HEADERS[lang]).content.decode()
        section = page.split('class="report-nothing"')[1].split("</section>\n")[0]
        assert words["headline"] in section
        # each consulted source is a link to its passage (the material's page, at its place)
        listed = consulted_list(section)
        for source in sources:
            assert f'<a href="{html.escape(source["url"])}">{html.escape(source["title"])}</a>' in listed
        # why, in the reader's language, worded by the page from the report's codes
        why = html.unescape(section.split('<ul class="nothing-why">')[1].split("</ul>")[0])
        for reason in words["why"]:
            assert reason in why, (reason, why)
        # the AI's suggestions, only inside its labelled block
        blocks = " ".join(page_model_blocks(page))
        assert all(html.escape(s) in blocks for s in suggestions) and words["label"] in blocks
        assert not any(html.escape(s) in page_outside_model(page) for s in suggestions)
        # no facts heading, and no retry: the channel does not allow the web
        assert not any(f">{heading}</h4>" in page for heading in words["facts"])
        assert "retry-with-web" not in page and words["retry"] not in page

        # the Markdown download and the API's answer: the same, never an empty facts heading
        download = client.get(f"/deep_research/task/{task.task_uuid}/answer.md", **HEADERS[lang])
        answer = client.get(f"/api/deep_research/task/{task.task_uuid}", **HEADERS[lang]).json()["answer"]
        for text in (download.content.decode(), answer):
            text = unescaped(text)
            assert f"## {words['headline']}" in text
            assert not any(f"## {heading}" in text for heading in words["facts"])
            for source in sources:
                assert f"<http://testserver{source['url']}>" in text
            for reason in words["why"]:
                assert f"- {reason}" in text or any(
                    line.startswith("- ") and reason in line for line in text.splitlines()
                ), reason
            quote = text.split(f"## {words['suggested']}")[1].split("---")[0]
            assert f"> **{words['label']}**" in quote
            assert all(f"> - {s}" in quote for s in suggestions)

    # the terminal prints it in the research's language (English: the question is English)
    out = io.StringIO()
    Command(stdout=out)._report(task)
    text = unescaped(out.getvalue())
    assert "## Nothing could be verified" in text and "## Facts from the sources" not in text
    assert all(source["url"] in text for source in sources)
    assert all(reason in text for reason in WORDS["en"]["why"])
    assert f"> **{WORDS['en']['label']}** · Suggested questions" in text
    assert all(f"> - {s}" in text for s in suggestions)


def retry_form(page: str) -> str:
    found = re.search(r'<form class="nothing-actions retry-with-web".*?</form>', page, re.S)
    return found.group(0) if found else ""


def post_retry(client: Client, task: ResearchTask, page: str, **headers):
    """Post the page's own form, with the CSRF token it carries."""
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    action = html.unescape(re.search(r'action="([^"]+)"', retry_form(page)).group(1))
    return client.post(action, {"csrfmiddlewaretoken": token}, **headers)


def test_the_retry_with_the_web_on_starts_a_new_research_when_the_server_allows_it(
    nothing, settings, monkeypatch
):
    task = nothing
    student, channel = task.user, task.channel
    url = f"/deep_research/task/{task.task_uuid}/retry_with_web"
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(student)

    # the channel does not allow the web: no action, and a post is refused (400, readable)
    refused = browser.post(url, **EN)
    assert refused.status_code == 403  # no CSRF token
    page = browser.get(f"/deep_research/task/{task.task_uuid}", **EN).content.decode()
    assert not retry_form(page)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    refused = browser.post(url, {"csrfmiddlewaretoken": token}, **EN)
    assert refused.status_code == 400
    assert "The teacher has not allowed web sources in this channel." in refused.content.decode()

    Channel.objects.filter(pk=channel.pk).update(web_tools_enabled=True)
    for lang in ("zh", "en"):
        page = browser.get(f"/deep_research/task/{task.task_uuid}", **HEADERS[lang]).content.decode()
        form = retry_form(page)
        assert form and 'method="post"' in form and "csrfmiddlewaretoken" in form
        assert WORDS[lang]["retry"] in form
    # the answer's bubble in the chat offers it too
    chat = browser.get(f"/channels/{channel.slug}/", **EN).content.decode()
    assert f'action="/deep_research/task/{task.task_uuid}/retry_with_web"' in retry_form(chat)
    assert "csrfmiddlewaretoken" in retry_form(chat)

    # the teacher sees the research but it is not theirs: no action, and 403 in words
    teacher = Client(enforce_csrf_checks=True)
    teacher.force_login(get_user_model().objects.get(username="teacher"))
    seen = teacher.get(f"/deep_research/task/{task.task_uuid}", **ZH)
    assert seen.status_code == 200 and not retry_form(seen.content.decode())
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', seen.content.decode()).group(1)
    refused = teacher.post(url, {"csrfmiddlewaretoken": token}, **ZH)
    assert refused.status_code == 403 and "只有提出這個問題的學生可以重試。" in refused.content.decode()
    # a student of the channel who may not see it: 404, like any research of someone else
    other = Client()
    other.force_login(get_user_model().objects.get(username="student2"))
    assert other.post(url, **EN).status_code == 404
    assert ResearchTask.objects.count() == 1

    # the student's post starts the new research: the same question, the web on, charged
    # (its enqueue is held back: a worker another test left running must not claim it)
    held: list[int] = []
    monkeypatch.setattr(lifecycle, "enqueue", held.append)
    started = post_retry(browser, task, page, **EN)
    assert started.status_code == 302 and started["Location"] == f"/channels/{channel.slug}/"
    new = ResearchTask.objects.exclude(pk=task.pk).get()
    assert (new.user, new.channel, new.user_question, new.status) == (student, channel, QUESTION, "queued")
    assert new.web_tools is True and held == [new.pk]  # handed to the workers' queue
    assert {"web_search", "fetch_url"} <= set(runner.toolbox_for(new).names())
    assert "web_search" not in runner.toolbox_for(task).names()  # the first ran, and stays, without
    assert CostReservation.objects.filter(reference=str(new.task_uuid)).exists()
    assert ChatLog.objects.filter(deep_research_task=new, kind="request", content=QUESTION).exists()

    # the per-user limits hold: with one research under way and a limit of one, the next is refused
    settings.UEDU_DR_MAX_ACTIVE = {**settings.UEDU_DR_MAX_ACTIVE, "student": 1}
    refused = post_retry(browser, task, page, HTTP_ACCEPT="application/json", **EN)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "too_many_active"
    # Deep Research switched off in the channel: the student may not start one there
    Channel.objects.filter(pk=channel.pk).update(deep_research_enabled=False)
    refused = post_retry(browser, task, page, **EN)
    assert refused.status_code == 403
    assert "Deep Research is not enabled in this channel." in refused.content.decode()
    assert ResearchTask.objects.count() == 2
    # a research whose report has facts is not retried
    Channel.objects.filter(pk=channel.pk).update(deep_research_enabled=True)
    answered = X.stored_report(student, channel, X.english_report())
    ResearchTask.objects.filter(pk=answered.pk).update(web_tools=False)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    refused = browser.post(
        f"/deep_research/task/{answered.task_uuid}/retry_with_web", {"csrfmiddlewaretoken": token}, **EN
    )
    assert refused.status_code == 400
    assert "Only a finished research that verified nothing can be retried" in refused.content.decode()
    assert ResearchTask.objects.count() == 3
    # a research that ran with the web is not offered it again
    Channel.objects.filter(pk=channel.pk).update(deep_research_enabled=True)
    ResearchTask.objects.filter(pk=task.pk).update(web_tools=True)
    page = browser.get(f"/deep_research/task/{task.task_uuid}", **EN).content.decode()
    assert not retry_form(page)


def test_after_the_token_limit_a_research_that_verified_nothing_says_so_and_why(
    client, settings, transactional_db, llm, django_capture_on_commit_callbacks
):
    """The limit met while the plan is written: no source, no fact; the page, the download and
    the stored answer say that the research stopped at the token limit, not an empty report."""
    settings.DEBUG = True
    call_command("load_demo_data", verbosity=0)
    settings.UEDU_DR_MAX_TOKENS, settings.UEDU_DR_GRACE_TOKENS = 8_000, 20_000
    channel = Channel.objects.get(slug="demo-course")
    student = get_user_model().objects.get(username="student1")
    llm.reset(Scenario(complexity="simple", select_per_call=0, usage={"planner": 10**6}))
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(user=student, channel=channel, question=QUESTION, queue=False)
        runner.execute_task(task.pk)
    task.refresh_from_db()
    assert task.status == "completed" and task.limit_hit == "max_tokens", task.error
    assert task.report_json["facts"] == []
    assert "## Nothing could be verified" in task.final_answer
    assert "The research stopped at the token limit." in task.final_answer
    client.force_login(student)
    for lang, stopped in (
        ("en", "The research stopped at the token limit."),
        ("zh", "研究在達到token 上限時停止。"),
    ):
        page = client.get(f"/deep_research/task/{task.task_uuid}", **HEADERS[lang]).content.decode()
        section = page.split('class="report-nothing"')[1].split("</section>\n")[0]
        assert WORDS[lang]["headline"] in section and stopped in html.unescape(section)
        text = client.get(f"/deep_research/task/{task.task_uuid}/answer.md", **HEADERS[lang]).content.decode()
        assert f"## {WORDS[lang]['headline']}" in text and stopped in text
        assert not any(f"## {heading}" in text for heading in WORDS[lang]["facts"])
