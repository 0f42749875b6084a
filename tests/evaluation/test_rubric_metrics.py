"""The light rubric (coverage of the item's rubric points, readability of the body), checked like
the other metrics by perturbation: a good answer to a v3 item scored through the real scoring path
with the judge reached over HTTP (the scripted server's coverage stand-in: the point's words among
the answer's sentences), then degraded in one known way. No exact figure is asserted."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from evaluation import dataset as datasets
from evaluation.judge import Judge, JudgeSettings
from evaluation.metrics.readability import readability, sentences
from evaluation.observed import Observation
from evaluation.scoring import item_scores, score, summarise
from tests.evaluation.test_metric_perturbations import _scripted_judge, answer
from tests.support.scripted_llm import _user_text, overlap_entails

ITEMS = {i.id: i for i in datasets.load("uedu_eval_v3.jsonl")}
RETRIEVAL = ITEMS["en-course-retrieval-1"]  # points: the one-week retention, why re-reading is preferred
NOT_REPORTED = ITEMS["en-course-retrieval-none-1"]  # point: says interleaved practice is not reported
BLOOM = ITEMS["zh-course-bloom-1"]
HANDOUT = "week3-retrieval-and-spacing.pdf"


def _payload(body: dict) -> list[dict]:
    return json.loads(re.search(r"<observations>\n(.*)\n</observations>", _user_text(body), re.S).group(1))


def _scripted_coverage(body: dict) -> dict:
    results = [
        {"id": i["id"], "addressed": overlap_entails(i["statement"], i["passages"])} for i in _payload(body)
    ]
    return {"content": json.dumps({"results": results})}


@pytest.fixture
def judge(db, llm):
    llm.on("entailment", _scripted_judge)
    llm.on("coverage", _scripted_coverage)
    return Judge.from_settings(JudgeSettings(model="judge-x", base_url=llm.url, api_key="k"))


RETENTION = (
    "Students who took practice quizzes retained 62 percent after one week, compared with 41 percent "
    "for students who re-read.",
    [(HANDOUT, (0, 1))],
)
PREFERENCE = (
    "Students prefer re-reading because familiar material feels fluent and that fluency is mistaken "
    "for learning.",
    [(HANDOUT, (2, 0))],
)


# --------------------------------------------------------------------------- coverage


def test_removing_the_sentences_that_address_a_point_lowers_coverage(judge, llm):
    good = score(answer(RETRIEVAL, [RETENTION, PREFERENCE]), RETRIEVAL, judge)
    assert good["coverage"] == 1.0 and good["no_verdict"] == 0
    assert [p["addressed"] for p in good["rubric"]] == [True, True]
    assert llm.calls("coverage")  # asked of the judge, apart from entailment

    for kept in ([RETENTION], [PREFERENCE]):
        worse = score(answer(RETRIEVAL, kept), RETRIEVAL, judge)
        assert worse["coverage"] < good["coverage"], kept
        assert [p["addressed"] for p in worse["rubric"]].count(False) == 1


def test_coverage_is_not_applicable_without_rubric_points_or_for_a_correct_abstention(judge, llm):
    plain = dataclasses.replace(RETRIEVAL, rubric={})
    assert score(answer(plain, [RETENTION, PREFERENCE]), plain, judge)["coverage"] is None
    asked = len(llm.calls("coverage"))

    abstention = [("The EDU210 handout does not report interleaved practice.", [])]
    right = score(answer(NOT_REPORTED, abstention), NOT_REPORTED, judge)
    assert right["outcome"] == "abstained_correctly" and right["coverage"] is None
    assert right["readability"] is None  # conditioned on answering, like pollution
    assert len(llm.calls("coverage")) == asked  # nothing asked when nothing counts

    # Citing where it looked does not make an abstention an answer.
    cited = [("The EDU210 handout does not report interleaved practice.", [(HANDOUT, (0, 1))])]
    cited = score(answer(NOT_REPORTED, cited), NOT_REPORTED, judge)
    assert cited["outcome"] == "abstained_correctly" and cited["coverage"] is None

    # An answer on an unanswerable item is judged like any answer: saying what the handout does
    # not report covers the point, inventing a figure does not.
    hedged = [
        (
            "The EDU210 handout does not report interleaved practice, but it reports retrieval practice.",
            [(HANDOUT, (0, 1))],
        )
    ]
    invented = [("Interleaved practice reached 55 percent retention after one week.", [(HANDOUT, (0, 1))])]
    hedged, invented = (score(answer(NOT_REPORTED, s), NOT_REPORTED, judge) for s in (hedged, invented))
    assert hedged["outcome"] == invented["outcome"] == "answered_unanswerable"
    assert hedged["coverage"] > invented["coverage"]


def test_a_refusal_or_a_failure_never_looks_best_on_the_rubric(judge):
    good = score(answer(RETRIEVAL, [RETENTION, PREFERENCE]), RETRIEVAL, judge)
    refusal = [("The course materials do not say how the two methods compare.", [])]
    wrong = score(answer(RETRIEVAL, refusal, limitations=["no_verified_claims"]), RETRIEVAL, judge)
    assert wrong["outcome"] == "abstained_wrongly"
    assert wrong["coverage"] < good["coverage"] and wrong["readability"] is None

    failed = score(Observation(task_uuid="t", status="failed"), RETRIEVAL, judge)
    assert failed["coverage"] == failed["readability"] == 0.0


def test_points_the_judge_leaves_out_are_no_verdict_and_reach_the_summaries(judge, llm):
    llm.on("coverage", lambda body: {"content": json.dumps({"results": []})})
    run = score(answer(RETRIEVAL, [RETENTION, PREFERENCE]), RETRIEVAL, judge)
    assert run["coverage"] is None and run["no_verdict"] == 2
    assert run["citation_recall"] > 0  # the entailment questions were answered

    llm.on("coverage", _scripted_coverage)
    good = score(answer(RETRIEVAL, [RETENTION, PREFERENCE]), RETRIEVAL, judge)
    rows = [{"category": "course", **item_scores(runs), "runs": runs} for runs in ([run], [good])]
    summary = summarise(rows)
    assert summary["coverage"] == good["coverage"]  # the unanswered item is left out of the mean
    assert summary["readability"] is not None and summary["no_verdict"] == 2


# --------------------------------------------------------------------------- readability


EN_GOOD = """## Retrieval practice against re-reading

