"""The check every model-written item passes before it is shown: an AI-labelled block carries no
figure, year, name or negation that its spans lack.

`novel(text, grounds)` lists what `text` states beyond `grounds` (the texts of the spans the item
cites), as (reason, token) pairs; the reasons are vocabulary.NOT_SHOWN_REASONS codes:

- **novel_figure**: a value of the text (values.parse) that no ground states as the same amount:
  same kind and unit (a percent is no percentage point, NT$ is no US$), equal within 1 % or equal
  once the ground's value is rounded to the precision the text writes ("35 billion" for
  35,082,000,000). A bare number of the text may match any ground value's amount or its number
  as written ("35.1" for "35.1 billion"), since it states less. Every other number the text
  writes at all, labels and ordinals included ("Week 5", "第五", "third"), must be a number some
  ground writes (values.Scan.loose). Figures compare as values: 十萬 is 100,000, "ten percent" is
  10 %.
- **novel_year**: a year the text mentions (a year value or the year of a date) that no ground
  mentions (二〇一一年 is 2011, 民國100年 is 2011); a fiscal year (FY2025, fiscal 2025, 2025 財年)
  only as a fiscal year (the calendar dates of a filing are no fiscal year).
- **novel_name**: a name the grounds lack.
  *Latin*: a word with a capital letter, an acronym or a word with a capital or digit inside
  ("iPhone", "GPT4"), not at the start of a sentence unless it is no common opener (grammatical
  words, -ly adverbs and a short list of discourse words at a sentence start are not names);
  it is in the grounds when the grounds hold the same word, whatever its case (a crude stem:
  "Bloom's" is "Bloom").
  *CJK*: a run of Han characters in 「」『』《》〈〉 quotes, or a run of two to six Han characters
  ended by an institution or title word (大學, 學院, 公司, 銀行, 醫院, 研究院, 委員會, 協會, 部,
  局, 署, 政府, 教授, 老師, 博士…); it is in the grounds when the grounds hold it verbatim (the
  generic prefixes 國立/私立/市立/縣立 aside). Other Han text is not checked for names: without a
  dictionary, any other rule would take ordinary words for names.
- **novel_negation**: the text negates (not, no, never, none, nor, cannot, n't, false, without,
  沒有, 並未, 未, 不, 無, 非, 否, 並非, 不是, 錯誤…) where no ground negates the same words, or
  restates words that a ground negates without negating them. "The same words" is the next
  three content words after the negation (Chinese: the character bigrams of the next four
  characters); a negation counts as the ground's when one of those is among a ground
  negation's. Compounds that negate nothing (不同, 不斷, 非常, 未來, 無論, 是否, 除非, 未成年…) are
  not negations.

Quantifiers ("every university in every year") are none of these: an AI-labelled block may
generalise, and it is labelled as the AI's. A fact never holds the model's words.

`translation_keeps(original, translation)` is the check on a machine translation of a span:
every value, year and number of the original is in the translation and the translation has none
of its own, and every Latin name of the original appears in it verbatim (a name followed by its
acronym in brackets, "Institutional Review Board (IRB)", is kept when the acronym is); a
translation of an English original adds no Latin name. What fails is ("lost_numbers", token).
"""

from __future__ import annotations

import math
import re
import unicodedata

from .values import ParsedValue, Scan, scan

_MARKERS = re.compile(r"\[\s*c?\d{1,4}(?:\s*[,，、;；]\s*c?\d{1,4})*\s*\]|\[\d+\.\d+\]", re.I)
_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

# --------------------------------------------------------------------------- figures and years


def _matches(mine: ParsedValue, theirs: ParsedValue) -> bool:
    if mine.kind == "number" and mine.scale == 1.0:
        amounts = (theirs.value, theirs.written)
    elif mine.kind == theirs.kind and mine.unit == theirs.unit:
        amounts = (theirs.value,)
    elif mine.kind == "number" and theirs.kind == "currency":
        amounts = (theirs.value,)  # "35.1 billion" of "USD 35,082,000,000": it states less
    else:
        return False
    for amount in amounts:
        if math.isclose(mine.value, amount, rel_tol=0.01, abs_tol=1e-9):
            return True
        step = mine.scale * 10 ** (-mine.decimals)
        if math.isclose(round(amount / step) * step, mine.value, rel_tol=1e-9, abs_tol=1e-9):
            return True
    return False


