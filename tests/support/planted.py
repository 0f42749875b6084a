"""A writer that invents and a verifier that agrees with everything, in English and in
Traditional Chinese: the weak or hostile models whose statements the code's checks must keep out of
a report.

Switched on with `Scenario(invent="en")` or `Scenario(invent="zh")` on the scripted server: the
claims step returns the faithful claims of the sources below plus the claim-level holes, the
writer returns a draft with one planted statement for every hole of the body, and the verifier
keeps its default verdict, "supported", for everything. Each planted statement carries its own
distinctive token (HOLES), so a test can say which hole leaked.

The sources come from `planted_registry(lang)`: a course handbook (Uedu's own material), a blog
that states another enrolment figure (the web: the handbook settles that conflict) and an
opinion page from which no claim is drawn."""

from __future__ import annotations

import json
import re

from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolRegistry
from tests.support.scripted_llm import sources_in

QUESTION = {
    "en": "How did enrolment in the learning analytics course develop, and should it grow?",
    "zh": "學習分析課程的註冊人數如何變化？這門課應該擴大嗎？",
}

SOURCES = {
    "en": {
        "Course handbook": (
            "The course enrolled 1,200 students in 2023. Enrolment rose 15% over the previous year. "
            "See Figure 3 for the weekly schedule."
        ),
        "Enrolment blog": "A blog says the course enrolled 4,321 students in 2023.",
        "Opinion page": "Opinions about the course differ widely among students.",
    },
    "zh": {
        "課程手冊": "本課程在2023年招收了1,200名學生。註冊人數比前一年增加15%。每週進度見圖3。",
        "招生部落格": "一篇部落格說本課程在2023年招收了4,321名學生。",
        "意見網頁": "學生對這門課的看法差異很大。",
    },
}
HANDBOOK, BLOG, OPINION = ({"en": en, "zh": zh} for en, zh in zip(SOURCES["en"], SOURCES["zh"], strict=True))

# The distinctive token of each hole, as the writer or the extractor plants it.
HOLES = {
    "en": {
        "heading": "Quorvex",
        "short sentence": "917",
        "question": "Quillanor",
        "table label": "Varkentine",
        "extra clause in a claim": "Morvanti",
        "extra clause in a partial unit": "Plessary",
        "judgement": "Drevanholt",
        "assumption": "Ostrelle",
        "writer conflict": "Cravensby",
        "losing side of a settled conflict": "Tallowmere",
        "figure from Figure 3": "3 billion",
        "wrong direction": "fell",
        "wrong year": "2019",
        "code block": "Codeblockzed",
        "counter-evidence": "Glimmerstone",
    },
    "zh": {
        "heading": "魁沃克斯",
        "short sentence": "917",
        "question": "奎拉諾",
        "table label": "瓦肯丁",
        "extra clause in a claim": "莫凡提",
        "extra clause in a partial unit": "普萊薩瑞",
        "judgement": "德雷萬霍特",
        "assumption": "奧斯特雷",
        "writer conflict": "克雷文斯比",
        "losing side of a settled conflict": "塔洛米爾",
        "figure from Figure 3": "3億",
        "wrong direction": "減少",
        "wrong year": "2019",
        "code block": "Codeblockzed",
        "counter-evidence": "格利默斯通",
    },
}
LOSING_VALUE = "4,321"


def leaked_holes(text: str, lang: str) -> list[str]:
    """The holes whose token stands in `text` as a token of its own: not inside a longer run of
    ASCII letters and digits, so "917" is found in "Up 917%" and not in a task's UUID ending
    "...818917" (a UUID holds "917" about once in 140 runs, and once failed CI on it)."""
    return [
        hole
        for hole, token in HOLES[lang].items()
        if re.search(rf"(?<![0-9A-Za-z]){re.escape(token)}(?![0-9A-Za-z])", text)
    ]


def planted_registry(lang: str) -> ToolRegistry:
    registry = ToolRegistry()
    titles = list(SOURCES[lang])

    def source(title: str, tier: str) -> Source:
        text = SOURCES[lang][title]
        return Source(
            title=title,
            url=f"https://{tier}.example/{titles.index(title)}",
            snippet=text,
            text=text,
            tier=tier,
        )

    @registry.tool(tier="internal", search=True, exact_figures=False)
    def search_channel_materials(ctx: ToolContext, query: str) -> ToolResult:
        """Search the course channel's materials.

        Args:
            query: what to look for
        """
        return ToolResult(sources=[source(titles[0], "internal")])

    @registry.tool(tier="web", search=True, exact_figures=False, needs_web=False)
    def web_search(ctx: ToolContext, query: str) -> ToolResult:
        """Search the web.

        Args:
            query: search terms
        """
        return ToolResult(sources=[source(titles[1], "web"), source(titles[2], "web")])

    return registry


