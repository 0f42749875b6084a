"""A selection that fails never empties the report, and nothing relevant still completes the
research, on the real stack: the runner, the test database, the scripted server and the result
page in the reader's language. (The engine alone: tests/agent/test_engine.py.)"""

from __future__ import annotations

import html

import pytest

from research.services import lifecycle, runner
from tests.support.corpus_tools import corpus_registry
from tests.support.model_blocks import page_outside_model
from tests.support.scripted_llm import Scenario, ScriptedLLM

QUESTION = {
    "en": "Compare learning analytics and Bloom's taxonomy in course design",
    # the materials are English: the question names its terms in both languages
    "zh": "比較學習分析(learning analytics)與布魯姆分類(Bloom's taxonomy)在課程設計中的角色",
}
LANGUAGE_COOKIE = {"en": "en", "zh": "zh-hant"}


def run_task(personas, capture, lang, question=None):
    with capture(execute=False):
        task, _ = lifecycle.task_start(
            user=personas.student, channel=personas.channel, question=question or QUESTION[lang], queue=False
        )
        runner.execute_task(task.pk, registry=corpus_registry())
    task.refresh_from_db()
    return task


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_when_the_selection_fails_the_search_ranking_chooses_and_the_report_says_so(
    client, transactional_db, personas, llm, django_capture_on_commit_callbacks, lang
):
    llm.reset(Scenario(complexity="simple"))
    llm.fail("selector", "http500", times=50)  # the server fails every selection call
    task = run_task(personas, django_capture_on_commit_callbacks, lang)
    assert task.status == "completed", task.error
    report = task.report_json
    codes = {x["code"] for x in report["limitations"]}
    assert {"selection_failed", "selected_by_search_ranking"} <= codes
    facts = report["facts"]
    assert len(facts) >= 2 and {f["selected_by"] for f in facts} == {"search_ranking"}
    texts = [s["text"] for s in report["spans"]]
    assert any("Learning analytics" in t for t in texts) and any("Bloom's taxonomy" in t for t in texts)
    assert task.verification_json["status"] == "incomplete"
    # the ledger says who chose each fact
    assert set(task.claims.filter(kind="fact").values_list("reason", flat=True)) == {"search_ranking"}

    client.force_login(personas.student)
    client.cookies["django_language"] = LANGUAGE_COOKIE[lang]
    page = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    # the facts are the sources' words, outside the AI's blocks, under the page's heading
    outside = page_outside_model(page)
    assert {"en": "Facts from the sources", "zh": "來源中的事實"}[lang] in outside
    assert all(" ".join(t.split()) in outside for t in texts)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_when_nothing_relevant_is_found_the_research_completes_and_says_so(
    client, transactional_db, personas, llm, django_capture_on_commit_callbacks, lang
):
    llm.reset(Scenario(complexity="simple", select_per_call=0))  # the model selects nothing
    question = {"en": "What do dolphins eat in winter?", "zh": "海豚冬天吃什麼？"}[lang]
    task = run_task(personas, django_capture_on_commit_callbacks, lang, question)
    assert task.status == "completed", task.error
    report = task.report_json
    assert report["facts"] == [] and report["sections"] == []
    (limitation,) = [x for x in report["limitations"] if x["code"] == "no_facts"]
    consulted = [s["title"] for s in report["sources"]]
    assert limitation["detail"]["sources"] == len(consulted) and "Learning analytics overview" in consulted
    # the corpus offers a web tool: the report does not say the web was not searched
    assert "no_web_tools" not in {x["code"] for x in report["limitations"]}
    assert report["suggestions"]["items"]  # narrower questions the student could ask instead
    # the stored answer is not empty: it says so, in the research's language
    assert {"en": "## Nothing could be verified", "zh": "## 無法驗證任何內容"}[lang] in task.final_answer

    client.force_login(personas.student)
    client.cookies["django_language"] = LANGUAGE_COOKIE[lang]
    page = client.get(f"/deep_research/task/{task.task_uuid}").content.decode()
    said = {
        "en": "No passage of the sources could be verified as answering the question",
        "zh": "找到的來源中沒有任何段落能被驗證為回答了這個問題",
    }[lang]
    assert said in page
    consulted_list = page.split('<ul class="consulted">')[1].split("</ul>")[0]
    assert all(
        f">{html.escape(title)}</a>" in consulted_list for title in consulted
    )  # links to their passages


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_server_that_only_fills_the_schemas_it_is_sent_still_yields_relevant_facts(
    transactional_db, personas, settings, django_capture_on_commit_callbacks, lang
):
    """The real-path twin of the engine's test: no plan, no tool chosen, no span selected; the
    question becomes the plan, the engine searches, the ranking chooses. A server of its own: the
    client remembers per server that this one has no tool calls."""
    server = ScriptedLLM(Scenario(mode="schema_filler")).start()
    settings.OPENAI_BASE_URL = server.url
    question = {
        "en": "How do learning analytics, Bloom's taxonomy and language model answers relate?",
        "zh": "學習分析(learning analytics)、布魯姆分類(Bloom's taxonomy)與語言模型(language model)有何關係？",
    }[lang]
    try:
        task = run_task(personas, django_capture_on_commit_callbacks, lang, question)
    finally:
        server.stop()
    assert task.status == "completed", task.error
    report = task.report_json
    facts = report["facts"]
    assert len(facts) >= 3 and {f["selected_by"] for f in facts} == {"search_ranking"}
    terms = ("learning analytics", "bloom's taxonomy", "language model")
    texts = {s["id"]: s["text"].lower() for s in report["spans"]}
    assert all(any(t in " ".join(texts[i] for i in f["spans"]) for t in terms) for f in facts)
    codes = {x["code"] for x in report["limitations"]}
    assert {"plan_fallback", "searched_by_code", "selected_by_search_ranking"} <= codes
