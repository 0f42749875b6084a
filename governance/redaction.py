"""Redaction of direct identifiers in free text before it leaves the platform.

Two passes over every exported string (questions, answers, chat content, step arguments and
previews, citations):

1. Patterns: e-mail addresses; Taiwanese national ID / resident certificate numbers (A123456789,
   A812345678, AB12345678); student ids in the NTU style (a letter and eight digits: B09901001,
   r12345678); phone numbers (Taiwanese mobiles 0912-345-678 / +886 912 345 678, landlines
   (02)2345-6789, 037-123456, +886-2-2345-6789, and other +country numbers; 8–15 digits).
2. Names: people addressed with a title, known or not — a Chinese surname with up to two given
   characters before 同學/老師/教授/助教/先生/小姐/學長…  ("王小明同學", "林老師"), and a
   capitalised name after Mr/Ms/Dr/Prof ("Prof. Li"); then the usernames, e-mail addresses and
   names of every platform user, in the study's channels or not (usernames of three characters
   or more and Latin names matched as whole words, so the two-letter surname of "Wei Li" is
   caught in the full name without eating "Lin" or "TA"; Chinese names as written, a
   one-character surname with its given name: "林安").

Boundaries are "not a letter or digit" rather than \\b, because in Chinese text an id is usually
glued to CJK characters ("學號B09901001的"), which \\b treats as word characters.
Redaction is a safety net, not a guarantee: researchers still sign the responsibility agreement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

EMAIL = "[EMAIL]"
NATIONAL_ID = "[NATIONAL_ID]"
STUDENT_ID = "[STUDENT_ID]"
PHONE = "[PHONE]"
PERSON = "[PERSON]"

_NO_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
_NO_ALNUM_AFTER = r"(?![A-Za-z0-9])"

_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
# Letter + 1/2 (citizens), 8/9 (new resident certificates) or A–D (old resident certificates) + 8 digits.
_NATIONAL_ID_RE = re.compile(_NO_ALNUM_BEFORE + r"[A-Za-z][12489A-Da-d]\d{8}" + _NO_ALNUM_AFTER)
_STUDENT_ID_RE = re.compile(_NO_ALNUM_BEFORE + r"[A-Za-z]\d{8}" + _NO_ALNUM_AFTER)
_B = r"(?<![0-9A-Za-z+])"  # CJK text glues numbers to characters, so no \w boundaries here
_S = r"[\s.\-]?"  # one optional separator between digit groups
_PHONE_RES = [
    # Taiwanese mobiles: 0912-345-678, 0912 345 678, +886 912 345 678, 886912345678
    re.compile(_B + r"(?:\+?886" + _S + r"|0)9\d{2}" + _S + r"\d{3}" + _S + r"\d{3}" + _NO_ALNUM_AFTER),
    # Taiwanese landlines: 02-2345-6789, (02)2345-6789, 037-123456, +886-2-2345-6789, 0800-123-456
    re.compile(
        _B
        + r"(?:\+?886"
        + _S
        + r"\(?|\(?0)[2-8]\d{0,3}\)?"
        + _S
        + r"\d{2,4}"
        + _S
        + r"\d{3,4}"
        + _NO_ALNUM_AFTER
    ),
    # Other international numbers: +1 415 555 0100, +44 20 7946 0958
    re.compile(r"(?<![0-9A-Za-z])\+\d{1,3}(?:" + _S + r"\(?\d{2,4}\)?){2,5}" + _NO_ALNUM_AFTER),
]


# The commonest Chinese surnames (Taiwan and mainland), single and compound.
_SURNAMES = (
    "歐陽|司馬|諸葛|上官|張簡|范姜|"
    "陳|林|黃|張|李|王|吳|劉|蔡|楊|許|鄭|謝|郭|洪|曾|邱|廖|賴|周|徐|蘇|葉|莊|呂|江|何|蕭|羅|高|潘|簡|朱|鍾|游|彭|詹|胡|施|沈|"
    "余|盧|梁|趙|顏|柯|翁|魏|孫|戴|范|方|宋|鄧|杜|傅|侯|曹|薛|丁|卓|阮|馬|董|温|溫|唐|藍|石|蔣|古|紀|姚|連|馮|歐|程|湯|黃|田|"
    "康|姜|白|汪|鄒|尤|巫|鐘|黎|涂|龔|嚴|韓|袁|金|童|陸|夏|柳|凃|邵|錢|伍|倪|溫|于|譚|駱|熊|任|甘|秦|顧|毛|章|史|官|萬|俞|雷|"
    "粘|饒|張|闕|凌|崔|尹|孔|辛|武|辜|陶|段|龍|韋|葛|池|孟|褚|殷|麥|賀|賈|莫|文|管|關|向|包|丘|梅|華|利|裴|樊|房|全|佘|左|花|"
    "魯|安|鮑|郝|穆|塗|邢|蒲|成|谷|常|閻|練|盛|鄔|耿|聶|符|申|祝|繆|陽|解|曲|岳|齊|籃|應|單|舒|畢|喬|龎|翟|牛|鄞|留|季|覃|卜"
)
_TITLES = "同學|老師|教授|助教|先生|小姐|女士|學長|學姊|學姐|學弟|學妹|博士|醫師|主任|校長"
_TITLED_CHINESE_NAME = re.compile(r"(?:" + _SURNAMES + r")[\u4e00-\u9fff]{0,2}?(?=(?:" + _TITLES + r"))")
_TITLED_LATIN_NAME = re.compile(
    r"(?<![A-Za-z])(?:Mr|Mrs|Ms|Miss|Dr|Prof|Professor)\.?\s+[A-Z][A-Za-z'\-]+(?:\s+[A-Z][A-Za-z'\-]+){0,2}"
)


def _phone(match: re.Match) -> str:
    digits = sum(ch.isdigit() for ch in match.group(0))
    return PHONE if 8 <= digits <= 15 else match.group(0)


def _identifier_patterns(text: str) -> str:
    text = _EMAIL_RE.sub(EMAIL, text)
    text = _NATIONAL_ID_RE.sub(NATIONAL_ID, text)
    text = _STUDENT_ID_RE.sub(STUDENT_ID, text)
    for pattern in _PHONE_RES:
        text = pattern.sub(_phone, text)
    return text


def redact_titled_names(text: str) -> str:
    text = _TITLED_CHINESE_NAME.sub(PERSON, text)
    return _TITLED_LATIN_NAME.sub(PERSON, text)


class Redactor:
    def __init__(self, known_identifiers: Iterable[str] = ()):
        words, literals = set(), set()
        for raw in known_identifiers:
            value = (raw or "").strip()
            if len(value) < 2:
                continue
            if re.fullmatch(r"[\w.@+\-' ]+", value, re.ASCII):
                # Latin names and usernames as whole words: "ta" would eat every "TA", so a lone
                # two-letter surname ("Li") is only caught in a full name ("Wei Li", "Li Wei").
                if len(value) >= 3:
                    words.add(value)
            else:
                literals.add(value)  # CJK names have no word boundaries to rely on
        parts = [_NO_ALNUM_BEFORE + re.escape(w) + _NO_ALNUM_AFTER for w in words] + [
            re.escape(v) for v in literals
        ]
        # Longest first, so "s_alice@example.test" is not cut at "s_alice".
        parts.sort(key=len, reverse=True)
        self._known = re.compile("|".join(parts), re.IGNORECASE) if parts else None

    def text(self, value: str | None) -> str:
        if not value:
            return value or ""
        # Known names before titled ones: "陳同學" as a known name is one [PERSON], not "[PERSON]同學".
        value = _identifier_patterns(value)
        if self._known is not None:
            value = self._known.sub(PERSON, value)
        return redact_titled_names(value)

    def data(self, value):
        """Redact every string inside JSON-like data (step arguments, citations); keys stay."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        return value