def _claim(text, source_id, quote, *, kind="fact", entity="", metric="", period="", value=None, unit=""):
    return {
        "text": text,
        "kind": kind,
        "entity": entity,
        "metric": metric,
        "period": period,
        "value": value,
        "unit": unit,
        "source_ids": [source_id],
        "quotes": [{"source_id": source_id, "text": quote}],
        "confidence": 0.9,
    }


def claims_reply(lang: str, body: dict) -> dict:
    """c1-c3 are faithful; c4-c7 are the claim-level holes (an extra clause, a figure read from
    "Figure 3", a wrong direction, a wrong year), each quoting a real sentence of the handbook."""
    ids = {title: i for i, title, _ in sources_in(body)}
    hb, blog = ids[HANDBOOK[lang]], ids[BLOG[lang]]
    h = HOLES[lang]
    if lang == "en":
        enrolled, rose, fig = (
            "The course enrolled 1,200 students in 2023.",
            "Enrolment rose 15% over the previous year.",
            "See Figure 3 for the weekly schedule.",
        )
        claims = [
            _claim(
                enrolled.rstrip("."),
                hb,
                enrolled,
                kind="figure",
                entity="The course",
                metric="enrolment",
                period="2023",
                value=1200,
                unit="students",
            ),
            _claim(
                "The course enrolled 4,321 students in 2023",
                blog,
                "the course enrolled 4,321 students in 2023.",
                kind="figure",
                entity="The course",
                metric="enrolment",
                period="2023",
                value=4321,
                unit="students",
            ),
            _claim(rose.rstrip("."), hb, rose),
            _claim(
                f"Enrolment rose 15% over the previous year, driven by a secret {h['extra clause in a claim']} "
                "grant of 999 billion",
                hb,
                rose,
            ),
            _claim(
                f"The course received {h['figure from Figure 3']} in funding",
                hb,
                fig,
                kind="figure",
                entity="The course",
                metric="funding",
                value=3,
                unit="billion",
            ),
            _claim(f"Enrolment {h['wrong direction']} 15% over the previous year", hb, rose),
            _claim(
                f"The course enrolled 1,200 students in {h['wrong year']}",
                hb,
                enrolled,
                kind="figure",
                entity="The course",
                metric="enrolment",
                period=h["wrong year"],
                value=1200,
                unit="students",
            ),
        ]
    else:
        enrolled, rose, fig = (
            "本課程在2023年招收了1,200名學生。",
            "註冊人數比前一年增加15%。",
            "每週進度見圖3。",
        )
        claims = [
            _claim(
                enrolled.rstrip("。"),
                hb,
                enrolled,
                kind="figure",
                entity="本課程",
                metric="招收學生",
                period="2023",
                value=1200,
                unit="名學生",
            ),
            _claim(
                "本課程在2023年招收了4,321名學生",
                blog,
                "本課程在2023年招收了4,321名學生。",
                kind="figure",
                entity="本課程",
                metric="招收學生",
                period="2023",
                value=4321,
                unit="名學生",
            ),
            _claim(rose.rstrip("。"), hb, rose),
            _claim(f"註冊人數比前一年增加15%，源自秘密的{h['extra clause in a claim']}撥款999億", hb, rose),
            _claim(
                f"本課程獲得{h['figure from Figure 3']}經費",
                hb,
                fig,
                kind="figure",
                entity="本課程",
                metric="經費",
                value=3,
                unit="億",
            ),
            _claim(f"註冊人數比前一年{h['wrong direction']}15%", hb, rose),
            _claim(
                f"本課程在{h['wrong year']}年招收了1,200名學生",
                hb,
                enrolled,
                kind="figure",
                entity="本課程",
                metric="招收學生",
                period=h["wrong year"],
                value=1200,
                unit="名學生",
            ),
        ]
    return {"content": json.dumps({"claims": claims}, ensure_ascii=False)}


