"""The model's words, checked by code before they are shown as the AI's.

One call (role `interpreter`) after the facts are chosen: reasoning and assumptions, each citing
facts by id; up to three narrower questions (asked for when fewer than three facts were found);
and translations of the facts' spans that are not in the reader's language. Code keeps an item
only when it states no figure, year, name or negation that the spans of the facts it cites lack
(`novelty.novel`; a suggestion is checked against the question and every fact), repeats no
passage that addresses the model and no run of the engine's own instructions; a translation only
when it keeps every number and name of its span (`novelty.translation_keeps`). What is dropped is
listed as not shown, by kind and reason, never with its text. Links, images and markup leave
the model's words before anything is checked.

The same rule decides which of the plan's sub-questions and hypotheses are shown: one that states
what the student's question and agreed context lack is shown as "". The question and sub-questions
in the materials' other languages (translation.py asked for them to search with) are shown under
the translation's rule: each one keeps every number and name of its original, adds none, and
negates only what its original negates; the translation of a sub-question that is not shown is
not shown either.

A call that fails or does not fit the time or tokens left is skipped: the report has no
interpretation, and says so."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import instructions, novelty, prompts, schemas, translation
from .answer import EchoDetector, scrub_links
from .errors import OutOfBudget, PhaseFailed
from .selection import Dropped, Picked
from .sources import neutralise
from .state import RunContext
from .vocabulary import NOT_SHOWN_REASONS

MAX_TRANSLATIONS = 12
MAX_TEXT = 600
MAX_FACT_CHARS = 700

# The engine's own instructions: a model's item that repeats eight words of them in a row was
# told to by something it read ("print your system prompt").
INSTRUCTION_ECHO = EchoDetector(
    [
        prompts.PLANNER,
        prompts.ACTION,
        prompts.REFLECTION,
        prompts.SELECTOR.format(tagging=prompts.SELECTOR_TAGGING),
        prompts.INTERPRETER,
    ]
)


@dataclass
class Interpreted:
    items: list[tuple[str, str, list[int]]] = field(default_factory=list)  # (kind, text, fact ids)
    suggestions: list[str] = field(default_factory=list)
    translations: list[tuple[str, str]] = field(default_factory=list)  # (span id, text)
    dropped: list[Dropped] = field(default_factory=list)
    limitations: list[dict] = field(default_factory=list)
    ran: bool = False
    links_removed: int = 0  # links, images and markup taken out of the model's words
    instruction_echoes: int = 0  # items that repeated the engine's own instructions


def reason_of(found: list) -> str:
    """The not-shown reason of novelty.novel's first finding (its kind: figure, year, name or
    negation)."""
    kind = str(found[0][0]) if found else "name"
    code = kind if kind.startswith("novel_") else f"novel_{kind}"
    return code if code in NOT_SHOWN_REASONS else "novel_name"


def plain(text: str, out: Interpreted | None = None) -> str:
    """The model's words without links, images or markup, on one line, bounded."""
    text, removed = scrub_links(str(text or ""), set())
    if out is not None:
        out.links_removed += removed
    return " ".join(text.split())[:MAX_TEXT]


def _flagged_passages(run: RunContext) -> list[str]:
    return [p for f in run.registry.flags.values() for p in f.passages]


def checked_text(
    run: RunContext, text: str, grounds: list[str], out: Interpreted | None = None
) -> tuple[str, str]:
    """(text, "") when it may be shown, or ("", reason) when not."""
    if not text:
        return "", ""
    if INSTRUCTION_ECHO(text):
        if out is not None:
            out.instruction_echoes += 1
        return "", "instruction_in_source"
    if instructions.repeats(text, _flagged_passages(run)):
        return "", "instruction_in_source"
    found = novelty.novel(text, grounds)
    if found:
        return "", reason_of(found)
    return text, ""


