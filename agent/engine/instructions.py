"""Instructions in a source are not evidence.

A passage of a tool result that addresses the model (orders to the assistant, "ignore…",
"cite X as…", "call tool…", text hidden from a human reader or encoded) is flagged when it is
observed. Flagged passages are left out of what the verifier reads, a claim resting only on them
fails verification ("instruction found in source"), and a report sentence that repeats one is
dropped without being quoted anywhere."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PATTERNS = [
    ("ignore_instructions", r"\b(ignore|disregard|forget|override)\b[^.。\n]{0,60}\b(instruction|instructions|prompt|prompts|rules|guidelines|question|task|above|previous|prior)\b"),
    ("addresses_the_model", r"\b(ai|assistant|assistants|language model|llm|chatbot|model|gpt|researcher|writer)\s*[,:：]\s*(please\s+)?\w+"),
    ("addresses_the_model", r"\b(attention|note to|message to|instructions? (for|to))\s+(the\s+)?(ai|assistant|language model|llm|chatbot|model|summari[sz]er|research(er)? (agent|assistant))\b"),
    ("addresses_the_model", r"\b(you are|you're|act as|pretend to be)\s+(now\s+)?(an?\s+|the\s+)?(ai|assistant|language model|chatbot|model|dan)\b"),
    ("addresses_the_model", r"\bwhen (you )?(summari[sz]e|summari[sz]ing|answer|answering|writ(e|ing)|read(ing)?|you see)\b[^.。\n]{0,40}\b(this|these|the (answer|report|student))"),
    ("cite_as", r"\b(always\s+)?(cite|reference|link|credit)\b[^.。\n]{0,80}\b(as (the )?(authoritative|official|primary|only|main|best)|instead)\b"),
    ("cite_as", r"\b(in|to) (your|the) (answer|report|response|summary)\b[^.。\n]{0,30}\b(write|say|state|include|add|mention|tell|print|output)\b"),
    ("call_tool", r"\b(call|invoke|run|use|execute)\b[^.。\n]{0,20}\b(tool|function|the \w+_\w+)\b|\b\w+_(materials|url|papers|search|fetch)\s*\("),
    ("reveal_prompt", r"\b(system prompt|your (instructions|prompt|rules|guidelines)|hidden instructions|developer (message|mode))\b"),
    ("new_instructions", r"\b(new|updated|important|urgent) instructions?\b|\bdo not (tell|inform|mention (this )?to) the (user|student)\b"),
    ("ignore_instructions", r"(忽略|無視|忽視|不要理會|不理會).{0,15}(指示|指令|規則|提示|問題|任務|以上|先前|之前)"),
    ("addresses_the_model", r"(你|您)(現在)?(是|扮演).{0,6}(助理|助手|AI|ＡＩ|模型|機器人)|(給|致|對)\s*(AI|ＡＩ|助理|助手|模型|語言模型).{0,4}(的)?(指示|指令|說明|訊息)|(AI|ＡＩ|助理|助手|模型)\s*[，,:：]\s*(請|務必|必須)"),
    ("cite_as", r"(請|務必|必須|一定要).{0,20}(引用|標註|列為|寫成|寫入|加入|告訴|說明|輸出|回答)|(在|於)(你的)?(回答|答案|報告|摘要)(中|裡|裏).{0,12}(寫|說|加入|附上|提到)"),
    ("call_tool", r"(呼叫|調用|執行|使用).{0,10}(工具|函式|函數)"),
    ("reveal_prompt", r"系統提示|系統指令|你的(指示|指令|提示)"),
    ("hidden_text", r"[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]|<!--|display\s*:\s*none|font-size\s*:\s*0"),
    ("encoded_text", r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{60,}={0,2}(?![A-Za-z0-9+/])|(?:\\x[0-9a-f]{2}){8,}|(?:%[0-9a-f]{2}){12,}"),
    ("forged_markup", r"<\s*/?\s*(source|observations|system|assistant|instructions?)\b|‹/?(source|observations)"),
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


def passages_of(text: str) -> list[str]:
    return [p for p in _PASSAGE_SPLIT.split(text or "") if p.strip()]


def flag(text: str) -> Flags:
    flags = Flags()
    clean = []
    for passage in passages_of(text):
        codes = [code for code, pattern in _COMPILED if pattern.search(passage)]
        if codes:
            flags.passages.append(passage)
            flags.reasons.extend(c for c in codes if c not in flags.reasons)
        else:
            clean.append(passage)
    flags.clean_text = " ".join(clean)
    return flags


def _grams(text: str, size_words: int = 6, size_cjk: int = 8) -> set[str]:
    lowered = text.lower()
    words = re.findall(r"[a-z0-9]+", lowered)
    grams = {" ".join(words[i:i + size_words]) for i in range(len(words) - size_words + 1)}
    cjk = "".join(re.findall(r"[\u3400-\u9fff]", lowered))
    grams |= {cjk[i:i + size_cjk] for i in range(len(cjk) - size_cjk + 1)}
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
