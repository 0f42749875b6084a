"""The adversary on the real stack: a lying model (tests/support/planted.py) plants its lies
through the plan, the selection and the interpretation, in English and in Chinese; the research
runs through the real runner on the test database. No lie reaches a fact on any surface: the
stored report outside the AI's blocks, the stored citations, the verification record, the
ledger rows, the stored events, the task API, the report API, the result page outside
its labelled data-by="model" blocks (tests/support/model_blocks.py); a lie that states a
figure, a year, a name or a negation reaches no surface at all, the AI's blocks included. The
research still completes with what its sources say. (The engine alone: tests/agent/test_adversary.py.)"""

from __future__ import annotations

import json

import pytest

from research.models import ResearchClaim, ResearchEvent
from research.services import lifecycle, runner
from tests.support.model_blocks import EN_LABEL, ZH_LABEL, page_outside_model, text_outside_model
from tests.support.planted import AI_ONLY, QUESTION, leaked_holes, planted_registry
from tests.support.scripted_llm import Scenario

AI_BLOCKS = ("plan", "interpretation", "translations", "suggestions")


def outside_labelled_quotes(text: str) -> str:
    """A text surface (Markdown, terminal, e-mail) without its blockquotes labelled as the AI's,
    in either language."""
    return "\n".join(text_outside_model("\n".join(text_outside_model(text, EN_LABEL)), ZH_LABEL))


@pytest.fixture(params=["en", "zh"])
def planted(request, transactional_db, personas, llm, django_capture_on_commit_callbacks):
    lang = request.param
    llm.reset(Scenario(invent=lang))
    with django_capture_on_commit_callbacks(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=QUESTION[lang], queue=False
        )
        runner.execute_task(task.pk, registry=planted_registry(lang))
    task.refresh_from_db()
    return lang, task


def test_no_lie_reaches_a_stored_fact_record_or_row_and_the_research_completes(planted):
    lang, task = planted
    assert task.status == "completed", task.error
    report = task.report_json
    records = {
        "report outside the AI's blocks": {k: v for k, v in report.items() if k not in AI_BLOCKS},
        "citations": task.citations_json,
        "verification record": task.verification_json,
        "ledger": list(ResearchClaim.objects.filter(task=task).values_list("text", "reason")),
        "events": list(ResearchEvent.objects.filter(task=task).values_list("data", flat=True)),
    }
    for where, content in records.items():
        leaked = leaked_holes(json.dumps(content, ensure_ascii=False), lang)
        assert not leaked, f"{where} carries the planted {leaked}"
    ai = json.dumps({k: report[k] for k in AI_BLOCKS}, ensure_ascii=False)
    assert [h for h in leaked_holes(ai, lang) if h not in AI_ONLY] == []
    # ... and the research completed with what its sources say, the handbook over the blog
    texts = [s["text"] for s in report["spans"]]
    assert any("1,200" in t for t in texts) and report["sections"]
    (conflict,) = [c for c in report["conflicts"] if c["found_by"] == "values"]
    assert (
        conflict["status"] == "resolved"
        and conflict["sides"][conflict["prevailing_side"]]["tier"] == "internal"
    )
    assert report["judgement"] is not None
    # each lie is on the ledger as a dropped row with no text
    kinds = set(ResearchClaim.objects.filter(task=task, action="dropped").values_list("kind", flat=True))
    assert {"sub_question", "hypothesis", "reasoning", "assumption", "suggestion", "translation"} <= kinds
    assert (
        not ResearchClaim.objects.filter(task=task, action="dropped", kind="reasoning")
        .exclude(text="")
        .exists()
    )


