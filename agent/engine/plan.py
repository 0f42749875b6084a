"""The research plan as data: what the planner proposed (and the student may have edited)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class SubQuestion:
    question: str
    suggested_tools: list[str] = field(default_factory=list)


@dataclass
class Plan:
    complexity: str = "moderate"
    sub_questions: list[SubQuestion] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    rationale: str = ""
    # The question asks for a judgement or an outlook ("should…", "the next six months"): the
    # report then has a judgement section, labelled as such, with its claims and assumptions.
    asks_for_judgement: bool = False
    # The question and sub-questions in the materials' other languages, as the model translated
    # them for the searches (agent/engine/translation.py): the AI's words, marked "by": "model".
    translations: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict) -> Plan:
        return cls(
            complexity=data.get("complexity", "moderate"),
            sub_questions=[
                SubQuestion(sq.get("question", ""), list(sq.get("suggested_tools", [])))
                for sq in data.get("sub_questions", [])
            ],
            hypotheses=list(data.get("hypotheses") or []),
            rationale=data.get("rationale", ""),
            asks_for_judgement=bool(data.get("asks_for_judgement", False)),
            translations=dict(data.get("translations") or {}),
        )

    def as_json(self) -> dict:
        return asdict(self)

    def keep_tools(self, known: set[str]) -> None:
        for sq in self.sub_questions:
            sq.suggested_tools = [t for t in sq.suggested_tools if t in known]

    def block(self) -> str:
        """The plan as the phases' prompts show it."""
        lines = [f"Complexity: {self.complexity}", "Sub-questions:"]
        for i, sq in enumerate(self.sub_questions, start=1):
            lines.append(f"  {i}. {sq.question} (suggested: {', '.join(sq.suggested_tools) or '-'})")
        if self.hypotheses:
            lines.append("Hypotheses to confirm or refute:")
            lines.extend(f"  - {h}" for h in self.hypotheses)
        return "\n".join(lines)