In the course's study, students who took practice quizzes retained 62 percent after one week [1].
Students who re-read retained 41 percent [1].

## Why students still re-read

- Familiar material feels fluent when it is read again [2].
- That fluency is mistaken for learning [2].
- The handout suggests short quizzes instead [2].
"""

ZH_GOOD = """## 布魯姆修訂版的六個層次

六個層次由低到高依序為記憶、理解、應用、分析、評鑑與創造 [1]。

## 與一九五六年原版的差異

- 修訂版將名詞改為動詞 [1]。
- 修訂版把創造置於最高層次 [1]。
- 原版的最高層次是評鑑 [1]。
"""


def _run_on(markdown: str, language: str) -> str:
    """The same words as one sentence: headings and list marks gone, every sentence end a comma."""
    lines = [re.sub(r"^(#+|-)\s*", "", line) for line in markdown.splitlines() if line.strip()]
    if language == "en":
        text = " and ".join(line.rstrip(".") for line in lines)
        return text + "."
    return "，".join(line.rstrip("。") for line in lines) + "。"


@pytest.mark.parametrize(("item", "markdown"), [(RETRIEVAL, EN_GOOD), (BLOOM, ZH_GOOD)])
def test_one_long_run_on_sentence_lowers_readability(judge, item, markdown):
    statements = [RETENTION, PREFERENCE]
    if item is BLOOM:
        refs = [fact.passages[0] for fact in BLOOM.gold_facts]
        statements = [(f.fact, [(r.document, (r.page, r.paragraph))]) for f, r in zip(BLOOM.gold_facts, refs)]

    def run(text: str) -> dict:
        observation = answer(item, statements)
        observation.answer = text  # the body the reader sees; the units stay as they were
        return score(observation, item, judge)

    good, worse = run(markdown), run(_run_on(markdown, item.language))
    assert good["readability"] >= 0.9, good["readability"]
    assert worse["readability"] < good["readability"]
    assert worse["citation_recall"] == good["citation_recall"]  # the judge reads the units, not the layout


def test_readability_reads_words_in_english_and_characters_in_chinese():
    # One sentence of 30 Chinese characters reads fine; the same count of English words is long.
    chinese = "修訂版將名詞改為動詞並把創造置於最高層次而原版的最高層次是評鑑與綜合。"
    english = " ".join(["word"] * 30) + "."
    assert readability(chinese, "zh-hant") == 1.0
    assert readability(english, "en") < 1.0
    # A wall of short sentences is still a wall: structure counts apart from sentence length.
    wall = " ".join(["Students who re-read retained 41 percent."] * 30)
    split = "\n\n".join(["Students who re-read retained 41 percent."] * 30)
    assert readability(wall, "en") < readability(split, "en")
    # A table alone has no prose to measure; a decimal point does not end a sentence.
    assert readability("| Company | Revenue |\n|---|---|\n| BLTS | 12.48 |\n", "en") is None
    assert sentences("Revenue was USD 12.48 billion. Net income was 3.22 billion.") == [
        "Revenue was USD 12.48 billion.",
        "Net income was 3.22 billion.",
    ]