def test_no_lie_is_served_by_the_api_and_none_stating_a_figure_year_name_or_negation_is_on_the_page(
    client, personas, planted
):
    lang, task = planted
    client.force_login(personas.student)
    for url in (
        f"/api/deep_research/task/{task.task_uuid}",
        f"/api/deep_research/task/{task.task_uuid}/report",
    ):
        served = client.get(url)
        assert served.status_code == 200
        data = served.json()
        data.pop("plan", None)  # the task's working plan and the report's plan block are the AI's
        if "report" in data:
            data["report"] = {k: v for k, v in data["report"].items() if k not in AI_BLOCKS}
        for block in AI_BLOCKS:
            data.pop(block, None)
        if "answer" in data:  # the report's Markdown: the AI's words are in its labelled quotes
            data["answer outside the AI's quotes"] = outside_labelled_quotes(data.pop("answer"))
        leaked = leaked_holes(json.dumps(data, ensure_ascii=False), lang)
        assert not leaked, f"{url} serves the planted {leaked}"
    client.cookies["django_language"] = "en" if lang == "en" else "zh-hant"
    page = client.get(f"/deep_research/task/{task.task_uuid}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "report-not-shown" in html
    # the ledger lists what was kept out, by kind and reason, in grey: nothing shown is doubtful
    ledger = html[html.index('id="ledger"') :]
    ledger = ledger[: ledger.index("</section>")]
    assert "not-shown" in ledger and "doubtful" not in ledger
    leaked = leaked_holes(page_outside_model(html), lang)
    assert not leaked, f"the page shows the planted {leaked} outside the AI's blocks"
    leaked = [h for h in leaked_holes(html, lang) if h not in AI_ONLY]
    assert not leaked, f"the page shows the planted {leaked}"


def test_no_lie_reaches_the_text_surfaces_the_chat_or_the_e_mail_outside_the_ais_blocks(
    client, personas, planted, llm, mailoutbox
):
    """The surfaces the page and the API do not cover: the Markdown download, the terminal's report
    (manage.py deep_research), the chat log's reply row and its bubble on the channel page, the
    notification e-mail, and a chat follow-up whose model states a lie with the research's [1]."""
    from io import StringIO

    from channels_app.models import ChatLog
    from chat.services import send_chat_message
    from research.management.commands.deep_research import Command
    from research.services import notifications
    from tests.support.planted import HOLES

    lang, task = planted

    client.force_login(personas.student)
    texts = {"the Markdown download": client.get(f"/deep_research/task/{task.task_uuid}/answer.md")}
    assert texts["the Markdown download"].status_code == 200
    texts["the Markdown download"] = texts["the Markdown download"].content.decode()
    terminal = Command(stdout=StringIO())
    terminal._report(task)
    texts["the terminal's report"] = terminal.stdout.getvalue()
    replies = ChatLog.objects.filter(deep_research_task=task).exclude(content="")
    texts["the chat log's reply row"] = "\n".join(replies.values_list("content", flat=True))
    personas.student.email = "student@example.edu"
    personas.student.save(update_fields=["email"])
    notifications.set_email_when_done(personas.student, True)
    task.refresh_from_db()
    assert notifications.research_finished(task)
    texts["the notification e-mail"] = mailoutbox[-1].body
    for where, text in texts.items():
        assert "1,200" in text, f"{where} lost what the sources say"
        leaked = leaked_holes(outside_labelled_quotes(text), lang)
        assert not leaked, f"{where} carries the planted {leaked} outside the AI's quotes"
        assert [h for h in leaked_holes(text, lang) if h not in AI_ONLY] == [], where

    # A chat follow-up: the model writes a lie and gives it the research's citation marker.
    lie = f"{HOLES[lang]['item name']} {HOLES[lang]['item negation']} {HOLES[lang]['translation number']} [1]"
    llm.on("chat", lambda body: {"content": f"{lie}."})
    send_chat_message(user=personas.student, channel=task.channel, message="And then?")
    page = client.get(f"/channels/{task.channel.slug}/").content.decode()
    # the lie is on the page, as the assistant's own words (so the scan below can see it)
    assert {"item name", "item negation"} <= set(leaked_holes(page, lang))
    leaked = leaked_holes(page_outside_model(page), lang)
    assert not leaked, f"the channel page shows the planted {leaked} outside the AI's blocks"
