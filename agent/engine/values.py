"""Values read from a span by code: numbers with their scale, unit and year.

`parse(text)` returns every value the text states, each with the characters it read
(`text == input[start:end]`), its number with the scale applied, its kind (vocabulary.VALUE_KINDS)
and unit, and the year the text gives it for. What is read:

- **Numbers**: "35,082,000,000", "3.5", "-2", full-width digits ("３５．１"); a scale after them
  multiplies: thousand, million, billion, trillion (and plurals), bn, mn, tn, an attached k/K,
  M, B ("270M"), an attached m/b only after a currency ("$5m"), and 千 萬/万 百萬 千萬 億/亿 十億
  兆 ("351億" → 35,100,000,000; "3億5千萬" → 350,000,000).
- **CJK numerals**: 十萬 → 100000, 兩千三百 → 2300, 一萬五千 → 15000, 三點五 → 3.5, 二〇一一 →
  2011. To be a value a run must start with a digit or 十 (千萬 "by all means", 萬一 "in case" are
  words), a lone digit needs a measure word after it (三個, 五名, 兩所, 三年…; 一 never alone:
  一個 is "a"), and a run of bare digits needs 〇/零 in it or 年 after it.
- **English number words**: "three", "twenty-one", "a hundred thousand", "two thousand and
  eleven". "one" alone, "a", "half", fractions ("two-thirds") and spoken years ("nineteen
  ninety-nine") are not read.
- **Percent** (kind "percent", unit "%"): %, ％, percent, per cent, pct, 百分之三十; X成 is X×10 %
  (三成 → 30 %: 成 is a tenth). **Percentage points** (kind "percentage_points", unit "pp"): "3
  percentage points", "3 pp", "3 個百分點", and basis points (25 bps → 0.25 pp).
- **Currencies** (kind "currency", unit the ISO code): $ and US$ → USD, NT$ NTD TWD 新台幣 台幣
  → TWD, € EUR euros → EUR, £ GBP → GBP, ¥ 円 日圓 yen → JPY, RMB 人民幣 yuan → CNY, HK$ 港幣 →
  HKD, 美元 美金 → USD, 歐元 → EUR. A bare 元 is TWD in Traditional Chinese and CNY when the
  text is written in simplified characters (the product's students read Taiwanese sources).
- **Years** (kind "year", the year as the value): a four-digit 1900–2100 with no unit ("in
  2011", "(Anderson, 2001)"), unless a plural noun follows without a year word before it
  ("2000 students" is a count); FY2025/FY25, 2011年, 二〇一一年, 民國112年 → 2023, 112學年度 →
  2023, and year ranges "2023–24" → 2023 and 2024. Month and year ("July 2024") is a year; a
  full date is not a value (its year still counts for `year`).
- **Ranges** ("3–5 %", "$3–5 billion", "3 to 5 percent", "3至5%") give two values; each side
  takes the unit and scale the other states.

For each value that is not a year, `year` is the nearest year the text mentions (a year value, or
failing one the year of a date), else None; a year's own `year` is None.

Not values (a wrong value is worse than a missed one): dates and times, ordinals ("3rd", "第三",
"first"), list and section numbers ("1.", "(2)", "3.2.1"), labels ("Week 3", "Table 2", "p. 4",
"Form 10-Q", "Q3", "表3"), numbers inside identifiers ("EDS101", "COVID-19", "v2"), decades
("1990s", "90年代"), fractions ("1/2", "三分之一"), numbers joined by hyphens with no unit
(phone numbers, accession numbers, "7-9"), phone numbers, ISBN/ISSN/DOI digits, URLs and e-mail
addresses, citation markers ("[3]"), numbers with leading zeros ("007"), and numbers glued to
letters ("5G", "3D", "10x").
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

from . import vocabulary

KINDS = vocabulary.VALUE_KINDS


@dataclass(frozen=True)
class ParsedValue:
    kind: str
    value: float
    unit: str
    text: str
    start: int
    end: int
    year: int | None
    scale: float = 1.0  # the scale the text applied ("35.1 billion": 1e9)
    decimals: int = 0  # digits after the point as written (the precision the text states)

    @property
    def written(self) -> float:
        """The number as written, before its scale ("35.1" of "35.1 billion")."""
        return self.value / self.scale


# --------------------------------------------------------------------------- tables

_DIGITS = {
    "〇": 0,
    "零": 0,
    "一": 1,
    "二": 2,
    "兩": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG = {"萬": 10**4, "万": 10**4, "億": 10**8, "亿": 10**8, "兆": 10**12}
_CJK_NUM = "〇零一二兩两三四五六七八九十百千萬万億亿兆點点"
# Words a lone CJK digit must be followed by to be a count ("三個", "五名"); 月/日/號 make dates.
_MEASURES = (
    "個 个 名 位 人 所 項 项 次 種 种 件 間 间 家 本 篇 門 门 堂 週 周 天 小時 小时 分鐘 分钟 秒 歲 岁 倍 元 塊 块 "
    "場 场 層 层 類 类 章 節 节 頁 页 張 张 條 条 隻 只 顆 棵 句 段 份 組 组 班 屆 届 座 台 臺 部 筆 笔 題 题 "
    "門課 學分 学分 年"
).split()
_EN_UNITS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_EN_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}  # fmt: skip
_EN_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_EN_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
}  # fmt: skip
_FRACTIONS = re.compile(
    r"[\s-](half|halves|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?)\b",
    re.I,
)
_SCALE_WORDS = {
    "thousand": 1e3, "thousands": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9,
    "trillion": 1e12, "trillions": 1e12, "bn": 1e9, "mn": 1e6, "tn": 1e12,
}  # fmt: skip

_CURRENCY_PREFIX = [
    (r"US\$|U\.S\.\$", "USD"), (r"NT\$", "TWD"), (r"HK\$", "HKD"), (r"S\$", "SGD"), (r"A\$|AU\$", "AUD"),
    (r"C\$|CA\$", "CAD"), (r"\$", "USD"), (r"€", "EUR"), (r"£", "GBP"), (r"¥", "JPY"),
    (r"USD", "USD"), (r"TWD|NTD", "TWD"), (r"EUR", "EUR"), (r"GBP", "GBP"), (r"JPY", "JPY"),
    (r"CNY|RMB", "CNY"), (r"HKD", "HKD"), (r"SGD", "SGD"), (r"新台幣|新臺幣|台幣|臺幣", "TWD"),
    (r"人民幣|人民币", "CNY"), (r"美金", "USD"), (r"港幣|港币", "HKD"), (r"日幣|日币", "JPY"),
]  # fmt: skip
_CURRENCY_SUFFIX = [
    (r"New\s+Taiwan\s+dollars?|Taiwan\s+dollars?|NT\s?dollars?|NTD|TWD", "TWD"),
    (r"US\s?dollars?|U\.S\.\s?dollars?|USD|dollars?", "USD"), (r"EUR|euros?", "EUR"),
    (r"GBP|pounds?\s+sterling", "GBP"), (r"JPY|yen", "JPY"), (r"CNY|RMB|yuan|renminbi", "CNY"),
    (r"HKD", "HKD"), (r"SGD", "SGD"), (r"新台幣元|新臺幣元|台幣|臺幣", "TWD"), (r"美元|美金", "USD"),
    (r"日圓|日元|円", "JPY"), (r"歐元|欧元", "EUR"), (r"英鎊|英镑", "GBP"), (r"人民幣|人民币", "CNY"),
    (r"港元|港幣|港币", "HKD"), (r"元|圓|塊錢|块钱|塊|块", "YUAN"),
]  # fmt: skip
_PREFIX = re.compile(
    r"(?:" + "|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(_CURRENCY_PREFIX)) + r")\s?$"
)
_SUFFIX_CURRENCY = re.compile(
    r"\s?(?:" + "|".join(f"(?P<c{i}>{p})" for i, (p, _) in enumerate(_CURRENCY_SUFFIX)) + r")(?![A-Za-z])"
)
_SIMPLIFIED = re.compile(r"[万亿币这为们时发经产业国学对会说种长门问题资数据现实]")

_PP = re.compile(
    r"\s?(?:percentage[\s-]+points?(?![A-Za-z])|pp(?![A-Za-z])|p\.p\.|ppts?(?![A-Za-z])|個百分點|个百分点|百分點|百分点)",
    re.I,
)
_BPS = re.compile(r"\s?(?:basis\s+points?|bps?)(?![A-Za-z])", re.I)
_PERCENT = re.compile(r"\s?(?:%|percent(?![A-Za-z])|per\s?cent(?![A-Za-z])|pct(?![A-Za-z]))", re.I)
_TENTHS = re.compile(r"成(?!長|长|績|绩|果|功|立|為|为|本|員|员|熟|分|就|人)")
_EN_SCALE = re.compile(r"\s?(thousands?|millions?|billions?|trillions?|bn|mn|tn)(?![A-Za-z])", re.I)
_CJK_SCALE = re.compile(r" ?([十百千萬万億亿兆]+)")

_YEAR_WORDS = re.compile(
    r"(?i)(?:\b(?:in|since|by|until|till|from|during|before|after|around|circa|c\.|year|years|through|"
    r"fiscal|fy|spring|summer|autumn|fall|winter|early|mid|late|between|jan(?:uary)?|"
    r"feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|"
    r"nov(?:ember)?|dec(?:ember)?)|mid-)\.?\s*$"
)
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_LABELS = re.compile(
    r"(?i)(?:^|[^A-Za-z])(?:section|sec|chapter|ch|figure|fig|figs|table|tab|page|pages|p|pp|no|nos|number|"
    r"week|weeks|step|steps|level|levels|grade|grades|lesson|lessons|unit|units|slide|slides|part|parts|item|"
    r"items|question|questions|q|appendix|eq|equation|version|ver|v|vol|volume|issue|room|article|art|rule|"
    r"phase|stage|round|session|lecture|module|class|term|semester|day|days|paragraph|para|line|lines|"
    r"exercise|example|problem|task|case|group|team|wave|cohort|form|schedule|exhibit|note|footnote|ref|"
    r"id|code|level|tier|top|rank|ranked|grade|year\s+of\s+study)\.?\s*#?\s*$"
)
_CJK_LABELS = re.compile(r"(?:第|表|圖|图|附錄|附录|星期|禮拜|礼拜|編號|编号|代碼|代码)\s*$")
_LIST_START = re.compile(r"(?:^|\n)[ \t]*[(（]?$")
_GLUED_AFTER = re.compile(r"[A-Za-z]|-[A-Za-z]|/|:\d|\.\d|°")

_MASKS = [
    re.compile(r"https?://\S+|www\.\S+|[\w.+-]+@[\w-]+\.[\w.]+"),
    re.compile(r"\b10\.\d{4,9}/\S+|\bdoi:\s*\S+", re.I),
    re.compile(r"\bISBN(?:-1[03])?:?\s*[\dXx][\dXx -]{8,16}[\dXx]|\bISSN:?\s*\d{4}-\d{3}[\dXx]", re.I),
    re.compile(
        r"\+\d{1,3}[\s-]?(?:\(\d{1,4}\)[\s-]?)?\d{1,4}[\s-]?\d{3,4}[\s-]?\d{3,4}|\(0\d{1,3}\)\s?\d{3,4}-?\d{3,4}"
        r"|(?<!\d)0\d{1,3}-\d{3,4}-\d{3,4}(?!\d)|(?<!\d)\d{3}-\d{3}-\d{4}(?!\d)"
    ),
    re.compile(r"(?<![\d.])\d{1,2}:\d{2}(?::\d{2})?(?!\d)"),
    re.compile(r"\[\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]"),
    re.compile(r"(?<![\d.])\d+(?:\.\d+){2,}(?![\d])"),
    re.compile(r"(?<![\d.])(?:19|20)\d0\s?'?s(?![A-Za-z])|(?<!\d)\d0\s?年代|(?<![\d.])'\d0s\b"),
    re.compile(
        r"(?<!\d)\d+\s*/\s*\d+(?!\d)|[〇零一二兩两三四五六七八九十百千\d]+\s*分之\s*[〇零一二兩两三四五六七八九十百千\d]+"
    ),
]
_DATES = [  # (pattern, group of the year or 0)
    (re.compile(r"(?<![\d.])((?:19|20)\d\d)[-/.](\d{1,2})[-/.](\d{1,2})(?![\d])"), 1),
    (re.compile(r"(?<![\d.])(\d{1,2})[-/.](\d{1,2})[-/.]((?:19|20)\d\d)(?![\d])"), 3),
    (
        re.compile(
            r"((?:19|20)\d\d|[〇零一二三四五六七八九]{4})\s*年\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*月"
            r"(?:\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*[日號号])?"
        ),
        1,
    ),
    (
        re.compile(
            r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*月\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*[日號号]"
        ),
        0,
    ),
    (re.compile(rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+((?:19|20)\d\d)\b)?"), 1),
    (re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?(?:,?\s+((?:19|20)\d\d)\b)?"), 1),
]
_ARABIC = re.compile(r"(?<![\d,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
_CJK_RUN = re.compile(rf"[{_CJK_NUM}]+")
_EN_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


# --------------------------------------------------------------------------- the scan


@dataclass
class _Found:
    kind: str
    value: float
    unit: str
    start: int
    end: int
    scale: float = 1.0
    decimals: int = 0
    bare: bool = True  # no unit, scale or currency of its own (a range side may take the other's)
    hyphen_left: bool = False  # joined by a hyphen to a number before it
    hyphen_right: bool = False


class _Marks:
    """Which characters something already read (or masked) holds: each is read once."""

    def __init__(self, size: int) -> None:
        self.taken = bytearray(size)

    def take(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x01" * (end - start)

    def free(self, start: int, end: int) -> bool:
        return not any(self.taken[start:end])

    def limit(self, start: int) -> int:
        """The first position from `start` on that something already read holds."""
        at = self.taken.find(1, start)
        return len(self.taken) if at < 0 else at


@dataclass
class Scan:
    """Everything code read from a text: its values, every year it mentions (year values and
    the years of dates: (year, start, end, in_a_date)) and every number it writes at all,
    labels, ordinals and dates included (`loose`: (number, start, end)), which the novelty check
    compares."""

    values: list[ParsedValue] = field(default_factory=list)
    years: list[tuple[int, int, int, bool]] = field(default_factory=list)
    loose: list[tuple[float, int, int]] = field(default_factory=list)


def parse(text: str) -> list[ParsedValue]:
    """The values `text` states, in order (see the module's rules)."""
    return scan(text).values


def fold(text: str) -> str:
    """Full-width digits, letters and signs as ASCII, one character for one character (so every
    offset stays the input's); the full-width comma stays, as it separates no thousands."""
    out = []
    for c in text or "":
        if c in "−﹣":
            out.append("-")
        elif "\uff01" <= c <= "\uff5e" and c not in "，；：":
            out.append(unicodedata.normalize("NFKC", c))
        else:
            out.append(c)  # superscripts (footnote marks) and the rest stay as they are
    return "".join(out)


def scan(text: str) -> Scan:
    text = text or ""
    flat = fold(text)
    result = Scan()
    marks = _Marks(len(flat))
    found: list[_Found] = []
    _percent_words(flat, found, marks)  # before the fractions' mask: 百分之三十 is no fraction
    for mask in _MASKS:
        for m in mask.finditer(flat):
            marks.take(m.start(), m.end())
    for pattern, group in _DATES:
        for m in pattern.finditer(flat):
            if not marks.free(m.start(), m.end()):
                continue
            if group and m.group(group):
                year = _year_of(m.group(group))
                if year:
                    result.years.append((year, m.start(group), m.end(group), True))
            marks.take(m.start(), m.end())

    _explicit_years(flat, found, marks)
    _arabic(flat, found, marks)
    _cjk(flat, found, marks)
    _english(flat, found, marks)
    found = _ranges(flat, found)

    for f in found:
        if f.kind == "year":
            result.years.append((int(f.value), f.start, f.end, False))
    simplified = bool(_SIMPLIFIED.search(text))
    clauses = [m.end() for m in re.finditer(r"[;；。!?！？]|\.(?=\s)", flat)]
    for f in sorted(found, key=lambda f: f.start):
        unit = f.unit
        if unit == "YUAN":
            unit = "CNY" if simplified else "TWD"
        result.values.append(
            ParsedValue(
                kind=KINDS.check(f.kind),
                value=f.value,
                unit=unit,
                text=text[f.start : f.end],
                start=f.start,
                end=f.end,
                year=None if f.kind == "year" else _nearest_year(f, result.years, clauses),
                scale=f.scale,
                decimals=f.decimals,
            )
        )
    result.years.sort(key=lambda y: y[1])
    result.loose = _loose(flat)
    return result


def _nearest_year(f: _Found, years: list[tuple[int, int, int, bool]], clauses: list[int]) -> int | None:
    """The year the text gives a value for: the nearest year before it in its clause, else the
    nearest after it in its clause, else the nearest anywhere (before on a tie); a date's year
    only when the text mentions no other year."""
    clause = (
        max((c for c in clauses if c <= f.start), default=0),
        min((c for c in clauses if c > f.start), default=10**9),
    )

    def distance(y: tuple[int, int, int, bool]) -> tuple[int, int, int]:
        _, start, end, _ = y
        before = end <= f.start
        gap = f.start - end if before else max(0, start - f.end)
        if clause[0] <= start and end <= clause[1]:
            return (0, 0 if before else 1, gap)
        return (1, gap, 0 if before else 1)

    for in_date in (False, True):
        pool = [y for y in years if y[3] == in_date]
        if pool:
            return min(pool, key=distance)[0]
    return None


def _year_of(raw: str) -> int | None:
    value = int(raw) if raw.isdigit() else _digit_by_digit(raw)
    return value if value is not None and 1900 <= value <= 2100 else None


def _digit_by_digit(run: str) -> int | None:
    if len(run) == 1 and run in _DIGITS:
        return _DIGITS[run]
    if not run or any(c not in _DIGITS or c in "兩两" for c in run):
        return None
    return int("".join(str(_DIGITS[c]) for c in run))


# --------------------------------------------------------------------------- years


def _explicit_years(flat: str, found: list[_Found], marks: _Marks) -> None:
    def add(year: int, start: int, end: int) -> None:
        found.append(_Found("year", float(year), "", start, end, bare=False))
        marks.take(start, end)

    for m in re.finditer(r"(?<![A-Za-z0-9])(?:FY|CY|AY|SY)\s?'?((?:19|20)\d\d|\d\d)(?![0-9])", flat):
        if marks.free(m.start(), m.end()):
            raw = m.group(1)
            add(int(raw) if len(raw) == 4 else 2000 + int(raw), m.start(), m.end())
    for m in re.finditer(r"民國\s*(\d{1,3}|[〇零一二三四五六七八九十百]{1,5})\s*年?", flat):
        n = int(m.group(1)) if m.group(1).isdigit() else _cjk_value(m.group(1))
        if n and marks.free(m.start(), m.end()):
            add(1911 + int(n), m.start(), m.end())
    for m in re.finditer(r"(?<![\d.])(\d{2,4})\s*學?年度", flat):
        n = int(m.group(1))
        year = n if 1900 <= n <= 2100 else 1911 + n if 50 <= n <= 200 else None
        if year and marks.free(m.start(), m.end()):
            add(year, m.start(), m.end())
    for m in re.finditer(
        r"(?<![\d.,])((?:19|20)\d\d)\s?[-–—/~]\s?((?:19|20)\d\d|\d\d)(?![\d.,%]|\s?(?:%|percent|年代))", flat
    ):
        first, raw = int(m.group(1)), m.group(2)
        second = int(raw) if len(raw) == 4 else (first // 100) * 100 + int(raw)
        if len(raw) == 2 and second <= first:
            second += 100
        if first < second <= first + 50 and second <= 2100 and marks.free(m.start(), m.end()):
            add(first, m.start(1), m.end(1))
            add(second, m.start(2), m.end(2))
            marks.take(m.start(), m.end())
    for m in re.finditer(r"((?:19|20)\d\d|[〇零一二三四五六七八九]{4})\s*年(?!級|级|代|紀|纪|齡|龄)", flat):
        year = _year_of(m.group(1))
        if year and marks.free(m.start(), m.end()):
            add(year, m.start(), m.end())
    for m in re.finditer(rf"\b{_MONTH}\.?,?\s+((?:19|20)\d\d)(?![\d])", flat):
        if marks.free(m.start(1), m.end(1)):
            add(int(m.group(1)), m.start(1), m.end(1))


# --------------------------------------------------------------------------- suffixes


def _suffixes(
    flat: str, f: _Found, *, currency: str = "", cjk_scale: bool = True, limit: int | None = None
) -> None:
    """Read the scale, percent, points or currency after a number and widen it to include them
    (never past `limit`, where something already read begins)."""
    flat = flat[:limit] if limit is not None else flat
    pos = f.end
    rest = flat[pos:]
    m = _EN_SCALE.match(rest)
    if m:
        f.scale *= _SCALE_WORDS[m.group(1).lower()]
        pos += m.end()
    else:
        m = re.match(r"[kK](?![A-Za-z])|[MB](?![A-Za-z])" + (r"|[mb](?![A-Za-z])" if currency else ""), rest)
        if m:
            f.scale *= {"k": 1e3, "m": 1e6, "b": 1e9}[m.group(0).lower()]
            pos += m.end()
        elif cjk_scale:
            m = _CJK_SCALE.match(rest)
            if m and not re.match(r" ?(?:十分|百分)", rest) and _cjk_multiplier(m.group(1)):
                f.scale *= _cjk_multiplier(m.group(1))
                pos += m.end()
                pos = _cjk_continuation(flat, f, pos)
    rest = flat[pos:]
    for pattern, kind, unit, factor in (
        (_PP, "percentage_points", "pp", 1.0),
        (_BPS, "percentage_points", "pp", 0.01),
        (_PERCENT, "percent", "%", 1.0),
    ):
        m = pattern.match(rest)
        if m:
            f.kind, f.unit = kind, unit
            f.value *= factor
            pos += m.end()
            break
    else:
        m = _TENTHS.match(rest) if not currency and f.scale == 1.0 and f.value <= 10 else None
        if m:
            f.kind, f.unit = "percent", "%"
            f.value *= 10
            pos += m.end()
        else:
            m = _SUFFIX_CURRENCY.match(rest)
            if m and (currency == "" or _suffix_unit(m) in (currency, "YUAN")):
                currency = currency or _suffix_unit(m)
                pos += m.end()
    if currency:
        f.kind, f.unit = "currency", currency
    f.value *= f.scale
    f.bare = f.kind == "number" and f.scale == 1.0
    f.end = pos


def _suffix_unit(m: re.Match) -> str:
    index = int(next(k for k, v in m.groupdict().items() if v)[1:])
    return _CURRENCY_SUFFIX[index][1]


def _cjk_multiplier(run: str) -> float:
    value = 1.0
    for c in run:
        value *= _UNITS.get(c) or _BIG.get(c) or 1
    return value if value > 1 else 0.0


def _cjk_continuation(flat: str, f: _Found, pos: int) -> int:
    """ "3億5千萬": after a big scale, a smaller number with its own scale adds to it."""
    while True:
        m = re.match(r"(\d+(?:\.\d+)?|[〇零一二兩两三四五六七八九十百千]+)([千百十萬万]+)", flat[pos:])
        if not m:
            return pos
        head = float(m.group(1)) if m.group(1)[0].isdigit() else _cjk_value(m.group(1))
        scale = _cjk_multiplier(m.group(2))
        if not head or not scale or head * scale >= f.scale:
            return pos
        f.value += head * scale / f.scale
        pos += m.end()


# --------------------------------------------------------------------------- Arabic numbers


def _arabic(flat: str, found: list[_Found], marks: _Marks) -> None:
    for m in _ARABIC.finditer(flat):
        start, end = m.start(), m.end()
        raw = m.group(1)
        if not marks.free(start, end):
            continue
        before = flat[:start]
        prev = before[-1:] or "\n"  # a sentinel: "" is in every string
        if re.fullmatch(r"0\d+", raw.replace(",", "")):
            continue  # leading zeros: an identifier, not an amount
        if prev in ".,_@#/\\" or prev.isdigit():
            continue
        hyphen_left = prev in "-–—" and len(before) >= 2 and before[-2].isalnum()
        signed = prev in "-+" and not hyphen_left and before[-2:-1] in ("", " ", "(", "\n", "\t", "（", "±")
        head = before[:-1] if signed else before
        currency = ""
        prefix = _PREFIX.search(head[-12:])
        if prefix:
            index = int(next(k for k, v in prefix.groupdict().items() if v)[1:])
            letters_before = head[: len(head) - len(prefix.group(0))][-1:]
            if not (letters_before.isascii() and letters_before.isalpha()):
                currency = _CURRENCY_PREFIX[index][1]
        if not currency and prev.isascii() and prev.isalpha():
            continue  # glued to letters: "EDS101", "Q3", "v2"
        if signed:
            start -= 1  # a sign: "-3.2%", "USD -0.21 billion"
        if currency:
            start = len(head) - len(prefix.group(0))
        label = bool(_LABELS.search(before[-40:]) or _CJK_LABELS.search(before[-6:]))
        label = label or bool(re.search(r"(?i)\byear\s*$", before) and float(raw.replace(",", "")) < 13)
        if _LIST_START.search(before) and re.match(r"[.)）]\s", flat[end : end + 2] + " "):
            continue
        if prev in "(（" and flat[end : end + 1] in (")", "）") and len(raw) <= 2:
            continue  # "(2)": a list number
        number = float(raw.replace(",", ""))
        if signed and prev == "-":
            number = -number
        f = _Found("number", number, "", start, end, decimals=len(raw.split(".")[1]) if "." in raw else 0)
        f.hyphen_left = hyphen_left
        rest = flat[end:]
        if re.match(r"\s?(?:年級|年级|年代|月|日|號|号|歲月)", rest) and not currency:
            continue
        if re.match(r"\s?年(?!級|级|代)", rest) and not currency:
            if 80 <= number <= 150 and "." not in raw:
                continue  # "112年": a Republic-era year or a duration; not read
        _suffixes(flat, f, currency=currency, limit=marks.limit(end))
        after = flat[f.end :]
        if f.bare and label:
            continue  # "Week 3", "Table 2", "p. 4", "year 2", "第3章"
        if f.bare and _GLUED_AFTER.match(after):
            continue  # "3rd", "5G", "10-Q", "1/2", "3.2.1"
        if not f.bare and re.match(r"[A-Za-z]", after):
            continue
        f.hyphen_right = bool(re.match(r"[-–—]\d", after))
        if f.bare and "," not in raw and "." not in raw and len(raw) == 4 and 1900 <= number <= 2100:
            plural = re.match(r"\s+([a-z]+s)\b", after)
            counted = plural and plural.group(1) not in ("was", "is", "has", "as", "this", "its", "levels")
            if not counted or _YEAR_WORDS.search(before[-20:]):
                f.kind, f.bare = "year", False
        found.append(f)
        marks.take(f.start, f.end)


# --------------------------------------------------------------------------- CJK numerals


def _cjk_value(run: str) -> float | None:
    """The number a run of CJK numerals writes, or None when it is no well-formed number."""
    if not run:
        return None
    if not any(c in _UNITS or c in _BIG or c in "點点" for c in run):
        digits = _digit_by_digit(run)
        return None if digits is None else float(digits)
    whole, _, decimals = run.replace("点", "點").partition("點")
    fraction = 0.0
    if decimals:
        digits = _digit_by_digit(decimals)
        if digits is None:
            return None
        fraction = float("0." + decimals.translate({ord(k): str(v) for k, v in _DIGITS.items()}))
    total, section, number, last_unit = 0, 0, None, 10**13
    for c in whole:
        if c in _DIGITS:
            if number is not None and number != 0 and _DIGITS[c] != 0:
                return None  # two digits in a row: "一二百"
            number = _DIGITS[c]
        elif c in _UNITS:
            unit = _UNITS[c]
            if unit >= last_unit:
                return None
            section += (number if number is not None else 1) * unit
            number, last_unit = None, unit
        elif c in _BIG:
            section += number or 0
            if section == 0:
                return None
            total += section * _BIG[c]
            section, number, last_unit = 0, None, 10**13
    return float(total + section + (number or 0)) + fraction


def _cjk(flat: str, found: list[_Found], marks: _Marks) -> None:
    for m in _CJK_RUN.finditer(flat):
        start, end, run = m.start(), m.end(), m.group(0)
        if not marks.free(start, end):
            continue
        before, rest = flat[:start], flat[end:]
        if run[0] not in _DIGITS and run[0] != "十":
            continue  # 千萬, 萬一, 百姓: words
        if _CJK_LABELS.search(before[-6:]) or re.match(r"\s?(?:月|日|號|号|分之)", rest):
            continue
        if before.endswith(("週", "周")) and not any(rest.startswith(w) for w in _MEASURES):
            continue  # 週三: Wednesday (每週三次 is a count)
        value = _cjk_value(run)
        if value is None:
            continue
        has_units = any(c in _UNITS or c in _BIG for c in run) or bool(
            re.search(r"[^點点]+[點点][^點点]+", run)
        )
        single = len(run) == 1
        if run.endswith(("點", "点")):
            continue
        if not has_units and not single:
            if not ("〇" in run or "零" in run or (len(run) == 4 and rest.startswith("年"))):
                continue
        if single or run == "十":
            measured = any(rest.startswith(w) for w in _MEASURES) and not rest.startswith(
                ("年級", "年级", "年代")
            )
            marked = bool(_TENTHS.match(rest) or _PP.match(rest) or _PERCENT.match(rest))
            if run == "一" and not marked:
                continue  # 一個, 一般, 一定: "a", not "one"
            if not (measured or marked):
                continue
        if run == "十" and rest.startswith("分"):
            continue  # 十分: "very"
        f = _Found("number", value, "", start, end, decimals=0)
        if re.match(r"年(?!級|级|代)", rest) and 1900 <= value <= 2100:
            f.kind, f.bare, f.end = "year", False, end + 1
        else:
            _suffixes(flat, f, cjk_scale=False, limit=marks.limit(end))
        found.append(f)
        marks.take(f.start, f.end)


def _percent_words(flat: str, found: list[_Found], marks: _Marks) -> None:
    """百分之三十, 百分之 30, 百分之三十五點五, 百分之百."""
    for m in re.finditer(rf"百分之\s*(\d+(?:\.\d+)?|[{_CJK_NUM}]+)", flat):
        raw = m.group(1)
        value = float(raw) if raw[0].isdigit() else (100.0 if raw == "百" else _cjk_value(raw))
        if value is None or not marks.free(m.start(), m.end()):
            continue
        found.append(_Found("percent", value, "%", m.start(), m.end(), bare=False))
        marks.take(m.start(), m.end())


# --------------------------------------------------------------------------- English words


def _english(flat: str, found: list[_Found], marks: _Marks) -> None:
    words = [(m.group(0), m.start(), m.end()) for m in _EN_WORD.finditer(flat)]
    i = 0
    while i < len(words):
        phrase = _phrase(flat, words, i)
        if not phrase:
            i += 1
            continue
        j, value = phrase
        start, end = words[i][1], words[j - 1][2]
        following = (
            _phrase(flat, words, j) if j < len(words) and _spaced(flat, words[j - 1], words[j]) else None
        )
        i = following[0] if following else j
        if following or _FRACTIONS.match(flat[end:]) or flat[end : end + 1] == "-":
            continue  # "nineteen ninety-nine", "two thirds", "two-thirds"
        if flat[start:end].lower() == "one" or not marks.free(start, end):
            continue
        f = _Found("number", float(value), "", start, end)
        _suffixes(flat, f, cjk_scale=False, limit=marks.limit(end))
        if f.bare and 1900 <= value <= 2100 and _YEAR_WORDS.search(flat[:start][-20:]):
            f.kind, f.bare = "year", False
        found.append(f)
        marks.take(f.start, f.end)


_NUMBER_WORDS = frozenset([*_EN_UNITS, *_EN_TENS, *_EN_SCALES, "hundred", "and", "a"])


def _spaced(flat: str, left: tuple[str, int, int], right: tuple[str, int, int]) -> bool:
    return flat[left[2] : right[1]] in (" ", "\n")


def _phrase(flat: str, words: list[tuple[str, int, int]], i: int) -> tuple[int, int] | None:
    """(index of the word after the phrase, its value) of the number words that start at
    words[i], or None. A hyphenated word is read whole or not at all ("three-year" is not)."""
    tokens: list[tuple[str, int]] = []
    for k in range(i, len(words)):
        if k > i and not _spaced(flat, words[k - 1], words[k]):
            break
        parts = words[k][0].lower().split("-")
        if not all(p in _NUMBER_WORDS for p in parts):
            break
        tokens += [(p, k) for p in parts]
    total = current = good = 0
    last = ""
    values: dict[int, int] = {}
    for n, (word, _) in enumerate(tokens):
        following = tokens[n + 1][0] if n + 1 < len(tokens) else ""
        if word == "a":
            if n or following not in ("hundred", *_EN_SCALES):
                break
            current, last = 1, "unit"
        elif word == "and":
            if last not in ("hundred", "scale") or not (following in _EN_UNITS or following in _EN_TENS):
                break
        elif word in _EN_UNITS:
            if last in ("unit", "teen") or (last == "tens" and _EN_UNITS[word] >= 10):
                break
            current += _EN_UNITS[word]
            last = "teen" if _EN_UNITS[word] >= 10 else "unit"
        elif word in _EN_TENS:
            if last in ("unit", "teen", "tens"):
                break
            current += _EN_TENS[word]
            last = "tens"
        elif word == "hundred":
            if not last or last in ("hundred", "tens", "teen"):
                break
            current *= 100
            last = "hundred"
        else:
            if not last or last == "scale":
                break
            total += current * _EN_SCALES[word]
            current, last = 0, "scale"
        good = n + 1
        values[good] = total + current
    while good:
        word, k = tokens[good - 1]
        whole = good == len(tokens) or tokens[good][1] != k
        if whole and word not in ("and", "a"):
            break
        good -= 1
    if not good:
        return None
    return tokens[good - 1][1] + 1, values[good]


# --------------------------------------------------------------------------- ranges


_RANGE_GAP = re.compile(r"\s*(?:[-–—~～〜]|to|至|到)\s*$|\s+and\s+$")


def _ranges(flat: str, found: list[_Found]) -> list[_Found]:
    """Two numbers joined by a dash, "to", 至 or 到 are a range: each side takes the unit, scale
    and currency the other states. Numbers joined by a hyphen with no unit on either side are
    dropped (a phone or accession number, a grade band)."""
    found.sort(key=lambda f: f.start)
    keep = list(found)
    dropped: set[int] = set()
    for a, b in zip(found, found[1:]):
        gap = flat[a.end : b.start]
        if a.kind == "year" or b.kind == "year" or not _RANGE_GAP.fullmatch(gap):
            continue
        if gap.strip() == "and" and not re.search(r"between\s+\S*$", flat[: a.start], re.I):
            continue
        hyphen = gap.strip() in ("-", "–", "—")
        if a.bare and b.bare:
            if hyphen:
                dropped |= {id(a), id(b)}
            continue
        for one, other in ((a, b), (b, a)):
            if one.scale == 1.0 and other.scale != 1.0:
                one.value *= other.scale
                one.scale = other.scale
            if one.kind == "number" and other.kind != "number":
                one.kind, one.unit = other.kind, other.unit
            one.bare = False
        a.hyphen_right = b.hyphen_left = False
    for f in keep:
        if f.hyphen_left or f.hyphen_right:
            dropped.add(id(f))  # a hyphen to a number that is not the other side of a range
    return [f for f in keep if id(f) not in dropped]


# --------------------------------------------------------------------------- loose numbers


def _loose(flat: str) -> list[tuple[float, int, int]]:
    """Every number the text writes, whatever it is: Arabic digits (commas out), CJK numeral runs
    that read as a number (一 alone only after 第), and English number and ordinal words ("one"
    and "a" alone excepted)."""
    out = []
    for m in re.finditer(r"\d+(?:,\d{3})*(?:\.\d+)?", flat):
        out.append((float(m.group(0).replace(",", "")), m.start(), m.end()))
    for m in _CJK_RUN.finditer(flat):
        run = m.group(0)
        if run[0] not in _DIGITS and run[0] != "十":
            continue
        if run == "一" and not flat[: m.start()].endswith("第"):
            continue
        value = _cjk_value(run)
        if value is not None:
            out.append((value, m.start(), m.end()))
    for m in _EN_WORD.finditer(flat):
        for part in m.group(0).lower().split("-"):
            if part in _EN_ORDINALS:
                out.append((float(_EN_ORDINALS[part]), m.start(), m.end()))
    words = [(m.group(0), m.start(), m.end()) for m in _EN_WORD.finditer(flat)]
    i = 0
    while i < len(words):
        phrase = _phrase(flat, words, i)
        if phrase and flat[words[i][1] : words[phrase[0] - 1][2]].lower() != "one":
            out.append((float(phrase[1]), words[i][1], words[phrase[0] - 1][2]))
            i = phrase[0]
        else:
            i += 1
    return sorted(out, key=lambda x: x[1])


# --------------------------------------------------------------------------- comparing, computing


def same_quantity(a: ParsedValue, b: ParsedValue, *, tolerance: float = 0.01) -> bool:
    """The same amount: same kind and unit, values within `tolerance` of the larger (relative;
    a year must be equal). Years attached to the values are not compared: what the values are
    about is the caller's to decide."""
    if a.kind != b.kind or a.unit != b.unit:
        return False
    if a.kind == "year":
        return int(a.value) == int(b.value)
    return math.isclose(a.value, b.value, rel_tol=tolerance, abs_tol=1e-12)


def compute(kind: str, a: ParsedValue, b: ParsedValue) -> float | None:
    """What code derives from two values of one kind and unit, `a` the base:

    - "difference": b − a (numbers, currencies, percents — a difference of percents is in
      percentage points — and percentage points);
    - "ratio": b / a (numbers and currencies);
    - "growth": (b − a) / a × 100, in percent (numbers and currencies, a > 0).

    None when it means nothing: different kinds or units, years, a zero or negative base."""
    vocabulary.COMPUTED_KINDS.check(kind)
    if a.kind != b.kind or a.unit != b.unit or a.kind == "year":
        return None
    if kind == "difference":
        return b.value - a.value
    if a.kind not in ("number", "currency") or a.value <= 0:
        return None
    if kind == "ratio":
        return b.value / a.value
    return (b.value - a.value) / a.value * 100


def computed_unit(kind: str, a: ParsedValue) -> str:
    """The unit of compute(kind, a, …): growth in percent, a ratio without unit, a difference in
    the inputs' unit (percentage points for percents)."""
    if kind == "growth":
        return "%"
    if kind == "ratio":
        return ""
    return "pp" if a.kind == "percent" else a.unit
