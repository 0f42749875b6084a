"""Which spans of the demo course answer the real-model bench's question (bench/real_model.py)
and the schema-filler's twin test (tests/research/test_demo_relevance.py).

The question, in English and zh-Hant: "How do learning analytics dashboards help students reflect
on their learning?" The list below was made by hand, by reading every passage of the demo
course's three materials (channels_app/demo_materials.py) and the demo catalogue's abstracts
(catalogue/demo.py), before any run was scored against it. A passage is on the list when it says
what a learning-analytics dashboard shows, how its readings are to be used, or what learning
analytics is for; headings (they state nothing), Bloom's taxonomy, the IRB and RAG are not. The
materials are bilingual, so one list serves both languages.

Rule: both texts with all whitespace removed and NFKC-casefolded (PDF extraction breaks lines
inside words and CJK sentences), a span is relevant when runs of at least OVERLAP characters that
it shares with listed passages cover at least two thirds of it: a span cut from a listed passage
(a whole sentence, or the part of it a chunk or a line break left) is relevant; a heading or an
example that only repeats a few of the passages' words ("Learning analytics", "learning
management system") is not, nor is a crumb shorter than OVERLAP ("發言。"). A fact is relevant
when one of its spans is.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

OVERLAP = 16

QUESTIONS = {
    "en": "How do learning analytics dashboards help students reflect on their learning?",
    "zh-hant": "學習分析儀表板如何幫助學生反思自己的學習？",
}

# (passage, why it answers the question). Verbatim from the demo materials.
PASSAGES = [
    (
        "Learning analytics is the measurement, collection, analysis and reporting of data about learners "
        "and their contexts, for the purpose of understanding and improving learning and the environments "
        "in which it occurs.",
        "what learning analytics is for",
    ),
    (
        "In this course we treat it as a cycle: learners generate data, the data become metrics, metrics "
        "inform an intervention, and the intervention changes how learners act.",
        "the feedback loop from learners' data back to how they act",
    ),
    (
        "A typical early-warning dashboard combines three signals: assignment submission, quiz performance "
        "and activity in the learning management system.",
        "what a dashboard shows",
    ),
    (
        "Predictions are probabilities, not verdicts; a student flagged as at risk should be offered "
        "support, never penalised because of the flag.",
        "how a dashboard's flag is to be used",
    ),
    (
        "學習分析（learning analytics）是蒐集、分析並回報學習者及其情境資料的做法，目的是理解並改善學習。",
        "what learning analytics is for (zh)",
    ),
    (
        "常見的資料來源包括學習管理系統的點擊紀錄、作業繳交時間、測驗作答歷程與討論區發言。",
        "the data a dashboard reports (zh)",
    ),
    (
        "單一指標很少足以判斷學習狀況：登入次數多不代表理解深入，因此分析結果應與教師的專業判斷互相印證。",
        "how a dashboard's indicators are to be read (zh)",
    ),
    (
        "說明：平台會自動判斷學生提問的 Bloom 層次，教師可以從儀表板看到全班提問的分布。",
        "what the course platform's dashboard shows (zh, slide notes)",
    ),
    (
        "訪談與眼動資料顯示，教師多依賴摘要指標而忽略分布資訊。Teachers rely on summary indicators more "
        "than on distributions.",
        "how dashboards are read (catalogue abstract)",
    ),
]


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text or "").casefold())


_NORMAL = [_normal(p) for p, _ in PASSAGES]


def relevant_span(text: str) -> bool:
    span = _normal(text)
    if len(span) < OVERLAP:
        return False
    covered: set[int] = set()
    for passage in _NORMAL:
        matcher = difflib.SequenceMatcher(None, span, passage, autojunk=False)
        for block in matcher.get_matching_blocks():
            if block.size >= OVERLAP:
                covered.update(range(block.a, block.a + block.size))
    return len(covered) * 3 >= len(span) * 2


def relevant_facts(report: dict) -> list[dict]:
    """The facts of a stored report (report_json, schema 2.x) that one relevant span or more
    carries, in the report's order."""
    texts = {s["id"]: s.get("text") or "" for s in report.get("spans") or []}
    return [f for f in report.get("facts") or [] if any(relevant_span(texts.get(i, "")) for i in f["spans"])]
