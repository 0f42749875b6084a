"""Typed reports (agent.engine.report_types, schema 2.x) built by hand for page and dashboard
tests: sources of a given tool, facts under given sub-questions, stored as the runner stores a
report (`Report.to_json`). Every fact is one span of its source, so the reports pass
`integrity_problems`."""

from __future__ import annotations

from agent.engine.report_types import Fact, Location, PlanBlock, Report, Section, Source, Span
from research.services.material_coverage import MATERIALS_TOOL

WEB_TOOL = "web_search"


class ReportBuilder:
    def __init__(self, question: str, sub_questions=(), *, language: str = "zh"):
        self.report = Report(
            question=question, language=language, plan=PlanBlock(sub_questions=list(sub_questions))
        )

    def source(self, tool: str = MATERIALS_TOOL, *, url: str = "", title: str = "") -> int:
        number = len(self.report.sources) + 1
        tier = "internal" if tool == MATERIALS_TOOL else "web"
        self.report.sources.append(
            Source(
                number=number,
                source_id=100 + number,
                title=title or f"source {number}",
                url=url,
                tool=tool,
                tier=tier,
                origin="internal" if tier == "internal" else "external",
            )
        )
        return number

    def material(self, channel_slug: str, material_id: int, page: int | str = 1) -> int:
        return self.source(MATERIALS_TOOL, url=f"/channels/{channel_slug}/materials/{material_id}/#p{page}")

    def fact(
        self, part: int, source: int, *, text: str = "A sentence of the source.", superseded=False
    ) -> int:
        src = self.report.source(source)
        n = 1 + sum(1 for s in self.report.spans if s.source == source)
        span = Span(
            id=f"{src.source_id}.{n}", source=source, text=text, location=Location(start=0, end=len(text))
        )
        self.report.spans.append(span)
        fact = Fact(
            id=len(self.report.facts) + 1,
            spans=[span.id],
            source=source,
            sub_question=part,
            tier=src.tier,
            superseded=superseded,
        )
        self.report.facts.append(fact)
        section = next((s for s in self.report.sections if s.sub_question == part), None)
        if section is None:
            section = Section(sub_question=part)
            self.report.sections.append(section)
        section.facts.append(fact.id)
        return fact.id

    def build(self) -> Report:
        cited = {f.source for f in self.report.facts}
        for source in self.report.sources:
            source.cited = source.number in cited
        return self.report

    def json(self) -> dict:
        return self.build().to_json()
