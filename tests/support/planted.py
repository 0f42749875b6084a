"""A lying model (the adversary), in English and in Traditional Chinese.

Switched on with `Scenario(invent="en")` or `Scenario(invent="zh")` on the scripted server: the
planner, the selection step and the interpreter each plant lies, one shape per hole, each with its
own distinctive token (HOLES), so a test can say which lie leaked and where:

- the plan: a sub-question and a hypothesis that name what the question lacks (a name, a year, a
  negation), and a judgement asked for;
- the selection: real span ids only (the schema's enum allows nothing else), tagged "for" the
  lying hypothesis, two spans of different sources marked as contradicting, an irrelevant span
  chosen as a fact, and the blog's wrong enrolment figure (the handbook settles that conflict);
- the interpretation: items citing real facts that say more than them (a name, a negation, a
  year and a scale in words and CJK numerals, a figure's metric and period labels, "every
  university in every year", a recombination of two facts), suggestions with a name and a year,
  and translations that change a number or add a name.

Lies that state a figure, a year, a name or a negation must reach no surface at all; the others
("every university in every year", a recombination, "abolished final exams") may stand only in
the blocks marked as the AI's, never as a fact (`AI_ONLY`).

The sources come from `planted_registry(lang)`: a course handbook (Uedu's own material), a blog
that states another enrolment figure (the web), an opinion page, and a notice in the other
language (so the interpreter is asked to translate)."""

from __future__ import annotations

import json
import re

from agent.engine.types import Source, ToolResult
from agent.tools.registry import ToolContext, ToolRegistry

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
        "課程公告": "本課程在2023年招收了1,200名學生。",
    },
    "zh": {
        "課程手冊": "本課程在2023年招收了1,200名學生。註冊人數比前一年增加15%。每週進度見圖3。",
        "招生部落格": "一篇部落格說本課程在2023年招收了4,321名學生。",
        "意見網頁": "學生對這門課的看法差異很大。",
        "Course notice": "The course enrolled 1,200 students in 2023.",
    },
}
TIERS = ("internal", "web", "web", "internal")
LOSING_VALUE = "4,321"

# The distinctive token of each lie.
HOLES = {
    "en": {
        "sub-question name": "Quorvex",
        "sub-question year": "1987",
        "hypothesis negation and name": "Drevanholt",
        "item name": "Ostrelle",
        "item negation": "It is false that",
        "item year in words": "two thousand and eleven",
        "item scale in words": "ninety thousand",
        "item figure label": "Q4 FY2019",
        "suggestion name": "Cravensby",
        "suggestion year": "1999",
        "translation number": "1,300",
        "translation name": "Tallowmere",
        "says more than its spans": "abolished final exams",
        "quantifier": "every university in every year",
    },
    "zh": {
        "sub-question name": "魁沃克斯大學",
        "sub-question year": "1987",
        "hypothesis negation and name": "德雷萬霍特大學",
        "item name": "奧斯特雷大學",
        "item negation": "並非",
        "item year in words": "二〇一一年",
        "item scale in words": "九萬名",
        "item figure label": "Q4 FY2019",
        "suggestion name": "克雷文斯比大學",
        "suggestion year": "1999",
        "translation number": "1,300",
        "translation name": "Tallowmere",
        "says more than its spans": "廢除期末考",
        "quantifier": "每所大學每一年",
    },
}
# Lies with no figure, year, name or negation of their own: the AI's block may show them (it is
# labelled as the AI's); a fact never does.
AI_ONLY = ("says more than its spans", "quantifier")


def leaked_holes(text: str, lang: str, holes=None) -> list[str]:
    """The holes whose token stands in `text` as a token of its own: not inside a longer run of
    ASCII letters and digits ("1987" is not found in a task's UUID ending "...31987")."""
    return [
        hole
        for hole, token in HOLES[lang].items()
        if (holes is None or hole in holes)
        and re.search(rf"(?<![0-9A-Za-z]){re.escape(token)}(?![0-9A-Za-z])", text)
    ]


def planted_registry(lang: str) -> ToolRegistry:
    registry = ToolRegistry()
    titles = list(SOURCES[lang])

    def source(n: int) -> Source:
        title = titles[n]
        text = SOURCES[lang][title]
        return Source(
            title=title, url=f"https://{TIERS[n]}.example/{n}", snippet=text, text=text, tier=TIERS[n]
        )

    @registry.tool(tier="internal", search=True, exact_figures=False)
    def search_channel_materials(ctx: ToolContext, query: str) -> ToolResult:
        """Search the course channel's materials.

        Args:
            query: what to look for
        """
        return ToolResult(sources=[source(0), source(3)])

    @registry.tool(tier="web", search=True, exact_figures=False, needs_web=False)
    def web_search(ctx: ToolContext, query: str) -> ToolResult:
        """Search the web.

        Args:
            query: search terms
        """
        return ToolResult(sources=[source(1), source(2)])

    return registry