def _fiscal(text: str, start: int) -> bool:
    """A fiscal year ("FY2025", "fiscal 2025", "2025 財年") is not the calendar year of a date."""
    return bool(
        re.match(r"(?i)[FCAS]Y", text[start : start + 2])
        or re.search(r"(?i)fiscal(?:\s+year)?\s*$", text[:start])
        or re.match(r"\d{4}\s*財年", text[start:])
    )


def _figures(text: str, mine: Scan, grounds: list[Scan], ground_texts: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    theirs = [v for g in grounds for v in g.values if v.kind != "year"]
    loose = {round(n, 9) for g in grounds for n, _, _ in g.loose}
    loose |= {round(v.written, 9) for v in theirs} | {round(v.value, 9) for v in theirs}
    covered: list[tuple[int, int]] = []
    for value in mine.values:
        covered.append((value.start, value.end))
        if value.kind == "year":
            continue
        if not any(_matches(value, t) for t in theirs):
            out.append(("novel_figure", value.text))
    years = {y for g in grounds for y, *_ in g.years}
    fiscal = {y for g, t in zip(grounds, ground_texts) for y, start, _, _ in g.years if _fiscal(t, start)}
    for year, start, end, _ in mine.years:
        covered.append((start, end))
        if year not in (fiscal if _fiscal(text, start) else years):
            out.append(("novel_year", text[start:end]))
    for number, start, end in mine.loose:
        if any(s <= start and end <= e for s, e in covered):
            continue
        if round(number, 9) not in loose:
            out.append(("novel_figure", text[start:end]))
    return out


# --------------------------------------------------------------------------- names

_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)?")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？:;：；]\s*|\n\s*|[\"“「(（]\s*)$")
_COMMON = frozenset(
    """a an the and or but nor of in on at to for from by with as into onto via per than then is are
    was were be been being am it its this that these those there their they them he she his her we
    our you your i me my which who whom whose what when where how why while also both either each
    such same other another some any all has have had do does did can could may might will would
    should must shall about so thus hence therefore however although though because since if whether
    not no never none yet still overall moreover furthermore additionally instead meanwhile finally
    first second third next last most many much more less few several one two three four five six
    seven eight nine ten here there only even just every taken given based according together
    regarding despite unlike like""".split()
)
_PERIOD = re.compile(r"(?:FY|CY|AY|SY)\d{2,4}(?:Q[1-4]|H[12])?|[QH][1-4]|\d{4}Q[1-4]")
_UNITS = frozenset("usd twd ntd nt eur gbp jpy cny rmb hkd sgd us pp bps bn mn tn fy cy".split())
_INSTITUTION = (
    "大學|大学|學院|学院|研究院|研究所|研究中心|中心|公司|集團|集团|銀行|银行|醫院|医院|委員會|委员会|協會|协会|基金會|基金会|"
    "政府|部|局|署|處|处|廳|厅|法院|出版社|實驗室|实验室|高中|國中|国中|小學|小学|中學|中学|"
    "教授|老師|老师|博士|先生|女士|院長|院长|校長|校长|部長|部长|總統|总统|主任"
)
_CJK_NAME = re.compile(rf"([{_HAN}]{{2,6}}?)(?:{_INSTITUTION})")
_CJK_QUOTED = re.compile(r"[「『《〈]([^」』》〉]{1,30})[」』》〉]")
_GENERIC_PREFIX = re.compile(r"^(?:國立|国立|私立|市立|縣立|县立|省立)")
_CJK_FUNCTION = set(
    "的了是在和與与及也而並并其此該该為为於于以之等對对由從从這这那有將将被就都又或即則则所者個个些中亦且"
)


def _stem(word: str) -> str:
    word = re.split(r"['’]", word.lower())[0]
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def latin_names(text: str, *, at_start: bool = True) -> list[str]:
    """The Latin names of a text (see the module's rule), in order, each once. `at_start`: also
    a capitalised word at a sentence's start that is no common opener."""
    out = []
    for m in _LATIN.finditer(text):
        word = m.group(0)
        base = re.split(r"['’]", word)[0]
        if len(base) < 2 or base.lower() in _UNITS or _PERIOD.fullmatch(base):
            continue  # a period label is checked as a year (FY2025) or a number (Q3)
        inner = any(c.isupper() or c.isdigit() for c in base[1:])
        if not (base[0].isupper() or inner):
            continue
        start = bool(_SENTENCE_START.search(text[: m.start()]))
        if start and not inner:
            low = base.lower()
            if not at_start or low in _COMMON or low.endswith("ly"):
                continue
        if base not in out:
            out.append(base)
    return out


