"""An ordinary chat answer as the page shows it: the assistant's own words, except the sentences
that are a span of the source their citation marker names.

A sentence that carries a marker [N] is shown as the source's words, its marker linked to source
N, only when it is a span of that source's stored text (agent/engine/chat_spans.sentence_is_span:
one to three adjacent spans, or a whole clause of one). Every other sentence, with or without a
marker, is the assistant's: it is shown inside a block marked data-by="model" with the AI's label,
and its markers are plain text, linked to nothing. The model cannot make a sentence look sourced
by adding a number to it.

The Markdown of the assistant's runs is rendered as before (research/rendering.py: sanitised, no
link to a citation); the answer is cut at lines and, inside a line of prose, at sentence ends
(markers stay with the sentence before them). Code blocks, tables and headings are never spans."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.utils.safestring import SafeString

from agent.engine.chat_spans import bare, sentence_is_span
from research.rendering import render_markdown

_MARKER = re.compile(r"\[\s*(\d{1,4}(?:\s*[,，、;；]\s*\d{1,4})*)\s*\]")
_SENTENCE = re.compile(
    r".+?(?:[。！？!?]+|\.(?=\s|$))(?:\s*\[\s*\d{1,4}(?:\s*[,，、;；]\s*\d{1,4})*\s*\])*|.+$"
)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_NOT_PROSE = re.compile(r"^\s*(?:#|\||```|~~~|>)")


@dataclass
class AnswerPart:
    """A run of the assistant's words (rendered Markdown) or one sentence that is a source's span."""

    by_model: bool
    html: SafeString = SafeString("")
    text: str = ""  # the span's words, without its markers
    citations: list[tuple[int, str]] = field(default_factory=list)  # (number, href)


def markers(sentence: str) -> list[int]:
    return [int(n) for m in _MARKER.finditer(sentence) for n in re.split(r"[,，、;；]", m.group(1))]


def _sentences(line: str) -> list[str]:
    return [m.group(0) for m in _SENTENCE.finditer(line) if m.group(0).strip()]


def answer_parts(content: str, sources: dict[int, str], anchor: str) -> list[AnswerPart]:
    """`content` cut into the assistant's runs and the sentences that are spans of the source
    their markers name (`sources`: the stored text of each cited source by its number)."""
    parts: list[AnswerPart] = []
    run: list[str] = []

    def close_run() -> None:
        text = "\n".join(run).strip("\n")
        run.clear()
        if text.strip():
            parts.append(AnswerPart(by_model=True, html=render_markdown(text)))

    fenced = False
    for line in (content or "").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            run.append(line)
            continue
        if fenced or _NOT_PROSE.match(line) or not _MARKER.search(line):
            run.append(line)
            continue
        item = _ITEM.match(line)
        prefix, body = (item.group(0), line[item.end() :]) if item else ("", line)
        pending = prefix
        for sentence in _sentences(body):
            numbers = markers(sentence)
            if numbers and all(n in sources and sentence_is_span(sentence, sources[n]) for n in numbers):
                if pending.strip() and pending.strip() != prefix.strip():
                    run.append(pending)
                pending = ""
                close_run()
                parts.append(
                    AnswerPart(
                        by_model=False,
                        text=bare(sentence),
                        citations=[(n, f"#{anchor}-{n}") for n in dict.fromkeys(numbers)],
                    )
                )
            else:
                pending += sentence
        if pending:
            run.append(pending)
    close_run()
    return parts