def _same_question(text: str, questions: list[str]) -> bool:
    """Whether a suggestion is one of `questions` again (letters and digits compared, case aside)."""

    def key(words: str) -> str:
        return re.sub(r"[\W_]+", "", words.casefold())

    return key(text) in {key(q) for q in questions}


def _adds_a_name(original: str, translation: str) -> bool:
    """A translation into English of a Chinese span that writes a Latin name the span does not
    (translation_keeps checks the names of English originals): without a dictionary code cannot
    tell a transliteration from an invented name, so such a translation is not shown."""
    if not re.search(r"[\u3400-\u9fff]", original):
        return False
    known = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", original)}
    return any(name.lower() not in known for name in novelty.latin_names(translation, at_start=False))


def plan_texts(run: RunContext) -> tuple[list[str], list[str], list[Dropped]]:
    """The plan's sub-questions and hypotheses as the report may show them."""
    grounds = [run.inp.question] + [str(v) for v in (run.inp.context or {}).values() if v]
    dropped: list[Dropped] = []
    shown = {}
    for kind, texts in (
        ("sub_question", [sq.question for sq in run.plan.sub_questions]),
        ("hypothesis", list(run.plan.hypotheses)),
    ):
        out = []
        for n, raw in enumerate(texts):
            text, reason = checked_text(run, plain(raw), grounds)
            if reason:
                dropped.append(Dropped(kind, reason, index=n))
            out.append(text)
        shown[kind] = out
    return shown["sub_question"], shown["hypothesis"], dropped


def query_translations(run: RunContext, sub_questions: list[str]) -> tuple[list[dict], list[Dropped]]:
    """The plan's question and sub-questions in the materials' languages as the report may show
    them: one {"language", "question", "sub_questions"} per language (a text not shown is "");
    `sub_questions` are the plan's as shown (plan_texts)."""
    block = run.plan.translations or {}
    versions: dict[tuple[str, str], str] = {}
    for item in block.get("items") or []:
        if isinstance(item, dict) and item.get("language") in ("en", "zh"):
            versions.setdefault(
                (str(item.get("text") or ""), item["language"]), str(item.get("translation") or "")
            )
    originals = [run.inp.question] + [sq.question for sq in run.plan.sub_questions]
    shown_original = [True] + [bool(q) for q in sub_questions] + [False] * len(originals)
    out, dropped = [], []
    for code in dict.fromkeys(lang for _, lang in versions):
        texts = []
        for n, original in enumerate(originals):
            key = original.strip()[: translation.MAX_CHARS]
            text = plain(versions.get((key, code), ""))
            if text and shown_original[n]:
                lost = (
                    novelty.translation_keeps(original, text)
                    or _adds_a_name(original, text)
                    or novelty.negates(original) != novelty.negates(text)
                )
                if lost or instructions.repeats(text, _flagged_passages(run)) or INSTRUCTION_ECHO(text):
                    reason = "instruction_in_source" if not lost else "lost_numbers"
                    dropped.append(Dropped("search_query", reason, index=None if n == 0 else n - 1))
                    text = ""
            texts.append(text if shown_original[n] else "")
        if any(texts):
            out.append({"language": code, "question": texts[0], "sub_questions": texts[1:]})
    return out, dropped


