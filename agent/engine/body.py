"""What code checks in the body of a report, without asking any model.

The verifier model can agree with everything; these checks hold whatever it says:

- **Words** (`novel_words`): a sentence, a table cell, a heading or a conflict's subject may use
  only the words of the verified claims it cites (their text and their figure fields), after
  normalisation: NFKC, Latin case, a crude suffix stem (`rose`/`rises`, `students`/`student`),
  grammatical words that state nothing (the, of, 的, 是…) left out. Numbers are words here: a
  year or a quarter that no cited claim states is new. In Chinese every CJK character is a word.
  A negation (not, no, never, 不, 未, 沒有…) must be on both sides or neither: dropping one turns
  a claim into its opposite with no new word.
- **Names and numbers** (`novel_names`): a judgement's sentences and its assumptions are the
  writer's own reasoning, so their common words are free; their numbers and their names
  (capitalised or all-capital Latin words, runs of CJK characters) must be stated by the claims
  they rest on.
- **Figure tables** (`figure_table`): a table stating figures is rendered here from the figure
  claims it cites (entity · period by metric, the claim's value and unit, its marker); the
  writer's cells never reach the body.
- **The fallback body** (`claims_body`): when the draft cannot be checked, or nothing the writer
  wrote survived, the body is the verified claims themselves, grouped under the plan's
  sub-questions, each with its marker.

What neither code nor the verifier can see is listed in docs/reports.md."""

from __future__ import annotations

import re
import unicodedata

from .claims import Claim

