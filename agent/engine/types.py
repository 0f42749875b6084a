"""Plain data the engine passes around. No Django, no openai: just dataclasses."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, Protocol

from .events import Event

# How much a source can be trusted, highest first. "internal" is Uedu's own data (channel
# materials, the catalogue, platform documents); "structured" is authoritative structured
# external data (SEC filings); "scholarly" is peer-reviewed literature; "web" is everything else.
Tier = Literal["internal", "structured", "scholarly", "web"]


def gettext_noop(message: str) -> str:
    """Marks a label for translation (makemessages extracts calls by this name) without importing
    Django: the page translates the label when it renders it."""
    return message


@dataclass(frozen=True)
class TierInfo:
    rank: int  # lower is more reliable: a conflict's side of a strictly lower rank prevails
    weight: float  # how much the tier lets a claim be trusted when no history says more
    label: str  # the English label, the msgid the page translates


# The one tier table: a new tier is one line here (and its translation).
TIERS: dict[str, TierInfo] = {
    "internal": TierInfo(rank=0, weight=1.0, label=gettext_noop("Uedu internal")),
    "structured": TierInfo(rank=0, weight=1.0, label=gettext_noop("structured data")),
    "scholarly": TierInfo(rank=1, weight=0.9, label=gettext_noop("scholarly")),
    "web": TierInfo(rank=2, weight=0.6, label=gettext_noop("web")),
}
TIER_RANK: dict[str, int] = {name: tier.rank for name, tier in TIERS.items()}
TIER_WEIGHT: dict[str, float] = {name: tier.weight for name, tier in TIERS.items()}


def tier_weight(source) -> float:
    """The tier table's weight of a source (history-based weights, when the product provides
    them, replace it)."""
    return TIER_WEIGHT.get(source.tier, 0.5)


@dataclass(frozen=True)
class ToolTraits:
    """What the engine knows of a tool besides its schema, declared once, at its registration:
    the engine never tells tools apart by name."""

    tier: Tier  # the tier of every source the tool returns (the registry stamps it on them)
    search: bool  # each call counts as a search (the run's and the quality figures' searches)
    exact_figures: bool  # its figures are filed figures: a claim must state them exactly
    # Its query also runs in the other languages of what it searches: the engine hands it the
    # research's questions in those languages (agent/engine/translation.py) as `translations`.
    bilingual: bool = False


@dataclass
class Source:
    """Something a tool returned that a citation can point at."""

    title: str
    snippet: str
    tier: Tier
    url: str = ""
    locator: str = ""  # e.g. "week3.pdf p. 4", "DOI 10.1234/…"
    source_tool: str = ""  # filled in by the tool registry, never by the tool's caller
    text: str = ""  # the full passage the LLM may read (snippet is what the user sees)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        """Uedu's own data is labelled apart from outside sources in every answer."""
        return "internal" if self.tier == "internal" else "external"

    def key(self) -> str:
        """Identity for de-duplication across tool calls. A tool whose results can share a
        locator (two passages of one page) names each passage in `meta["passage"]`."""
        return "|".join(
            (self.source_tool, self.url, self.locator, self.title, str(self.meta.get("passage", "")))
        )

    def as_dict(self) -> dict:
        data = asdict(self)
        data["origin"] = self.origin
        return data


@dataclass
class ToolResult:
    """What one tool call produced: citable sources plus the structured data the LLM reads."""

    sources: list[Source] = field(default_factory=list)
    data: Any = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


class Toolbox(Protocol):
    """The tool registry as the engine sees it: already bound to one user and channel."""

    def specs(self) -> list[dict]: ...

    def names(self) -> set[str]: ...

    def traits(self, name: str) -> ToolTraits | None:
        """The tool's declared traits; None for a name the toolbox does not offer."""

    def call(self, name: str, args: dict, *, translations: list[dict] | None = None) -> ToolResult:
        """Run a tool. `translations` (for a tool whose traits say `bilingual` only): the
        research's question in other languages, [{"language", "text", "by"}]."""


class EventSink(Protocol):
    """Where the engine reports progress. The Django side stores and broadcasts."""

    def emit(self, event: Event) -> None:
        """One event (agent.engine.events); its wire form is `event.type` and `event.data()`."""

    def step_started(self, *, index: int, round: int, phase: str, tool_name: str, args: dict) -> None: ...

    def step_finished(
        self,
        *,
        index: int,
        status: str,
        preview: str,
        full: Any,
        error: str,
        duration_ms: int,
        tokens: int = 0,
    ) -> None: ...

    def step_sources(self, *, index: int, source_ids: list[int]) -> None:
        """The registry ids given to a finished step's sources (in the order of its results)."""