def cjk_names(text: str) -> list[str]:
    out = []
    for m in _CJK_QUOTED.finditer(text):
        if re.search(rf"[{_HAN}]", m.group(1)):
            out.append(m.group(1))
    for m in _CJK_NAME.finditer(text):
        run = m.group(1)
        # The name is the run of content characters just before the title word.
        while run and run[0] in _CJK_FUNCTION:
            run = run[1:]
        cut = max((run.rfind(c) for c in _CJK_FUNCTION), default=-1)
        run = run[cut + 1 :]
        if len(run) >= 2:
            out.append(run + m.group(0)[len(m.group(1)) :])
    return list(dict.fromkeys(out))


def _names(text: str, grounds: str) -> list[tuple[str, str]]:
    plain = unicodedata.normalize("NFKC", grounds).lower()
    words = {_stem(w) for w in re.findall(r"[a-z][a-z0-9]*(?:['’][a-z]+)?", plain)}
    out = []
    for name in latin_names(text):
        if _stem(name) not in words:
            out.append(("novel_name", name))
    for name in cjk_names(text):
        if _GENERIC_PREFIX.sub("", name) not in grounds:
            out.append(("novel_name", name))
    return out


# --------------------------------------------------------------------------- negation

_NEG_EN = re.compile(
    r"\b(?:not|no|never|none|nor|neither|cannot|without|false|untrue|nobody|nothing|nowhere)\b|\w+n't\b|\w+n’t\b",
    re.I,
)
_NEG_ZH = re.compile(
    r"沒有|没有|並未|并未|並非|并非|不是|錯誤|错误|從未|从未|從不|从不|毫無|毫无|尚未|未|不|無|无|非|否|別|别|勿|莫"
)
_NOT_NEGATIONS = re.compile(
    r"不同|不斷|不断|不過|不过|不錯|不错|不僅|不仅|不但|不論|不论|不管|不久|不少|不妨|不得不|非常|非洲|無論|无论|否則|否则|"
    r"未來|未来|未成年|是否|能否|可否|與否|与否|除非|無線|无线|並不|無人機|无人机|莫非|別人|别人|別的|别的|特別|特别|區別|区别|差別|差别|"
    r"類別|类别|個別|个别|性別|性别|級別|级别"
)
_EN_STOP = frozenset(
    """a an the and or but of in on at to for from by with as is are was were be been it its this that
    these those there their they than then which who what do does did has have had so true case
    any all""".split()
)


def _negations(text: str) -> list[tuple[str, set[str]]]:
    """(negation word, the words it governs) of every negation in `text`."""
    flat = unicodedata.normalize("NFKC", _MARKERS.sub(" ", text)).lower()
    out = []
    for m in _NEG_EN.finditer(flat):
        following = [w for w in re.findall(r"[a-z0-9]+", flat[m.end() :][:120]) if w not in _EN_STOP]
        out.append((m.group(0), {_stem(w) for w in following[:3]}))
    masked = _NOT_NEGATIONS.sub(lambda m: "\x00" * len(m.group(0)), flat)
    for m in _NEG_ZH.finditer(masked):
        chars = "".join(re.findall(rf"[{_HAN}]", flat[m.end() : m.end() + 8]))[:4]
        out.append(
            (m.group(0), {chars[i : i + 2] for i in range(len(chars) - 1)} or ({chars} if chars else set()))
        )
    return out


def negates(text: str) -> bool:
    """Whether a text holds a negation at all (the words and compounds above)."""
    flat = unicodedata.normalize("NFKC", text or "").lower()
    if _NEG_EN.search(flat):
        return True
    return bool(_NEG_ZH.search(_NOT_NEGATIONS.sub(lambda m: "\x00" * len(m.group(0)), flat)))


