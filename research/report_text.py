"""A report as Markdown, in the active language: the Markdown download, the API's `answer`, the
terminal, the notification e-mail and the chat log row a research leaves all print this text.

The text says what the page says (report_wording.py words it) and marks the same things:
- a fact is its spans' own words between “ ” with its citation [N], the values code parsed in
  bold; nothing else is quoted that way;
- every string the model wrote is in a blockquote whose first line is the label
  `> **<MODEL_LABEL>** · <what it is>` (the plan's sub-question, a hypothesis, the interpretation,
  a machine translation, the suggested questions), and no other blockquote is written: a scanner
  separates the AI's words from the rest by that label;
- the rest is product text, codes' labels and source metadata.

Text that came from a source or the model is escaped, so it cannot open a heading, a link, an
emphasis or a quote of its own."""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

from agent.engine import vocabulary as V
from agent.engine.report_types import Conflict, Fact, Report, Source, Span
from research import report_wording as W
from research.vocabulary_labels import text as label

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~!])")


def escape(text: str) -> str:
    """Source or model text as literal Markdown, on one line."""
    return _SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", str(text)))


def _absolute(url: str, base_url: str) -> str:
    if url.lower().startswith(("http://", "https://")):
        return url
    if url.startswith("/") and not url.startswith("//") and base_url:
        return base_url.rstrip("/") + url
    return ""


def heading(title: str) -> str:
    return f"## {title}"


def model_block(kind: str, lines: list[str], indent: str = "") -> list[str]:
    """The AI's words as a labelled blockquote (one line per item, already escaped)."""
    out = [f"{indent}> **{W.MODEL_LABEL}** · {kind}", f"{indent}>"]
    out += [f"{indent}> {line}" for line in lines]
    return out + [""]