# Grammatical words: they state nothing on their own. Direction words (rise, fall, more, less,
# up, down…) and negations are deliberately absent: they are what a wrong sentence changes.
_STOPWORDS = frozenset(
    """a an the and or but nor of in on at to for from by with as into onto via per than then
    is are was were be been being am it its this that these those there their theirs they them
    he she his her hers we our ours you your yours i me my which who whom whose what when where
    how why while whereas also both either each such same other another some any all has have
    had having do does did done can could may might will would should must shall about
    according so thus therefore hence however although though because since if whether
    respectively overall approximately around roughly nearly about just only very""".split()
)
_NEGATIONS_EN = frozenset("not no never none nor neither without cannot n't".split())
_NEGATIONS_ZH = ("沒有", "没有", "並未", "并未", "未", "不", "無", "无", "非", "否")
# CJK characters that carry grammar, not content.
_CJK_FUNCTION = frozenset(
    "的了是在和與与及也而並并其此該该為为於于以之等對对由從从這这那有將将被就都又或即則则所者個个些中其亦且"
)
# A judgement's own vocabulary: hedges and evaluation (its names and numbers are still checked).
_JUDGEMENT_ZH = frozenset(
    "可能應該应该值得建議建议採用采用風險风险較较佳好壞坏更因此整體整体看來看来似乎或許或许相當相当"
    "有助於需要宜將会會仍然顯示显示表示認為认为判斷判断評估评估傾向倾向合理適合适合"
    "擴大扩大縮小缩小維持维持改善提升降低繼續继续停止成功失敗失败未來未来明年下學期学期發展发展成長成长"
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+(?:[.,]\d+)*|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_MARKERS = re.compile(r"\[\s*c?\d{1,4}(?:\s*[,，、;；]\s*c?\d{1,4})*\s*\]", re.I)


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", _MARKERS.sub(" ", text or "")).lower()


def _stem(word: str) -> str:
    if word[0].isdigit():
        return word.replace(",", "").rstrip("0").rstrip(".") if "." in word else word.replace(",", "")
    for suffix, keep in (
        ("'s", ""),
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ed", ""),
        ("ing", ""),
        ("ly", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(normalise(text))


def _stems(texts: list[str]) -> set[str]:
    return {_stem(t) for text in texts for t in _tokens(text)}


def _negated(text: str) -> bool:
    low = normalise(text)
    return bool(set(re.findall(r"[a-z]+(?:'[a-z]+)?", low)) & _NEGATIONS_EN) or any(
        n in low for n in _NEGATIONS_ZH
    )


def grounds(claims: list[Claim]) -> list[str]:
    """The texts a unit citing these claims may draw its words from."""
    return [part for c in claims for part in (c.text, c.entity, c.metric, c.period, c.unit) if part]


def novel_words(text: str, allowed: list[str]) -> list[str]:
    """The words of `text` that none of `allowed` states (empty: every word is grounded). A
    negation on one side only counts as a new word."""
    have = _stems(allowed)
    novel = []
    for token in _tokens(text):
        if len(token) == 1 and token.isascii() and token.isalpha():
            continue
        if token in _STOPWORDS or token in _CJK_FUNCTION:
            continue
        if _stem(token) not in have and token not in novel:
            novel.append(token)
    if _negated(text) != _negated(" ".join(allowed)):
        novel.append("(negation)")
    return novel


_NAME = re.compile(r"(?<![\w'])([A-Z][\w'’-]*|\d+(?:[.,]\d+)*)")


def novel_names(text: str, allowed: list[str]) -> list[str]:
    """The numbers and names of `text` that none of `allowed` states: capitalised Latin words
    (a sentence's first word only when it is no grammatical word) and runs of two or more CJK
    characters that are neither in `allowed` nor judgement vocabulary."""
    have = _stems(allowed)
    have_chars = {ch for t in allowed for ch in normalise(t) if _CJK.match(ch)}
    novel: list[str] = []
    plain = unicodedata.normalize("NFKC", _MARKERS.sub(" ", text or ""))
    for match in _NAME.finditer(plain):
        word = match.group(1)
        low = word.lower()
        if low in _STOPWORDS or low in _NEGATIONS_EN:
            continue
        stems = {_stem(t) for t in _TOKEN.findall(low)}
        if stems and not stems <= have and word not in novel:
            novel.append(word)
    run = ""
    for ch in plain + " ":
        if _CJK.match(ch) and ch not in have_chars and ch not in _JUDGEMENT_ZH and ch not in _CJK_FUNCTION:
            run += ch
            continue
        if len(run) >= 2 and run not in novel:
            novel.append(run)
        run = ""
    return novel


def same_text(a: str, b: str) -> bool:
    """Two texts that say the same words in the same order (markers, case, spacing and the
    closing stop aside): a unit that renders a claim verbatim."""

    def flat(text: str) -> str:
        return " ".join(_TOKEN.findall(normalise(text)))

    return bool(flat(a)) and flat(a) == flat(b)


# --------------------------------------------------------------------------- tables


def _value(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:,.6f}".rstrip("0").rstrip(".")


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "/").split())


def figure_table(claims: list[Claim]) -> str:
    """A Markdown table of figure claims: one row per entity and period, one column per metric,
    each cell the claim's value and unit with its marker. Everything in it is a claim's field."""
    figures = [c for c in claims if c.kind == "figure" and c.value is not None]
    if not figures:
        return ""
    metrics = list(dict.fromkeys(_cell(c.metric) or "—" for c in figures))
    rows: dict[str, dict[str, str]] = {}
    for c in figures:
        label = " · ".join(p for p in (_cell(c.entity), _cell(c.period)) if p) or "—"
        column = _cell(c.metric) or "—"
        cell = f"{_value(c.value)} {_cell(c.unit)}".strip() + f" [c{c.id}]"
        row = rows.setdefault(label, {})
        row[column] = f"{row[column]}; {cell}" if column in row else cell
    lines = ["| | " + " | ".join(metrics) + " |", "|---|" + "---|" * len(metrics)]
    for label, row in rows.items():
        lines.append(f"| {label} | " + " | ".join(row.get(m, "—") for m in metrics) + " |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the fallback body


def sub_question_of(claim: Claim, sub_questions: list[str]) -> int:
    """The sub-question a claim answers best: the most shared words (ties: the first)."""
    words = _stems([claim.text, claim.entity, claim.metric, claim.period])
    best, index = -1, 0
    for n, question in enumerate(sub_questions):
        shared = len(words & _stems([question]))
        if shared > best:
            best, index = shared, n
    return index


def claim_sentence(claim: Claim, lang: str) -> str:
    text = claim.text.strip().rstrip(".。")
    return f"{text}[c{claim.id}]。" if lang == "zh" else f"{text} [c{claim.id}]."


def claims_body(claims: list[Claim], sub_questions: list[str], lang: str) -> str:
    """The verified claims, grouped under the sub-questions they answer, each with its marker."""
    if not claims:
        return ""
    groups: dict[int, list[Claim]] = {}
    for claim in claims:
        groups.setdefault(sub_question_of(claim, sub_questions) if sub_questions else 0, []).append(claim)
    out = []
    for index in sorted(groups):
        if sub_questions:
            out += [f"## {' '.join(sub_questions[index].split())}", ""]
        out += [f"- {claim_sentence(c, lang)}" for c in groups[index]] + [""]
    return "\n".join(out)