def _negation(text: str, grounds: list[str]) -> list[tuple[str, str]]:
    mine = _negations(text)
    theirs = [n for g in grounds for n in _negations(g)]
    governed = set().union(*(w for _, w in theirs)) if theirs else set()
    out = []
    for word, words in mine:
        if not theirs or (words and not words & governed):
            out.append(("novel_negation", word))
    if not mine:
        flat = unicodedata.normalize("NFKC", text).lower()
        mine_words = {_stem(w) for w in re.findall(r"[a-z0-9]+", flat)}
        mine_bigrams = {flat[i : i + 2] for i in range(len(flat) - 1)}
        for word, words in theirs:
            if words & mine_words or words & mine_bigrams:
                out.append(("novel_negation", word))
                break
    return out


# --------------------------------------------------------------------------- the checks


def novel(text: str, grounds: list[str]) -> list[tuple[str, str]]:
    """What `text` states that `grounds` do not: (reason, token) pairs, in the order figure,
    year, name, negation; empty when the text may be shown."""
    clean = _MARKERS.sub(" ", text or "")
    grounds = [g for g in grounds if g]
    out = _figures(clean, scan(clean), [scan(g) for g in grounds], grounds)
    out += _names(clean, "\n".join(grounds))
    out += _negation(clean, grounds)
    return list(dict.fromkeys(out))


def translation_keeps(original: str, translation: str) -> list[tuple[str, str]]:
    """What a translation loses or adds: ("lost_numbers", token) for each value, year or number
    of the original it lacks, each one it adds, and each Latin name of the original it does not
    write verbatim (empty: the translation may be shown beside its original). Values compare by
    unit and amount (30 % is 三成, 100,000 is 十萬, but 3 percentage points is no 3 %)."""
    a, b = _numbers(scan(original)), _numbers(scan(translation))
    out: list[tuple[str, str]] = []
    for mine, theirs, text in ((a, b, original), (b, a, translation)):
        for unit, amount, start, end in mine:
            if not any(_same(unit, amount, u, x) for u, x, _, _ in theirs):
                out.append(("lost_numbers", text[start:end]))
    for name in _kept_names(original):
        if not re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![a-z])", translation):
            out.append(("lost_numbers", name))
    if not re.search(rf"[{_HAN}]", original):
        known = {_stem(w) for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", original)}
        for name in latin_names(translation, at_start=False):
            if _stem(name) not in known:
                out.append(("lost_numbers", name))
    return list(dict.fromkeys(out))


def _numbers(s: Scan) -> list[tuple[str, float, int, int]]:
    """(unit, amount, start, end) of everything numeric a text writes: its values ("year" as
    the unit of a year), then the numbers it writes outside them ("" as their unit)."""
    out = [("year" if v.kind == "year" else v.unit, v.value, v.start, v.end) for v in s.values]
    out += [
        ("year", float(y), start, end)
        for y, start, end, _ in s.years
        if not any(o[2] <= start and end <= o[3] for o in out)
    ]
    out += [
        ("", n, start, end)
        for n, start, end in s.loose
        if not any(o[2] <= start and end <= o[3] for o in out)
    ]
    return out


def _same(unit: str, amount: float, other_unit: str, other: float) -> bool:
    if not math.isclose(amount, other, rel_tol=1e-6, abs_tol=1e-9):
        return False
    # A number written without a unit may stand for the same amount with one (it states less).
    return unit == other_unit or "" in (unit, other_unit)


def _kept_names(original: str) -> list[str]:
    """The Latin names a translation must keep: in a Chinese original every Latin word of two
    letters or more; in an English one its names, except the words of a name followed by its
    acronym in brackets (the acronym stands for them)."""
    if re.search(rf"[{_HAN}]", original) and len(re.findall(rf"[{_HAN}]", original)) >= sum(
        c.isascii() and c.isalpha() for c in original
    ):
        return list(
            dict.fromkeys(w for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", original) if w.lower() not in _UNITS)
        )
    names = latin_names(original, at_start=False)
    spelled: set[str] = set()
    for m in re.finditer(
        r"((?:[A-Z][a-z]+[\s-]+(?:(?:of|and|for|the)\s+)?){1,6})[(（]([A-Z]{2,})[)）]", original
    ):
        spelled |= set(re.findall(r"[A-Z][a-z]+", m.group(1)))
    return [n for n in names if n not in spelled]