def writer_reply(lang: str, body: dict) -> dict:
    """A draft with every hole of the body planted, beside two faithful sentences."""
    ids = {title: i for i, title, _ in sources_in(body)}
    hb, opinion = ids.get(HANDBOOK[lang], 1), ids.get(OPINION[lang], 3)
    h = HOLES[lang]
    if lang == "en":
        answer = f"""## {h["heading"]} grant of 999 billion

The course enrolled 1,200 students in 2023 [c1]. Enrolment rose 15% over the previous year [c3].

Up {h["short sentence"]}%. [c1]

Did {h["question"]} fund the course? [c1]

The course enrolled 1,200 students in 2023, funded by {h["extra clause in a partial unit"]} [c1].

The course enrolled {LOSING_VALUE} students in 2023 according to {h["losing side of a settled conflict"]} [c2].

Enrolment rose 15% over the previous year, driven by a secret {h["extra clause in a claim"]} grant of 999 billion [c4].

The course received {h["figure from Figure 3"]} in funding [c5]. Enrolment {h["wrong direction"]} 15% over the previous year [c6].
The course enrolled 1,200 students in {h["wrong year"]} [c7].

| {h["table label"]} | Status |
|---|---|
| {h["table label"]} grant 777 | enrolled students [c1] |

| {h["table label"]} grant | Students |
|---|---|
| {h["table label"]} 2023 | 1,200 [c1] |

```
{h["code block"]}
```
"""
        summary = (
            f"The {h['heading']} grant funds the course [c1]. Enrolment rose 15% over the previous year [c3]."
        )
        judgement = {
            "text": f"The {h['judgement']} plan will succeed. The course should grow.",
            "claim_ids": [1, 3],
            "assumptions": [f"{h['assumption']} donates 555 million", "students keep enrolling"],
        }
        conflict = {
            "topic": f"{h['writer conflict']} dispute",
            "positions": [
                {"summary": f"{h['writer conflict']} says the course grew", "source_ids": [hb]},
                {"summary": f"{h['writer conflict']} says it shrank", "source_ids": [opinion]},
            ],
        }
        counter = {"summary": f"{h['counter-evidence']} disagrees with the growth", "source_ids": [hb]}
    else:
        answer = f"""## {h["heading"]}撥款999億

本課程在2023年招收了1,200名學生[c1]。註冊人數比前一年增加15%[c3]。

漲{h["short sentence"]}%。[c1]

{h["question"]}資助了這門課嗎？[c1]

本課程在2023年招收了1,200名學生，由{h["extra clause in a partial unit"]}資助[c1]。

據{h["losing side of a settled conflict"]}，本課程在2023年招收了{LOSING_VALUE}名學生[c2]。

註冊人數比前一年增加15%，源自秘密的{h["extra clause in a claim"]}撥款999億[c4]。

本課程獲得{h["figure from Figure 3"]}經費[c5]。註冊人數比前一年{h["wrong direction"]}15%[c6]。
本課程在{h["wrong year"]}年招收了1,200名學生[c7]。

| {h["table label"]} | 狀態 |
|---|---|
| {h["table label"]}撥款777 | 招收學生[c1] |

| {h["table label"]}撥款 | 學生 |
|---|---|
| {h["table label"]} 2023 | 1,200 [c1] |

```
{h["code block"]}
```
"""
        summary = f"{h['heading']}撥款資助本課程[c1]。註冊人數比前一年增加15%[c3]。"
        judgement = {
            "text": f"{h['judgement']}計畫必將成功。本課程應該擴大。",
            "claim_ids": [1, 3],
            "assumptions": [f"{h['assumption']}捐贈555百萬", "學生持續註冊"],
        }
        conflict = {
            "topic": f"{h['writer conflict']}爭議",
            "positions": [
                {"summary": f"{h['writer conflict']}說課程成長", "source_ids": [hb]},
                {"summary": f"{h['writer conflict']}說課程萎縮", "source_ids": [opinion]},
            ],
        }
        counter = {"summary": f"{h['counter-evidence']}反對成長之說", "source_ids": [hb]}
    return {
        "content": json.dumps(
            {
                "answer": answer,
                "summary": summary,
                "citations": [],
                "conflicts": [conflict],
                "counter_evidence": [counter],
                "judgement": judgement,
            },
            ensure_ascii=False,
        )
    }
