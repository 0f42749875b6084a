"""Questions answered only in the other language, on the real path: the demo course (an English/Chinese handout, a Chinese DOCX, slides),
the product's search tool, the runner, and a scripted model that searches only with the question
as written. A Chinese question reaches and cites the English passage that answers it, and an
English question the Chinese one, through the engine's translation; with the translation call
failing, the channel's glossary carries the query; from the terminal, the same."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from django.utils.translation import override as translation_override

from channels_app.models import Channel
from research.models import ResearchTask
from research.services import lifecycle, runner
from tests.support.scripted_llm import Scenario
from tests.support.stack import ROOT, child_env

ZH_QUESTION = "典型的預警儀表板結合哪三種訊號？"
EN_PASSAGE = "A typical early-warning dashboard combines three signals"
EN_QUESTION = "When the teacher is also the researcher, who should collect the consent forms?"
ZH_PASSAGE = "教師兼研究者時，應由第三方收取同意書"
# The weakest model worth serving: it searches the course materials once, with the question as
# written, and is done.
AS_WRITTEN = Scenario(
    complexity="simple", preferred_tools=["search_channel_materials"], tools_per_round=1, action_rounds=1
)


@pytest.fixture
def demo(settings, transactional_db):
    settings.DEBUG = True  # the demo's users have known passwords
    call_command("load_demo_data", verbosity=0)
    return Channel.objects.get(slug="demo-course")


def research(demo, question: str) -> ResearchTask:
    student = get_user_model().objects.get(username="student1")
    task, _ = lifecycle.task_start(user=student, channel=demo, question=question, queue=False)
    runner.execute_task(task.pk)
    task.refresh_from_db()
    assert task.status == "completed", task.error
    return task


def sources_by_id(task: ResearchTask) -> dict[int, dict]:
    """The research's sources by id, as its registry holds them: a passage returned again under
    the same title and page (another chunk of the page) keeps the id and text of the first."""
    seen: dict[int, dict] = {}
    for step in task.steps.order_by("index"):
        for source in (step.result_full or {}).get("sources", []):
            if "id" in source:
                seen.setdefault(source["id"], source)
    return seen


def cited_texts(task: ResearchTask) -> list[str]:
    seen = sources_by_id(task)
    return [seen[c["source_id"]]["text"] for c in task.citations_json]


def material_search(task: ResearchTask):
    (step,) = task.steps.filter(tool_name="search_channel_materials")
    return step


def test_a_chinese_question_cites_the_english_passage_through_the_models_translation(demo, llm):
    assert demo.material_languages == ["en", "zh"]
    llm.reset(AS_WRITTEN)
    task = research(demo, ZH_QUESTION)

    step = material_search(task)
    assert step.args == {"query": ZH_QUESTION}  # the model searched with the question as written
    queries = step.result_full["data"]["queries"]
    assert [(q["language"], q["by"]) for q in queries] == [("zh", "as_written"), ("en", "model_translation")]
    assert any(EN_PASSAGE in text for text in cited_texts(task)), task.citations_json
    # which query found the cited passage, as the result page shows it
    found = next(s for s in step.result_full["sources"] if EN_PASSAGE in s["text"])
    assert "model_translation" in {f["by"] for f in found["meta"]["found_by"]}
    # the translation is the plan's, marked as the model's, and was asked for once
    assert task.plan_json["translations"]["by"] == "model" and task.plan_json["translations"]["items"]
    assert len(llm.calls("translation")) == 1
    assert task.transcript.filter(role="translation").count() == 1


def test_the_result_page_shows_the_ais_translation_and_which_query_found_each_passage(demo, llm, client):
    llm.reset(AS_WRITTEN)
    task = research(demo, ZH_QUESTION)
    translation = task.plan_json["translations"]["items"][0]["translation"]
    client.force_login(task.user)

    with translation_override("en"):
        page = client.get(reverse("research_result", args=[task.task_uuid]), HTTP_ACCEPT_LANGUAGE="en")
    html = page.content.decode()

    assert page.status_code == 200
    # the report carries the plan's translation as the model's, and the page shows it from there
    (queries,) = task.report_json["plan"]["search_queries"]
    assert task.report_json["plan"]["by"] == "model" and queries["language"] == "en"
    assert queries["question"] == translation
    block = html[html.index('class="report-queries plan-translations"') :]
    block = block[: block.index("</section>")]
    assert "Written by the AI — not the sources&#x27; words · AI translation" in block
    assert f'<span lang="en">{translation}</span>' in block
    # under the search, each query that ran, the model's marked as its words, and what it found
    steps = html[html.index('class="step-queries small"') :]
    steps = steps[: steps.index("</ul>")]
    assert (
        '<span class="query-how">as written (Chinese):</span> <span class="by-model" data-by="model">'
        in steps
    )
    assert f'<q lang="zh-Hant">{ZH_QUESTION}</q>' in steps
    assert (
        '<span class="query-how">AI translation (English):</span> <span class="by-model" data-by="model">'
        in steps
    )
    assert "EDS101_week1-4_handout.pdf p. 1 (#1)" in steps
    # the Markdown download carries the same translation inside the AI's labelled quote
    md = client.get(reverse("research_download", args=[task.task_uuid]), HTTP_ACCEPT_LANGUAGE="en")
    text = md.content.decode()
    assert "## The question in the materials' languages" in text
    assert f"> - English: {translation}" in text.replace("\\", "")


def test_an_english_question_cites_the_chinese_passage(demo, llm):
    llm.reset(AS_WRITTEN)
    task = research(demo, EN_QUESTION)

    queries = material_search(task).result_full["data"]["queries"]
    assert [(q["language"], q["by"]) for q in queries] == [("en", "as_written"), ("zh", "model_translation")]
    assert any(ZH_PASSAGE in text for text in cited_texts(task)), task.citations_json


def test_without_the_translation_the_glossary_of_the_demo_files_carries_the_query(demo, llm):
    llm.reset(AS_WRITTEN)
    llm.fail("translation", "malformed", times=2)
    task = research(demo, "學習分析是什麼？常見的資料來源有哪些？")

    assert task.plan_json["translations"]["status"] == "failed"
    queries = material_search(task).result_full["data"]["queries"]
    assert (queries[1]["text"].lower(), queries[1]["by"]) == ("learning analytics", "glossary")
    assert any("Learning analytics is the measurement" in text for text in cited_texts(task))


@pytest.mark.slow
def test_the_terminal_research_of_the_chinese_question_cites_the_english_passage(
    worker, demo, llm, scripted_llm
):
    llm.reset(AS_WRITTEN)
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "deep_research",
            ZH_QUESTION,
            "--channel",
            "demo-course",
            "--user",
            "student1",
            "--json",
        ],
        cwd=ROOT,
        env=child_env(OPENAI_BASE_URL=scripted_llm.url),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["status"] == "completed"
    task = ResearchTask.objects.get(task_uuid=report["task_uuid"])
    assert any(EN_PASSAGE in text for text in cited_texts(task)), report["citations"]
    cited = {c["title"] for c in report["citations"]}
    assert "EDS101_week1-4_handout.pdf p. 1" in cited