def interpret(
    run: RunContext,
    facts: list[Picked],
    fact_text: dict[int, str],
    to_translate: list[tuple[str, str]],
    *,
    hypotheses: list[tuple[str, str]],
    stance: str | None,
) -> Interpreted:
    """`facts`: the facts the report shows (their texts in `fact_text`); `to_translate`: (span
    id, text) of their spans not in the reader's language; `hypotheses`: (text, status code)."""
    out = Interpreted()
    to_translate = to_translate[:MAX_TRANSLATIONS]
    fact_ids = [f.id for f in facts]
    schema = schemas.interpretation(
        fact_ids, [i for i, _ in to_translate], suggestions_required=len(facts) < 3
    )
    language = prompts.language_name(run.inp.language)
    system = prompts.INTERPRETER.format(
        language=language,
        suggest=" Give at least one: fewer than three facts were found." if len(facts) < 3 else "",
    )

    def build(compact: bool) -> list[dict]:
        limit = MAX_FACT_CHARS // (2 if compact else 1)
        lines = [f"Student's question:\n{run.inp.question}", ""]
        if hypotheses:
            lines.append("Hypotheses, with the status code computed from the facts:")
            lines += [f"{n}. {text} ({status})" for n, (text, status) in enumerate(hypotheses, start=1)]
            lines.append("")
        if stance:
            lines += [f"The judgement's stance code computed from the facts: {stance}", ""]
        body = [f"[F{f.id}] {neutralise(fact_text[f.id][:limit])}" for f in facts]
        if to_translate:
            body += ["", f"Spans to translate into {language}:"]
            body += [f"[{span_id}] {neutralise(text[:limit])}" for span_id, text in to_translate]
        return [
            {"role": "system", "content": system},
            {
                "role": "user",
                "content": run.channel_context()
                + "\n".join(lines)
                + "\n<observations>\n"
                + ("\n".join(body) or "(no facts were found)")
                + "\n</observations>",
            },
        ]

    try:
        data = run.structured("interpreter", build, schema, "interpretation")
    except OutOfBudget:
        out.limitations.append({"code": "interpretation_failed", "detail": {"kind": "out_of_budget"}})
        if to_translate:
            out.limitations.append({"code": "translation_failed", "detail": {"spans": len(to_translate)}})
        return out
    except PhaseFailed as exc:
        kind = getattr(exc.cause, "kind", "error")
        out.limitations.append({"code": "interpretation_failed", "detail": {"kind": kind}})
        if to_translate:
            out.limitations.append({"code": "translation_failed", "detail": {"spans": len(to_translate)}})
        return out
    out.ran = True
    known = set(fact_ids)
    for n, item in enumerate(data.get("items") or []):
        cited = [i for i in dict.fromkeys(item.get("facts") or []) if i in known]
        kind = item.get("kind") if item.get("kind") in ("reasoning", "assumption") else "reasoning"
        if not cited:
            out.dropped.append(Dropped(kind, "no_spans", index=n))
            continue
        text, reason = checked_text(run, plain(item.get("text"), out), [fact_text[i] for i in cited], out)
        if reason:
            out.dropped.append(Dropped(kind, reason, index=n))
        elif text:
            out.items.append((kind, text, cited))
    grounds = [run.inp.question] + [fact_text[i] for i in fact_ids]
    for n, raw in enumerate((data.get("suggestions") or [])[: schemas.MAX_SUGGESTIONS]):
        text, reason = checked_text(run, plain(raw, out), grounds, out)
        if not reason and text and _same_question(text, [run.inp.question, *out.suggestions]):
            reason = "repeats_question"  # offered as a narrower question, it would be a dead end
        if reason:
            out.dropped.append(Dropped("suggestion", reason, index=n))
        elif text:
            out.suggestions.append(text)
    originals = dict(to_translate)
    done = set()
    for n, item in enumerate(data.get("translations") or []):
        span_id, text = str(item.get("span", "")), plain(item.get("text"), out)
        if span_id not in originals or span_id in done or not text:
            continue
        done.add(span_id)
        if text == " ".join(originals[span_id].split()):
            continue  # the span again, untranslated: nothing to show beside it
        if novelty.translation_keeps(originals[span_id], text) or _adds_a_name(originals[span_id], text):
            out.dropped.append(Dropped("translation", "lost_numbers", span=span_id, index=n))
            continue
        if instructions.repeats(text, _flagged_passages(run)) or INSTRUCTION_ECHO(text):
            out.dropped.append(Dropped("translation", "instruction_in_source", span=span_id, index=n))
            continue
        out.translations.append((span_id, text))
    missing = len(to_translate) - len(out.translations)
    if missing:
        out.limitations.append({"code": "translation_failed", "detail": {"spans": missing}})
    return out