class _Writer:
    def __init__(self, report: Report, base_url: str):
        self.report = report
        self.base_url = base_url
        self.translations = {t.span: t for t in report.translations.items if t.text}
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines += list(lines)

    # ------------------------------------------------------------------ facts

    def span_text(self, span: Span) -> str:
        values = sorted(
            (
                v
                for v in self.report.values
                if v.span == span.id
                and 0 <= v.start < v.end <= len(span.text)
                and span.text[v.start : v.end] == v.text
            ),
            key=lambda v: v.start,
        )
        out, at = "", 0
        for value in values:
            if value.start < at:
                continue
            out += escape(span.text[at : value.start]) + f"**{escape(value.text)}**"
            at = value.end
        return out + escape(span.text[at:])

    def quote(self, fact: Fact) -> str:
        spans = self.report.fact_spans(fact)
        joined = ""
        for span in spans:
            text = self.span_text(span)
            joined += ("" if not joined or span.language == "zh" else " ") + text
        return f"“{joined}” [{fact.source}]"

    def fact_lines(self, fact: Fact, indent: str = "") -> list[str]:
        notes = []
        if fact.selected_by == "search_ranking":
            notes.append(label(V.SELECTED_BY, "search_ranking"))
        if fact.superseded:
            notes.append(_("superseded"))
        line = f"{indent}- {self.quote(fact)}" + (f" ({'; '.join(notes)})" if notes else "")
        out = [line]
        for span in self.report.fact_spans(fact):
            translation = self.translations.get(span.id)
            if translation is not None and translation.language != span.language:
                out += [""] + model_block(_("Machine translation"), [escape(translation.text)], indent + "  ")
        return out

    def facts(self, ids, indent: str = "") -> list[str]:
        out = []
        for fact in (self.report.fact(i) for i in ids):
            if fact is not None and fact.spans:
                out += self.fact_lines(fact, indent)
        return out

    # ------------------------------------------------------------------ parts

    def sections(self) -> None:
        questions = self.report.plan.sub_questions
        shown = [s for s in self.report.sections if any(self.report.fact(i) for i in s.facts)]
        if not shown:
            return
        self.add(heading(_("Facts from the sources")), "")
        homes: dict[int, int] = {}
        for n, section in enumerate(shown):
            for fact in (self.report.fact(i) for i in section.facts):
                for value_id in fact.values if fact else []:
                    homes.setdefault(value_id, n)
        for n, section in enumerate(shown):
            self.add(f"### {W.section_heading(section.sub_question)}", "")
            q = section.sub_question
            if 0 <= q < len(questions) and questions[q]:
                self.add(*model_block(_("Sub-question"), [escape(questions[q])]))
            self.add(*self.facts(section.facts))
            for computed in self.report.computed:
                if {homes.get(i) for i in computed.inputs} == {n}:
                    self.add(self.computed_line(computed))
            self.add("")
        rest = [c for c in self.report.computed if len({homes.get(i) for i in c.inputs}) != 1]
        if rest:
            self.add(*[self.computed_line(c) for c in rest], "")

    def computed_line(self, computed) -> str:
        numbers = []
        for value_id in computed.inputs:
            value = self.report.value(value_id)
            span = self.report.span(value.span) if value else None
            if span is not None and span.source not in numbers:
                numbers.append(span.source)
        cites = "".join(f"[{n}]" for n in numbers)
        computed_word = _("Computed")
        return f"- {computed_word}: {escape(W.computed_text(self.report, computed))} {cites}".rstrip()

    def conflict(self, conflict: Conflict) -> None:
        subject = W.conflict_subject(conflict)
        if conflict.subject.span:
            span = self.report.span(conflict.subject.span)
            source = self.report.source(span.source) if span else None
            if span is not None and source is not None and not source.flagged:
                subject = f"“{self.span_text(span)}” [{span.source}]"
        else:
            subject = f"**{subject}**"
        self.add(
            f"- {subject} — {W.conflict_state(conflict)}; {label(V.CONFLICT_FOUND_BY, conflict.found_by)}"
            + (f"; {W.re_search_text(conflict)}" if W.re_search_text(conflict) else "")
        )
        settled = conflict.status == "resolved" and conflict.prevailing_side is not None
        for i, side in enumerate(conflict.sides):
            state = ""
            if settled:
                state = _("prevails") if conflict.prevailing_side == i else _("superseded")
            head = (
                _("Side %(n)s") % {"n": i + 1}
                + f" ({label(V.TIERS, side.tier)})"
                + (f" — {state}" if state else "")
            )
            self.add(f"  - {head}")
            self.add(*self.facts(side.facts, "    "))
        if conflict.decision is not None:
            d = conflict.decision
            reason = _("Reason:")
            self.add(
                f"  - {W.decision_text(conflict)} {reason} {escape(d.reason)} "
                f"({escape(d.decided_by or '—')}, {d.decided_at[:16].replace('T', ' ')})"
            )

    def conflicts(self) -> None:
        if not self.report.conflicts:
            return
        self.add(heading(_("Conflicts between sources")), "")
        for conflict in self.report.conflicts:
            self.conflict(conflict)
        self.add("")

    def hypotheses(self) -> None:
        if not self.report.hypotheses:
            return
        texts = self.report.plan.hypotheses
        self.add(heading(_("Hypotheses")), "")
        for h in self.report.hypotheses:
            self.add(
                f"- {W.hypothesis_heading(h.index)}: {label(V.HYPOTHESIS_STATUS, h.status)} ({W.hypothesis_counts(h)})",
                "",
            )
            if 0 <= h.index < len(texts) and texts[h.index]:
                self.add(*model_block(_("Hypothesis"), [escape(texts[h.index])], "  "))
        self.add("")

    def judgement(self) -> None:
        j = self.report.judgement
        if j is None:
            return
        on = f" ({W.hypothesis_heading(j.hypothesis)})" if j.hypothesis is not None else ""
        self.add(heading(_("Judgement")), "")
        computed_from = _("Computed from the facts for and against, by source tier:")
        self.add(
            f"{computed_from} **{label(V.JUDGEMENT_STANCES, j.stance)}**{on}",
            "",
            W.judgement_counts(j),
            "",
        )

    def counter(self) -> None:
        c = self.report.counter_evidence
        if not (c.searched or c.facts):
            return
        self.add(heading(_("Counter-evidence")), "")
        if c.facts:
            self.add(*self.facts(c.facts), "")
        elif c.searched and c.searches:
            self.add(
                _("%(n)s targeted search(es) found no evidence against the main conclusions.")
                % {"n": c.searches},
                "",
            )
        elif c.searched:
            self.add(_("No search for evidence against the main conclusions was run."), "")
        support, against = _("Independent sources in support:"), _("against:")
        self.add(
            f"{support} {W.tier_counts_text(c.support_by_tier)} · {against} {W.tier_counts_text(c.against_by_tier)}",
            "",
        )

    def interpretation(self) -> None:
        items = [i for i in self.report.interpretation.items if i.text]
        if not items:
            return
        self.add(heading(_("The AI’s interpretation")), "")
        lines = []
        for item in items:
            facts = [self.report.fact(i) for i in item.facts]
            cites = "".join(f"[{n}]" for n in dict.fromkeys(f.source for f in facts if f is not None))
            lines.append(f"- {label(V.NOT_SHOWN_KINDS, item.kind)}: {escape(item.text)} {cites}".rstrip())
        self.add(*model_block(_("Interpretation"), lines))

    def suggestions(self) -> None:
        items = [s for s in self.report.suggestions.items if s]
        if items:
            self.add(heading(str(W.SUGGESTION_LABEL)), "")
            self.add(*model_block(_("Suggested questions"), [f"- {escape(s)}" for s in items]))

    def search_queries(self) -> None:
        """The plan's question in the materials' languages, as the AI translated it to search them."""
        lines = []
        for block in self.report.plan.search_queries:
            language = W.language_name(block.language)
            if block.question:
                lines.append(f"- {language}: {escape(block.question)}")
            lines += [
                f"- {language}, {W.section_heading(n)}: {escape(q)}"
                for n, q in enumerate(block.sub_questions)
                if q
            ]
        if lines:
            self.add(heading(_("The question in the materials' languages")), "")
            self.add(*model_block(_("AI translation"), lines))

    def limitations(self, title: str) -> None:
        if self.report.limitations:
            self.add(heading(title), "")
            self.add(*[f"- {W.limitation_text(item)}" for item in self.report.limitations], "")

    def not_shown(self) -> None:
        if not self.report.not_shown:
            return
        self.add(heading(_("Not shown")), "")
        for item in self.report.not_shown:
            line = f"- {label(V.NOT_SHOWN_KINDS, item.kind)}: {W.not_shown_reason(item.kind, item.reason)}"
            if item.index is not None:
                where = {
                    "sub_question": W.section_heading,
                    "search_query": W.section_heading,
                    "hypothesis": W.hypothesis_heading,
                }.get(item.kind, W.item_heading)(item.index)
                line += f" ({where})"
            span = self.report.span(item.span) if item.span else None
            source = self.report.source(span.source) if span else None
            if (
                span is not None
                and source is not None
                and not source.flagged
                and item.reason != "instruction_in_source"
            ):
                line += f": “{escape(span.text)}” [{span.source}]"
            self.add(line)
        self.add("")

    def source_line(self, source: Source, numbered: bool) -> str:
        origin = _("Uedu") if source.origin == "internal" else _("external")
        title = escape(source.title or _("(untitled source)"))
        url = _absolute(source.url, self.base_url)
        entry = f"{source.number}. {title}" if numbered else f"- {title}"
        if url:
            entry += f" — <{url}>"
        details = ", ".join(part for part in (source.tool, label(V.TIERS, source.tier), origin) if part)
        entry += f" ({details})"
        if source.flagged:
            entry += " — " + _("contained instructions addressed to an AI; not used as evidence")
        return entry

    def sources(self) -> None:
        cited = sorted((s for s in self.report.sources if s.cited), key=lambda s: s.number)
        others = sorted((s for s in self.report.sources if not s.cited), key=lambda s: s.number)
        if cited:
            self.add(heading(_("Sources")), "", *[self.source_line(s, True) for s in cited], "")
        if others:
            title = _("Sources consulted") if not cited else _("Also consulted")
            self.add(heading(title), "", *[self.source_line(s, False) for s in others], "")

    def nothing_verified(self) -> None:
        self.add(heading(_("Nothing could be verified")), "")
        self.add(
            _(
                "No passage of the sources could be verified as answering the question, so this report states no fact."
            ),
            "",
        )
        reasons = [W.limitation_text(item) for item in self.report.limitations if item.code != "no_facts"]
        if reasons:
            self.add(_("Why:"), "", *[f"- {r}" for r in reasons], "")

    def write(self) -> list[str]:
        nothing = not any(self.report.fact(i) for s in self.report.sections for i in s.facts)
        if nothing:
            self.nothing_verified()
            self.sources()
            self.suggestions()
            self.search_queries()
            self.not_shown()
            return self.lines
        self.sections()
        self.conflicts()
        self.hypotheses()
        self.judgement()
        self.counter()
        self.interpretation()
        self.suggestions()
        self.limitations(_("Limitations"))
        self.search_queries()
        self.not_shown()
        self.sources()
        return self.lines


