"""The scripted model's translator (a test double at the network edge, docs/testing.md): the reply
of tests/support/scripted_llm.py to the engine's query-translation call
(agent/engine/translation.py).

A real model translates anything; this one knows a small dictionary of the demo course's and the
cross-language evaluation slice's terms (evaluation/datasets/build_v3_bilingual.py) and writes,
for each text, the terms it recognises in the order they appear, as a keyword query: enough for a
search, deterministic, and with no knowledge of where any answer is. A text it knows no term of
gets an empty translation, which the engine drops (the search then falls back to the glossary)."""

from __future__ import annotations

import json
import re

# Chinese -> English. Longer entries win over the shorter ones they contain (學習分析 over 分析).
ZH_EN = {
    # the demo course
    "典型": "typical",
    "預警儀表板": "early-warning dashboard",
    "儀表板": "dashboard",
    "結合": "combines",
    "三種": "three",
    "訊號": "signals",
    "學習分析": "learning analytics",
    "布魯姆分類法": "Bloom's taxonomy",
    "課程設計": "course design",
    "角色": "role",
    "比較": "compare",
    "檢索增強生成": "retrieval-augmented generation",
    "教材": "course materials",
    "知情同意": "informed consent",
    "去識別化": "de-identification",
    "倒數排名融合": "reciprocal rank fusion",
    # the evaluation slice
    "形成性評量": "formative assessment",
    "總結性評量": "summative assessment",
    "時間": "time",
    "目的": "purpose",
    "不同": "differ",
    "撰寫": "write",
    "評分規準": "rubric",
    "表現等級": "performance level",
    "等級": "level",
    "描述": "describe",
    "同儕互評": "peer assessment",
    "減少": "reduce",
    "評分": "marking",
    "偏誤": "bias",
    "翻轉教室": "flipped classroom",
    "課前影片": "pre-class video",
    "影片": "video",
    "多長": "how long",
    "結尾": "end",
    "提高": "increase",
    "非同步討論區": "asynchronous discussion forum",
    "參與度": "participation",
    "認知負荷理論": "cognitive load theory",
    "投影片": "slides",
    "設計": "design",
    "自我評量": "self-assessment",
    "最有用": "most useful",
    "學生": "students",
    "教師": "teacher",
}

# English -> Chinese, matched as whole words, case-insensitively; longer phrases first.
EN_ZH = {
    "consent forms": "同意書",
    "consent form": "同意書",
    "teacher": "教師",
    "researcher": "研究者",
    "collect": "收取",
    "reliability": "信度",
    "validity": "效度",
    "test": "測驗",
    "effect size": "效果量",
    "significance": "顯著",
    "samples": "樣本",
    "norm-referenced test": "常模參照測驗",
    "criterion-referenced test": "標準參照測驗",
    "scaffolding": "鷹架",
    "take it away": "撤除",
    "zone of proximal development": "近側發展區",
    "task": "任務",
    "cooperative learning": "合作學習",
    "groups": "小組",
    "graded": "計分",
    "differentiated instruction": "差異化教學",
    "adjust": "調整",
    "learning analytics": "學習分析",
    "bloom's taxonomy": "布魯姆分類法",
    "retrieval-augmented generation": "檢索增強生成",
    "irb": "IRB",
}


def translate(text: str, language: str) -> str:
    """`text` as the double's keyword query in `language` ("en" or "zh"); "" when it knows no term."""
    found: list[tuple[int, str]] = []
    if language == "en":
        taken = [False] * len(text)
        for term in sorted(ZH_EN, key=len, reverse=True):
            for match in re.finditer(re.escape(term), text):
                if not any(taken[match.start() : match.end()]):
                    taken[match.start() : match.end()] = [True] * len(term)
                    found.append((match.start(), ZH_EN[term]))
    else:
        lowered = text.lower()
        taken = [False] * len(lowered)
        for term in sorted(EN_ZH, key=len, reverse=True):
            for match in re.finditer(rf"\b{re.escape(term)}\b", lowered):
                if not any(taken[match.start() : match.end()]):
                    taken[match.start() : match.end()] = [True] * len(term)
                    found.append((match.start(), EN_ZH[term]))
    return " ".join(dict.fromkeys(word for _, word in sorted(found)))


def reply(user_text: str) -> dict:
    """The translation call's answer: every numbered text in every language asked for."""
    languages = re.findall(r"\b([a-z]{2}) \(", user_text.split("\n", 1)[0])
    texts = [
        (int(number), json.loads(quoted))
        for number, quoted in re.findall(r'^(\d+)\. (".*")$', user_text, re.M)
    ]
    return {
        "translations": [
            {"index": number, "language": language, "text": translate(text, language)}
            for number, text in texts
            for language in languages
        ]
    }
