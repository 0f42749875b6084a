"""Instructions in a source are not evidence.

A passage of a tool result that addresses the model (orders to the assistant, "ignore…",
"cite X as…", "call tool…", text hidden from a human reader or encoded) is flagged when it is
observed. Flagged passages are left out of what the verifier reads, a claim resting only on them
fails verification ("instruction found in source"), and a report sentence that repeats one is
dropped without being quoted anywhere."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

_ANSWER_OBJECTS = (
    r"(answer|answers|response|report|summary|reply|link|links|url|address|image|images|picture|figure|chart|badge|"
    r"html|markup|tag|script|iframe|video|citation|citations|footnote|reference|references|tool|function|"
    r"channel|channels|materials|prompt|instructions|password|metadata|student's question|every|encoded)"
)
_PATTERNS = [
    # Orders to the model, in English.
    (
        "ignore_instructions",
        r"\b(ignore|disregard|forget|override)\b[^.。\n]{0,60}\b(instruction|instructions|prompt|prompts|rules|guidelines|question|task|above|previous|prior)\b",
    ),
    (
        "addresses_the_model",
        r"\b(ai|assistant|assistants|language model|llm|chatbot|model|gpt|researcher|writer|agent|bot)\s*[,:：]\s*(please\s+)?\w+",
    ),
    (
        "addresses_the_model",
        r"\b(the |an? )?(agent|ai|assistant|model|researcher|bot|llm)\b[^.。\n]{0,20}\b(must|should|needs? to|shall|has to|is required to)\b",
    ),
    (
        "addresses_the_model",
        r"\b(attention|note to|message to|instructions? (for|to))\s+(the\s+)?(ai|assistant|language model|llm|chatbot|model|summari[sz]er|research(er)? (agent|assistant))\b",
    ),
    (
        "addresses_the_model",
        r"\b(you are|you're|act as|pretend to be)\s+(now\s+)?(an?\s+|the\s+)?(ai|assistant|language model|chatbot|model|dan)\b",
    ),
    (
        "addresses_the_model",
        r"\bwhen (you )?(summari[sz]e|summari[sz]ing|answer|answering|writ(e|ing)|read(ing)?|you see)\b[^.。\n]{0,40}\b(this|these|the (answer|report|student))",
    ),
    (
        "new_instructions",
        r"\b(new|updated|important|urgent)\b(\s+\w+)?\s+instructions?\b|\bfrom now on\b|\bhighest priority\b|\bdo not (tell|inform|mention (this )?to) the (user|student)\b",
    ),
    (
        "orders_for_the_answer",
        r"(^|[.:;!?]\s+|\b(always|please|then|and)\s+)(include|add|embed|insert|paste|quote|write|reveal|list|use|begin|start|append|"
        r"output|print|display|show|render|cite|put|place|link|attach)\b[^.。\n]{0,60}\b"
        + _ANSWER_OBJECTS
        + r"\b",
    ),
    (
        "orders_for_the_answer",
        r"\b(paste|quote)\b[^.。\n]{0,40}\b(what you find|you find|them in full|in full|here|in your)\b",
    ),
    ("orders_for_the_answer", r"\b(in|to|into) (your|the) (answer|report|response|summary|reply)\b"),
    (
        "cite_as",
        r"\b(always\s+)?(cite|reference|credit)\b[^.。\n]{0,80}\b(as (the )?(authoritative|official|primary|only|main|best)|instead)\b|\bcite this (page|document|source|paper|site)\b|\bsource tag\b|\bcitation format\b",
    ),
    (
        "call_tool",
        r"\b(call|invoke|run|use|execute)\b[^.。\n]{0,40}\b(tool|function|[a-z]+_[a-z_]+)\b|\b\w+_(materials|url|papers|search|fetch|docs|grades)\s*\(",
    ),
    (
        "reach_other_channels",
        r"\b(every|all|other|another)\s+(channel|channels|course)'?s?\b[^.。\n]{0,40}\b(materials|documents|files)\b|\bsister course\b",
    ),
    (
        "reveal_prompt",
        r"\b(system prompt|your (instructions|prompt|rules|guidelines)|hidden instructions|developer (message|mode))\b",
    ),
    # Orders to the model, in Chinese.
    (
        "ignore_instructions",
        r"(忽略|無視|忽視|不要理會|不理會).{0,15}(指示|指令|規則|提示|問題|任務|以上|先前|之前)",
    ),
    (
        "addresses_the_model",
        r"(你|您)(現在)?(是|扮演).{0,6}(助理|助手|AI|ＡＩ|模型|機器人)|(給|致|對)\s*(AI|ＡＩ|助理|助手|模型|語言模型|代理).{0,6}(的)?(指示|指令|說明|訊息|任務|通知)|(AI|ＡＩ|助理|助手|模型|代理程式)\s*[，,:：]\s*(請|務必|必須)|代理程式",
    ),
    ("new_instructions", r"從現在起|最高優先|新任務|新指令|系統管理員通知|系統通知"),
    (
        "orders_for_the_answer",
        r"(請|務必|必須|一定要).{0,12}(引用|標註|列為|寫成|寫入|加入|加上|附上|插入|貼在|貼上|列出|告訴|輸出|改用|把本頁|摘要成|呼叫|調用|搜尋所有)|(回答|答案|摘要|報告)(時|中|裡|裏|內)|(請|務必)在.{0,12}(段落|回答|答案|報告)",
    ),
    ("call_tool", r"(呼叫|調用|執行|使用|改用).{0,40}(工具|函式|函數)|(呼叫|調用)\s*[a-z]+_[a-z_]+"),
    ("reach_other_channels", r"(其他|所有|姊妹)(頻道|課程)"),
    (
        "reveal_prompt",
        r"系統提示|系統指令|你的(指示|指令|提示)|(你|您)(收到|看到|讀到)的(指令|指示|提示)|除錯模式|開發者模式",
    ),
    # Hidden, encoded or active content: no course text or paper needs it.
    (
        "hidden_text",
        r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]|<!--|display\s*:\s*none|font-size\s*:\s*0",
    ),
    (
        "encoded_text",
        r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{60,}={0,2}(?![A-Za-z0-9+/])|(?:\\x[0-9a-f]{2}){8,}|(?:%[0-9a-f]{2}){12,}|&#x?[0-9a-f]{2,6};|\\:",
    ),
    (
        "active_content",
        r"<\s*(img|script|iframe|svg|a|video|audio|details|picture|source|object|embed|form|style|link|meta|base|input|button)\b|\b(javascript|vbscript|data)\s*:|!\[[^\]]*\]\s*[\[(]|\]\(\s*(https?:|//|javascript|data|vbscript)|<https?://|\[\^\d+\]:",
    ),
    (
        "forged_markup",
        r"<\s*/?\s*(source|observations|system|assistant|instructions?)\b|‹/?(source|observations)|###[^#\n]{0,40}###"
        # a quote that closes one attribute of the source tag and opens another (title="x" url="…")
        r"|[\"“”]\s*(url|id|title|tier|number|origin)\s*=\s*[\"“”]",
    ),
]
_COMPILED = [(code, re.compile(pattern, re.I)) for code, pattern in _PATTERNS]
_IDENTIFIER = re.compile(r"\b[A-Za-z]{3,}-[A-Za-z]*\d+\b")
_PASSAGE_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")


@dataclass
class Flags:
    """What was flagged in one source: the reason codes and the flagged passages themselves
    (kept only to recognise a sentence that repeats them; never shown)."""

    reasons: list[str] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)
    clean_text: str = ""

    def __bool__(self) -> bool:
        return bool(self.reasons)

    def ranges(self, text: str) -> list[tuple[int, int]]:
        """Where the flagged passages stand in `text`: every occurrence of each, as [start, end)
        offsets, sorted. Every occurrence, not only the one that was flagged: a passage repeated
        elsewhere in the source says the same thing to the model there too."""
        found: set[tuple[int, int]] = set()
        for passage in self.passages:
            wanted = passage.strip()
            at = text.find(wanted) if wanted else -1
            while at >= 0:
                found.add((at, at + len(wanted)))
                at = text.find(wanted, at + 1)
        return sorted(found)


# After a sentence that takes over the model ("ignore all previous instructions."), the rest of
# its paragraph is the order itself ("reply only with: …") even when it reads innocently.
_TAKES_OVER = {"ignore_instructions", "addresses_the_model", "new_instructions"}


def passages_of(text: str) -> list[str]:
    return [p for p in _PASSAGE_SPLIT.split(text or "") if p.strip()]


def flag(text: str) -> Flags:
    flags = Flags()
    clean = []
    for paragraph in (text or "").split("\n"):
        taken_over = False
        for passage in passages_of(paragraph):
            codes = _codes(passage)
            if codes or taken_over:
                flags.passages.append(passage)
                flags.reasons.extend(c for c in codes if c not in flags.reasons)
                taken_over = taken_over or bool(_TAKES_OVER & set(codes))
            else:
                clean.append(passage)
    flags.clean_text = " ".join(clean)
    return flags


def flag_pieces(pieces: list[str]) -> list[bool]:
    """Which consecutive pieces of one flagged passage address the model, by the rule `flag`
    applies to the passages of a paragraph: a piece that matches a pattern, and every piece after
    one that takes the model over. (A passage is cut at a full stop followed by a space, so a
    Chinese paragraph is one passage; its sentences are the pieces.)"""
    out, taken_over = [], False
    for piece in pieces:
        codes = _codes(piece)
        out.append(bool(codes) or taken_over)
        taken_over = taken_over or bool(_TAKES_OVER & set(codes))
    return out


@functools.lru_cache(maxsize=4096)
def _codes(passage: str) -> tuple[str, ...]:
    """The instruction patterns one passage matches. Cached per process: a course's passages come
    back in every research that searches it (and in a research's counter-search), and each scan is
    25 regular expressions."""
    return tuple(code for code, pattern in _COMPILED if pattern.search(passage))


def _grams(text: str, size_words: int = 6, size_cjk: int = 8) -> set[str]:
    lowered = text.lower()
    words = re.findall(r"[a-z0-9]+", lowered)
    grams = {" ".join(words[i : i + size_words]) for i in range(len(words) - size_words + 1)}
    cjk = "".join(re.findall(r"[\u3400-\u9fff]", lowered))
    grams |= {cjk[i : i + size_cjk] for i in range(len(cjk) - size_cjk + 1)}
    return grams


def repeats(text: str, passages: list[str]) -> bool:
    """The text repeats a run of six words (eight CJK characters) of a flagged passage, or a
    distinctive token of it (an identifier such as HIJACK-a01)."""
    if not passages:
        return False
    mine = _grams(text)
    tokens = set(_IDENTIFIER.findall(text))
    for passage in passages:
        if mine & _grams(passage):
            return True
        if tokens & set(_IDENTIFIER.findall(passage)):
            return True
    return False