def planner_reply(lang: str, body: dict, server) -> dict:
    h = HOLES[lang]
    if lang == "en":
        subs = [
            "How did enrolment in the learning analytics course develop?",
            f"Why did {h['sub-question name']} cut the course in {h['sub-question year']}?",
        ]
        hypotheses = [
            "Enrolment in the course grew",
            f"Enrolment did not fall at {h['hypothesis negation and name']}",
        ]
    else:
        subs = [
            "學習分析課程的註冊人數如何變化？",
            f"{h['sub-question name']}為何在{h['sub-question year']}年停開這門課？",
        ]
        hypotheses = ["這門課的註冊人數成長了", f"{h['hypothesis negation and name']}的註冊人數沒有下降"]
    plan = {
        "complexity": "simple",
        "sub_questions": [{"question": q, "suggested_tools": []} for q in subs],
        "hypotheses": hypotheses,
        "rationale": "",
        "asks_for_judgement": True,
    }
    return {"content": json.dumps(plan, ensure_ascii=False)}


def _spans(body: dict) -> list[tuple[str, str]]:
    from tests.support.scripted_llm import candidates_in

    return candidates_in(body)


def selector_reply(lang: str, body: dict, server) -> dict:
    """Real spans only (the enum allows nothing else): every candidate, the opinion tagged for the
    lying hypothesis, the handbook's figure and the opinion marked as contradicting."""
    spans = _spans(body)
    by_text = {text: span_id for span_id, text in spans}

    def find(*needles: str) -> str | None:
        return next((i for t, i in by_text.items() if any(n in t for n in needles)), None)

    opinion = find("Opinions", "看法")
    enrolled = find("enrolled 1,200", "招收了1,200")
    facts = []
    for span_id, _text in spans[:8]:
        tag = (2, "for") if span_id == opinion else (1, "for") if span_id == enrolled else (0, "none")
        facts.append({"span_ids": [span_id], "hypothesis": tag[0], "stance": tag[1]})
    contradictions = [{"span_ids": [enrolled, opinion]}] if enrolled and opinion else []
    return {"content": json.dumps({"facts": facts, "contradictions": contradictions})}


def interpreter_reply(lang: str, body: dict, server) -> dict:
    from tests.support.scripted_llm import FACT_LINE, SPAN_LINE, observations_of

    text = observations_of(body)
    found = FACT_LINE.findall(text)
    facts = [int(i) for i, _ in found]
    first = [next((int(i) for i, t in found if "1,200" in t), facts[0] if facts else 1)]
    both = list(dict.fromkeys(first + facts[:1]))
    h = HOLES[lang]
    if lang == "en":
        items = [
            ("reasoning", f"The course grew because {h['item name']} funded it", first),
            ("reasoning", f"{h['item negation']} the course enrolled students", first),
            ("reasoning", f"The course started in {h['item year in words']}", first),
            ("assumption", f"About {h['item scale in words']} students will enrol", first),
            ("reasoning", f"Enrolment for {h['item figure label']} was 1,200", first),
            ("reasoning", f"The course enrolled 1,200 students and {h['says more than its spans']}", first),
            ("assumption", f"This holds for {h['quantifier']}", both),
        ]
        suggestions = [
            f"Did {h['suggestion name']} fund the course?",
            f"What happened in {h['suggestion year']}?",
        ]
    else:
        items = [
            ("reasoning", f"這門課成長是因為{h['item name']}資助", first),
            ("reasoning", f"{h['item negation']}本課程招收了學生", first),
            ("reasoning", f"這門課始於{h['item year in words']}", first),
            ("assumption", f"將有{h['item scale in words']}學生註冊", first),
            ("reasoning", f"{h['item figure label']}的註冊人數是1,200", first),
            ("reasoning", f"本課程招收了1,200名學生並{h['says more than its spans']}", first),
            ("assumption", f"這對{h['quantifier']}都成立", both),
        ]
        suggestions = [f"{h['suggestion name']}資助了這門課嗎？", f"{h['suggestion year']}年發生了什麼？"]
    listed = text.split("Spans to translate into", 1)
    translations = []
    if len(listed) == 2:
        for n, (span_id, _words) in enumerate(SPAN_LINE.findall(listed[1])):
            if lang == "en":
                lie = (
                    "The course enrolled 1,300 students in 2023."
                    if n % 2 == 0
                    else ("The Tallowmere course enrolled 1,200 students in 2023.")
                )
            else:
                lie = (
                    "本課程在2023年招收了1,300名學生。"
                    if n % 2 == 0
                    else "Tallowmere課程在2023年招收了1,200名學生。"
                )
            translations.append({"span": span_id, "text": lie})
    reply = {
        "items": [{"kind": k, "text": t, "facts": f} for k, t, f in items],
        "suggestions": suggestions[:3],
        "translations": translations,
    }
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    wanted = set(schema.get("properties") or reply)
    return {"content": json.dumps({k: v for k, v in reply.items() if k in wanted}, ensure_ascii=False)}


REPLIES = {"planner": planner_reply, "selector": selector_reply, "interpreter": interpreter_reply}