class NullSink:
    """A sink that remembers events in memory (for replays and the terminal)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []
        self.steps: dict[int, dict] = {}

    def emit(self, event: Event) -> None:
        self.events.append((event.type, event.data()))

    def step_started(self, *, index, round, phase, tool_name, args) -> None:
        self.steps[index] = {"round": round, "phase": phase, "tool_name": tool_name, "args": args}

    def step_finished(self, *, index, status, preview, full, error, duration_ms, tokens=0) -> None:
        self.steps[index].update(
            status=status, preview=preview, full=full, error=error, duration_ms=duration_ms
        )

    def step_sources(self, *, index, source_ids) -> None:
        for source, source_id in zip(self.steps[index]["full"]["sources"], source_ids):
            source["id"] = source_id


@dataclass
class Limits:
    max_steps: int = 30  # action rounds; each round may call several tools
    max_tokens: int = 200_000
    max_seconds: float = 600.0
    # After max_seconds the answer is still written and verified, within this much more time;
    # past it the research fails (nothing in a research can run unbounded).
    grace_seconds: float = 120.0
    # The tokens the finishing phases (claims, verification, writing, the draft's check) may use
    # beyond max_tokens: a research never uses more than max_tokens + grace_tokens in all, which
    # is what the product reserves for it (agent/engine/budget.py, research.services.settlement).
    grace_tokens: int = 36_000
    # What the product reserved for the research in USD (0: no cost ceiling beyond the tokens'):
    # no request is sent whose worst case would take the research's cost past it.
    max_cost_usd: float = 0.0
    max_tool_calls: int = 60  # a budget within the hard limits; complexity may lower it
    max_calls_per_round: int = 4
    # Targeted re-search rounds a conflict may trigger before it is reported as unresolved.
    max_conflict_rounds: int = 2
    preview_chars: int = 300
    # Characters of observation text sent to the synthesizer before older ones are compacted.
    observation_budget_chars: int = 60_000
    # The planner's complexity sets the budgets within the hard limits above (source table:
    # simple 2–5 tool calls, moderate 5–10, complex 10–20).
    budgets: dict = field(default_factory=lambda: dict(DEFAULT_BUDGETS))

    def for_complexity(self, complexity: str) -> Limits:
        budget = self.budgets.get(complexity) or {}
        return replace(
            self,
            max_tool_calls=min(self.max_tool_calls, budget.get("tool_calls", self.max_tool_calls)),
            max_steps=min(self.max_steps, budget.get("rounds", self.max_steps)),
            max_tokens=min(self.max_tokens, budget.get("tokens", self.max_tokens)),
        )


DEFAULT_BUDGETS = {
    "simple": {"tool_calls": 5, "rounds": 4, "tokens": 80_000},
    "moderate": {"tool_calls": 10, "rounds": 6, "tokens": 140_000},
    "complex": {"tool_calls": 20, "rounds": 10, "tokens": 200_000},
}


@dataclass
class ResearchInput:
    question: str
    channel_name: str = ""
    channel_description: str = ""
    language: str = "zh-hant"
    # Search for evidence against the main conclusions before writing: never, for moderate and
    # complex questions, for complex questions only, or always.
    counter_search: Literal["off", "moderate", "complex", "always"] = "moderate"
    allowed_domains: tuple[str, ...] = ()  # web sources outside these are not used (empty: any)
    denied_domains: tuple[str, ...] = ()
    # What the student clarified before the run (time range, subject, source language, preferred
    # kinds of sources); empty when the question needed no clarification.
    context: dict = field(default_factory=dict)
    # The conversation this research follows up (earlier questions, answers and their numbered
    # sources); empty when the research starts a conversation.
    conversation: str = ""
    # The languages the channel's materials are written in ("en", "zh"): when the question's
    # language is not the only one, its searches of them also run in the others.
    material_languages: tuple[str, ...] = ()


@dataclass
class Citation:
    number: int  # as shown in the answer: [1], [2], …
    source_id: int  # id in the source registry
    title: str
    url: str
    source_tool: str
    snippet: str
    tier: str
    origin: str
    locator: str = ""
    # The span of the source that the report's verified claims quote (the source's own words, as
    # located by the engine), and where it is: page (or slide, section) when known, and character
    # offsets into the source's stored text; "" and -1 when no verified claim quotes this source.
    quote: str = ""
    location: dict = field(default_factory=lambda: {"page": "", "start": -1, "end": -1})

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class ResearchResult:
    # One of vocabulary.OUTCOMES: "planned" when the run stopped after planning as asked
    # (stop_after_plan; nothing is finished), else how it ended.
    outcome: str
    stop_reason: str  # one of vocabulary.STOP_REASONS
    plan: dict = field(default_factory=dict)
    answer: str = ""
    citations: list[Citation] = field(default_factory=list)
    verification: dict = field(default_factory=dict)  # report.VerificationReport.as_json()
    report: dict = field(default_factory=dict)  # the report, valid against report.REPORT_SCHEMA
    limit_hit: str = ""
    invalid_citations_removed: int = 0
    error: str = ""
    rounds: int = 0
    tool_calls: int = 0
    searches: int = 0
    sources_seen: int = 0

    def citations_json(self) -> list[dict]:
        return [c.as_dict() for c in self.citations]