def _legacy_sources(citations: list[dict], base_url: str) -> list[str]:
    """The numbered sources a research stored before reports existed listed with its answer."""
    lines = []
    for c in citations:
        if not isinstance(c, dict):
            continue
        origin = _("Uedu") if c.get("origin") == "internal" else _("external")
        entry = f"{c.get('number')}. {escape(c.get('title') or _('(untitled source)'))}"
        url = _absolute(str(c.get("url") or ""), base_url)
        if url:
            entry += f" — <{url}>"
        lines.append(entry + f" ({c.get('source_tool', '')}, {origin})")
    return [heading(_("Sources")), "", *lines, ""] if lines else []


def report_lines(report: Report, *, base_url: str = "") -> list[str]:
    """The report's parts as Markdown lines, titled in the active language."""
    return _Writer(report, base_url).write()


def report_markdown(
    report: Report | None,
    *,
    question: str = "",
    legacy_answer: str = "",
    legacy_citations: list[dict] | None = None,
    limit_hit: str = "",
    page_url: str = "",
    base_url: str = "",
) -> str:
    """The whole text: the question, a limit's note, the report (or, for a research stored before
    reports existed, its answer as the AI's words), the disclaimer and the page's address."""
    question = " ".join((question or (report.question if report else "")).split())
    lines = [f"# {escape(question[:200])}", ""]
    if len(question) > 200:
        lines += [escape(question), ""]
    if limit_hit:
        lines += [
            _("Reached %(reason)s: the report rests on what was found until then.")
            % {"reason": label(V.LIMITS, limit_hit)},
            "",
        ]
    if report is not None:
        lines += report_lines(report, base_url=base_url)
    elif legacy_answer.strip():
        # Its own Markdown, every line inside the labelled quote (no line can leave it).
        lines += model_block(_("Answer"), [line.rstrip() for line in legacy_answer.strip().splitlines()])
        lines += _legacy_sources(legacy_citations or [], base_url)
    lines += [
        "---",
        "",
        _(
            "This answer was compiled by AI from several sources; check the citations yourself. It may not be submitted as coursework."
        ),
        "",
    ]
    if page_url:
        lines += [page_url, ""]
    return "\n".join(lines)
