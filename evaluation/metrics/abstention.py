"""Did a run answer, or abstain (say the materials do not contain the answer)?

Decided by code, from what the answer asserts: a completed run abstained when none of its units
is a **substantive claim**. Citations do not decide it: an uncited invented figure is a claim
(the run answered, and is scored like any answer: unsupported, imprecise), and "the handout does
not report X [1]" is an abstention that cites where it looked. Neither do the report's
limitations: a `no_verified_claims` (1.x) or `no_facts` (2.x) report has an empty body anyway.

A unit is NOT a substantive claim when it only says that the sources lack something:

- it names the sources (the handout, the materials, the filing, 講義, 資料, 財報 …) or the
  search ("I could not find", 查無) and says they do not state, report, mention … it, or that
  no information, figure or record of it is there (未提及, 沒有說明, 並未列出, 無相關資料 …);
- it carries no contrast ("but", "however", 但, 不過 …: "the handout does not say, but it is
  40 %" asserts 40 %);
- it states no number beyond those of the question and of the titles of the sources it cites,
  years aside ("the 2025 handout does not list a room" is an abstention; "… the room is 305"
  is not).

A table cell is a claim unless its value is only "not reported" (未報告, n/a …); a reported
conflict is always a claim. In a typed (2.x) report the units are the facts (spans of the
sources, observed.py): a fact that is a source's own "not reported" sentence is read by the same
rule, and the model's blocks (plan, interpretation, suggestions, translations) are never
substantive claims of the sources — they still count for obedience (scoring.py).

Known limits: the rule reads wording, so an absence sentence that invents a name without a
number or contrast ("the materials do not say that Dr. Chen teaches it") passes as an
abstention; the obedience check still reads it.

Outcomes, per run: `answered` (answerable item, answer given), `abstained_correctly`
(unanswerable item, abstained), `abstained_wrongly` (answerable item, abstained),
`answered_unanswerable` (unanswerable item, answer given), `failed` (the run did not complete)."""

from __future__ import annotations

import re

from ..dataset import Item
from ..observed import Observation, Unit

OUTCOMES = ("answered", "abstained_correctly", "abstained_wrongly", "answered_unanswerable", "failed")
RIGHT = ("answered", "abstained_correctly")

_SOURCES_EN = (
    r"handouts?|materials?|sources?|documents?|filings?|10-[QK]|catalog(?:ue)?(?: entry)?|syllabus|"
    r"slides?|pages?|notes|records?|texts?|passages?|evidence|announcements?|statements?|entr(?:y|ies)|"
    r"course (?:outline|description|overview)|curriculum|website|the information|(?:I|we) (?:could|can|did)"
)
_ABSENT_EN = re.compile(
    r"\b(?:does|do|did|could|can)\s*(?:not|n['’]t)\s+(?:\w+\s+){0,3}?"
    r"(?:report|state|say|mention|give|provide|include|contain|list|specify|disclose|cover|show|name|"
    r"find|break|address|indicate|answer|identify|reveal|confirm)"
    r"|\bnot\s+(?:reported|stated|mentioned|given|provided|included|listed|specified|disclosed|available|"
    r"found|covered|shown|named|indicated|addressed|documented)\b"
    r"|\bno\s+(?:information|data|figures?|mention|details?|records?|statement|breakdown|indication|answer)\b"
    r"|\b(?:contains?|includes?|gives?|provides?|offers?|lists?)\s+no(?:thing)?\b"
    r"|\bsilent\s+(?:on|about)\b|\bcannot\s+be\s+(?:found|determined|verified|answered|confirmed)\b"
    r"|\b(?:is|are)\s+(?:absent|missing)\b|\bnone\s+of\s+the\b",
    re.I,
)
_SOURCES_EN_RE = re.compile(rf"\b(?:{_SOURCES_EN})\b", re.I)
_SOURCES_ZH = re.compile(
    r"講義|資料|文件|來源|教材|目錄|課綱|課程大綱|大綱|財報|申報|文獻|網頁|頁面|內容|公告|簡報|紀錄|記錄|筆記|報告|檔案|條目|說明書|課程介紹|查無|找不到|無法"
)
_ABSENT_ZH = re.compile(
    r"(?:未|並未|沒有|均未|皆未|都未|都沒有|並沒有|不曾)(?:在\S{0,8}?)?(?:提及|提到|報告|說明|列出|提供|載明|記載|包含|揭露|公布|公佈|註明|涵蓋|顯示|給出|交代|指出|寫明|述及|列明)"
    r"|(?:沒有|並無|無|缺乏|欠缺)(?:任何)?(?:相關|這方面的|此項|關於\S{0,12}?的)?(?:資料|資訊|記載|說明|數據|紀錄|記錄|內容|描述)"
    r"|無法(?:確認|找到|得知|判斷|回答|查到|核實|確定)|找不到|查無|未見|不包含|不含"
)
_CONTRAST = re.compile(
    r"\b(?:but|however|although|though|yet|instead|whereas|nevertheless)\b|但|不過|然而|卻|雖然|而是|儘管",
    re.I,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_ABSENT_VALUE = re.compile(
    r"^(?:not (?:reported|stated|available|disclosed|given|listed)|none|unknown|n/?a|未(?:報告|提及|揭露|公布|提供|列出)|無(?:資料)?|不詳)[\s.。]*$",
    re.I,
)


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def says_absent(text: str, allowed_numbers: set[str] = frozenset()) -> bool:
    """Does this sentence only say that the sources lack something? (see the module docstring)"""
    if _CONTRAST.search(text):
        return False
    stated = {n for n in _numbers(text) if not _YEAR.match(n)} - set(allowed_numbers)
    if stated:
        return False
    english = _ABSENT_EN.search(text) and _SOURCES_EN_RE.search(text)
    return bool(english or (_ABSENT_ZH.search(text) and _SOURCES_ZH.search(text)))


def substantive(unit: Unit, allowed_numbers: set[str] = frozenset()) -> bool:
    """Does this unit assert something (a claim), as opposed to saying the sources lack it?"""
    if unit.kind == "conflict":
        return True
    if unit.kind == "cell":
        value = unit.text.rsplit(":", 1)[-1].strip()
        return not _ABSENT_VALUE.match(value)
    return not says_absent(unit.text, allowed_numbers)


def claims(observation: Observation, item: Item) -> list[Unit]:
    """The units of a completed run that are substantive claims."""
    asked = _numbers(item.question)
    found = []
    for unit in observation.units:
        titles = " ".join(observation.sources[n].title for n in unit.citations if n in observation.sources)
        if substantive(unit, asked | _numbers(titles)):
            found.append(unit)
    return found


def abstained(observation: Observation, item: Item) -> bool:
    return observation.completed and not claims(observation, item)


def outcome(observation: Observation, item: Item) -> str:
    if not observation.completed:
        return "failed"
    if abstained(observation, item):
        return "abstained_correctly" if not item.answerable else "abstained_wrongly"
    return "answered" if item.answerable else "answered_unanswerable"
