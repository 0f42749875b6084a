"""The report: the checked draft, renumbered citations, the claim ledger, and the machine-readable
report whose shape is fixed by a versioned JSON Schema (REPORT_SCHEMA).

The stored texts hold data only: no section title, warning or label is written here (the page and
the Markdown export render them in the reader's language). The one exception is the opt-in `mark`
policy, which keeps its inline ⚠ marks as it always did."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from urllib.parse import urlparse

import jsonschema_rs

from . import figures
from .answer import (
    Numbering,
    Segment,
    expand_claim_markers,
    join,
    marker_ids,
    rewrite_markers,
    scrub_links,
    segments,
)
from .body import claim_sentence, claims_body, figure_table, grounds, novel_names, novel_words, same_text
from .claims import Claim, ClaimSet
from .conflicts import Conflict, Side
from .quotes import located_text, page_of
from .state import RunContext
from .types import TIER_RANK, Citation
from .verification import (
    FABRICATED,
    FIGURE_MISMATCH,
    INSTRUCTION,
    INSTRUCTION_TEXT,
    LOW_CREDIBILITY,
    MARKS,
    NO_CITATION,
    NOT_IN_CLAIMS,
    SUPERSEDED,
    UNSUPPORTED,
    UNVERIFIED,
    UnitVerdict,
    best_tier,
    check_draft,
    obeys_instructions,
    tier_weight,
)
from .writing import CounterSearch, Draft

# 1.1: citations carry the quote they stand for and its location.
SCHEMA_VERSION = "1.1"
_STR = {"type": "string"}
_INTS = {"type": "array", "items": {"type": "integer"}}
_TIER = {"type": "string", "enum": ["internal", "structured", "scholarly", "web"]}
_BY_TIER = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}
_SOURCE_REF = {
    "type": "object",
    "required": ["title", "url", "source_tool", "tier"],
    "additionalProperties": False,
    "properties": {"title": _STR, "url": _STR, "source_tool": _STR, "tier": _TIER},
}
_LOCATION = {
    "type": "object",
    "description": "where the quote is: page (slide, section) when known; character offsets into the source's text, -1 when none",
    "required": ["page", "start", "end"],
    "additionalProperties": False,
    "properties": {"page": _STR, "start": {"type": "integer"}, "end": {"type": "integer"}},
}
_CLAIM = {
    "type": "object",
    "required": ["id", "text", "kind", "citations", "confidence"],
    "properties": {
        "id": {"type": "integer"},
        "text": _STR,
        "kind": {"type": "string", "enum": ["fact", "figure", "judgement"]},
        "entity": _STR,
        "metric": _STR,
        "period": _STR,
        "value": {"type": ["number", "null"]},
        "unit": _STR,
        "citations": _INTS,
        "confidence": {"type": "number"},
    },
    "additionalProperties": False,
}

# The published shape of GET /api/deep_research/task/<uuid>/report (also in the OpenAPI document).
REPORT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"https://uedu.example/schemas/deep-research-report/{SCHEMA_VERSION}",
    "title": "DeepResearchReport",
    "type": "object",
    "required": [
        "schema_version",
        "question",
        "summary",
        "findings",
        "conflicts",
        "counter_evidence",
        "judgement",
        "limitations",
        "not_verified",
        "citations",
    ],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"type": "string", "const": SCHEMA_VERSION},
        "question": _STR,
        "summary": {"type": "string", "description": "Markdown; [N] are citation numbers"},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["heading", "text", "claims", "citations"],
                "additionalProperties": False,
                "properties": {
                    "heading": _STR,
                    "text": {"type": "string", "description": "Markdown; [N] are citation numbers"},
                    "claims": {"type": "array", "items": _CLAIM},
                    "citations": _INTS,
                },
            },
        },
        "conflicts": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["subject", "found_by", "status", "sides", "re_search"],
                "additionalProperties": False,
                "properties": {
                    "subject": _STR,
                    "found_by": {"type": "string", "enum": ["engine", "verifier", "writer"]},
                    "status": {"type": "string", "enum": ["resolved", "unresolved"]},
                    "resolution": _STR,
                    "prevailing_side": {"type": ["integer", "null"]},
                    "sides": {
                        "type": "array",
                        "minItems": 2,
                        "items": {
                            "type": "object",
                            "required": ["statement", "claim_ids", "citations", "tier", "sources"],
                            "additionalProperties": False,
                            "properties": {
                                "statement": _STR,
                                "claim_ids": _INTS,
                                "citations": _INTS,
                                "tier": _TIER,
                                "value": {"type": ["number", "null"]},
                                "unit": _STR,
                                "quotes": {
                                    "type": "array",
                                    "description": "the verbatim spans the side's claims rest on",
                                    "items": {
                                        "type": "object",
                                        "required": ["text", "citation"],
                                        "additionalProperties": False,
                                        "properties": {"text": _STR, "citation": {"type": "integer"}},
                                    },
                                },
                                "sources": {"type": "array", "items": _SOURCE_REF},
                            },
                        },
                    },
                    "re_search": {
                        "type": "object",
                        "required": ["rounds", "new_sources", "new_claim_ids"],
                        "additionalProperties": False,
                        "properties": {
                            "rounds": {"type": "integer"},
                            "new_sources": {"type": "integer"},
                            "new_claim_ids": _INTS,
                        },
                    },
                    # Added by the product when it serves the report (never by the engine): the
                    # conflict's stable key and a reviewer's current decision on it.
                    "key": {"type": "string", "description": "stable hash naming the conflict for decisions"},
                    "decision": {
                        "type": "object",
                        "required": ["decision", "side", "reason", "decided_by", "decided_at"],
                        "additionalProperties": False,
                        "properties": {
                            "decision": {"type": "string", "enum": ["side", "unsettleable"]},
                            "side": {"type": ["integer", "null"]},
                            "reason": _STR,
                            "decided_by": {"type": ["string", "null"]},
                            "decided_at": {"type": "string", "format": "date-time"},
                        },
                    },
                },
            },
        },
        "counter_evidence": {
            "type": "object",
            "required": ["searched", "searches", "queries", "found", "support_by_tier", "against_by_tier"],
            "additionalProperties": False,
            "properties": {
                "searched": {"type": "boolean"},
                "searches": {"type": "integer"},
                "queries": {"type": "array", "items": _STR},
                "found": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["summary", "citations"],
                        "additionalProperties": False,
                        "properties": {"summary": _STR, "citations": _INTS, "claim_ids": _INTS},
                    },
                },
                "support_by_tier": _BY_TIER,
                "against_by_tier": _BY_TIER,
            },
        },
        "judgement": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["kind", "text", "claim_ids", "citations", "assumptions"],
                    "additionalProperties": False,
                    "properties": {
                        "kind": {"const": "judgement"},
                        "text": _STR,
                        "claim_ids": _INTS,
                        "citations": _INTS,
                        "assumptions": {"type": "array", "items": _STR},
                    },
                },
            ]
        },
        "limitations": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["code"],
                "additionalProperties": False,
                "properties": {"code": _STR, "detail": {"type": "object"}},
            },
        },
        "not_verified": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["kind", "text", "reason", "sources"],
                "additionalProperties": False,
                "properties": {
                    "kind": {
                        "type": "string",
                        "enum": [
                            "sentence",
                            "cell",
                            "heading",
                            "judgement",
                            "assumption",
                            "conflict",
                            "counter_evidence",
                            "code",
                        ],
                    },
                    "text": {
                        "type": ["string", "null"],
                        "description": "null when the text came from an instruction in a source",
                    },
                    "reason": {
                        "type": "string",
                        "enum": [
                            NO_CITATION,
                            FABRICATED,
                            "unsupported",
                            "figure_mismatch",
                            INSTRUCTION,
                            UNVERIFIED,
                            "partial",
                            NOT_IN_CLAIMS,
                            SUPERSEDED,
                        ],
                    },
                    "detail": _STR,
                    "sources": {"type": "array", "items": _SOURCE_REF},
                },
            },
        },
        "citations": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "id",
                    "title",
                    "url",
                    "source_tool",
                    "snippet",
                    "tier",
                    "origin",
                    "quote",
                    "location",
                ],
                "properties": {
                    "id": {"type": "integer", "description": "the number shown as [N]"},
                    "source_id": {"type": "integer"},
                    "title": _STR,
                    "url": _STR,
                    "source_tool": _STR,
                    "snippet": _STR,
                    "tier": _TIER,
                    "origin": {"type": "string", "enum": ["internal", "external"]},
                    "locator": _STR,
                    "flagged": {"type": "boolean"},
                    "quote": {
                        "type": "string",
                        "description": "the source's own words that the report's verified claims quote; empty when none",
                    },
                    "location": _LOCATION,
                },
            },
        },
    },
}
_VALIDATOR = jsonschema_rs.Draft202012Validator(REPORT_SCHEMA)


def validate(report: dict) -> None:
    """Raises jsonschema_rs.ValidationError when the report breaks its published schema."""
    _VALIDATOR.validate(report)


@dataclass
class VerificationReport:
    """The verification record of one research, as stored on the task (verification_json)."""

    status: str  # complete | incomplete | no_sources
    policy: str
    claims: list[dict] = field(
        default_factory=list
    )  # the ledger: one entry per sentence or cell the writer wrote
    evidence_claims: list[dict] = field(default_factory=list)  # the atomic claims, verified or not
    counts: dict = field(default_factory=dict)
    conflicts: list[dict] = field(default_factory=list)  # unresolved conflicts shown to the reader
    conflicts_found: int = 0  # by the engine (figures, contradictions)
    conflicts_reported_by_writer: int = 0
    conflicts_shown: int = 0
    conflict_rounds: int = 0
    counter_evidence: list[dict] = field(default_factory=list)
    counter_searches: int | None = None
    web_only_claims: int = 0
    low_credibility_sources: int = 0
    flagged_sources_cited: int = 0
    source_pollution_rate: float | None = None  # share of cited sources that are low-tier or flagged
    cells: int = 0  # table cells checked
    removed: dict = field(default_factory=dict)  # units that left the body, by reason
    invalid_citations_removed: int = 0
    links_removed: int = 0
    instruction_echoes_removed: int = 0
    internal_sources: int = 0
    external_sources: int = 0
    hypotheses: list[dict] = field(default_factory=list)
    retries: list[dict] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)


@dataclass
class Finished:
    answer: str
    citations: list[Citation]
    verification: VerificationReport
    report: dict


def _source_ref(run: RunContext, source_id: int) -> dict:
    s = run.registry.get(source_id)
    return {
        "title": scrub_links(s.title, set())[0].strip()[:200] or s.source_tool,
        "url": s.url,
        "source_tool": s.source_tool,
        "tier": s.tier,
    }


def _independent_by_tier(run: RunContext, ids) -> dict:
    """Sources from one site count once: independence by host (or by the tool and title)."""
    seen: dict[str, str] = {}
    for i in ids:
        s = run.registry.get(i)
        if s is None:
            continue
        key = urlparse(s.url).hostname or f"{s.source_tool}|{s.title}"
        if key not in seen or TIER_RANK.get(s.tier, 9) < TIER_RANK.get(seen[key], 9):
            seen[key] = s.tier
    counts: dict[str, int] = {}
    for tier in seen.values():
        counts[tier] = counts.get(tier, 0) + 1
    return counts


def _sources_of_unit(run: RunContext, unit: UnitVerdict, claims: ClaimSet) -> list[dict]:
    return [
        _source_ref(run, i)
        for i in dict.fromkeys(
            unit.source_ids + [i for c in unit.claim_ids if claims.get(c) for i in claims.get(c).source_ids]
        )
        if run.registry.get(i)
    ]


# What the ledger (ResearchClaim.verdict) records for the engine's newer codes.
_LEDGER_VERDICT = {NOT_IN_CLAIMS: "unsupported", SUPERSEDED: "unsupported"}


def _apply(
    run: RunContext,
    parts: list[Segment],
    units: list[UnitVerdict],
    claims: ClaimSet,
    ledger: list[dict],
    not_verified: list[dict],
) -> None:
    """Keep, replace, drop or (opt-in) mark each unit; write its ledger entry and, when its text
    leaves the body, its not-verified entry (naming the sources; never the text of an
    instruction). A partly supported sentence becomes the text of the claims it cites (those the
    body does not state already), so its extra words never stay."""
    stated = {
        c.id
        for u in units
        if u.verified and parts[u.part].sentence
        for c in (claims.get(i) for i in u.claim_ids)
        if c is not None and same_text(parts[u.part].claim, c.text)
    }
    for unit in units:
        part = parts[unit.part]
        sources = [run.registry.get(i) for i in unit.source_ids if run.registry.get(i)]
        tiers = sorted({s.tier for s in sources}, key=lambda t: TIER_RANK.get(t, 9))
        entry = {
            "text": part.claim,
            "kind": unit.kind,
            "source_ids": unit.source_ids,
            "claim_ids": unit.claim_ids,
            "verdict": _LEDGER_VERDICT.get(unit.verdict, unit.verdict),
            "reason": unit.detail,
            "verifier_confidence": unit.confidence,
            "confidence": unit.confidence if unit.verified else 0.0,
            "tiers": tiers,
            "web_only": tiers == ["web"],
            "action": "kept",
        }
        if unit.verified:
            ledger.append(entry)
            continue
        instruction = unit.verdict == INSTRUCTION
        if instruction or run.inp.unsupported_policy != "mark":
            entry["action"] = "dropped"
            not_verified.append(
                {
                    "kind": unit.kind,
                    "text": None if instruction else part.claim,
                    "reason": unit.verdict,
                    "detail": unit.detail[:300],
                    "sources": _sources_of_unit(run, unit, claims),
                }
            )
            if instruction:
                entry["text"] = ""  # the planted text is quoted nowhere, the ledger included
            replacement = ""
            if unit.replaceable and part.sentence:
                fresh = [
                    c
                    for c in (claims.get(i) for i in unit.claim_ids)
                    if c is not None and c.verified and c.id not in stated
                ]
                stated |= {c.id for c in fresh}
                joiner = "" if run.lang == "zh" else " "
                replacement = joiner.join(claim_sentence(c, run.lang) for c in fresh)
                if replacement:
                    entry["action"] = "replaced"
                    trailing = part.text[len(part.text.rstrip()) :]
                    replacement += trailing or ("" if run.lang == "zh" else " ")
            part.text = replacement or (" — " if part.cell else "")
        else:
            mark = MARKS["uncited" if unit.verdict == NO_CITATION else "unverified"][run.lang]
            stripped = part.text.rstrip()
            part.text = stripped + mark + part.text[len(stripped) :]
            entry["action"] = "marked"
        ledger.append(entry)


def _sections(markdown: str) -> list[tuple[str, str]]:
    """(heading, body) pairs; text before the first heading has an empty heading."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in markdown.splitlines():
        match = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
        if match:
            sections.append((match.group(1).strip(), []))
        else:
            sections[-1][1].append(line)
    return [(h, "\n".join(b).strip()) for h, b in sections if h or "\n".join(b).strip()]


@dataclass
class Checked:
    """The draft after its check: texts with source markers, the ledger, what left the body."""

    summary: str
    answer: str
    judgement: dict | None
    units: list[UnitVerdict]
    ledger: list[dict]
    not_verified: list[dict]
    # The writer's conflicts and counter-evidence, rebuilt from claim records.
    writer_conflicts: list[Conflict] = field(default_factory=list)
    counter_found: list[dict] = field(default_factory=list)  # [{"summary", "source_ids", "claim_ids"}]
    limitations: list[dict] = field(default_factory=list)
    superseded: set[int] = field(default_factory=set)
    stated_claims: set[int] = field(default_factory=set)  # the claims the body states


def finalize(
    run: RunContext,
    draft: Draft | None,
    claims: ClaimSet,
    conflicts: list[Conflict],
    *,
    conflict_rounds: int,
    counter: CounterSearch,
    hypothesis_status: dict[int, str],
    limitations: list[dict],
    incomplete: bool,
) -> Finished:
    """The four jobs, in order: check the draft, number the citations, build the report, keep the
    verification record. No draft (the writer failed): the body is the verified claims."""
    if not _body_claims(claims, superseded_claims(conflicts)):
        draft = Draft(answer="")
        checked = nothing_verified(run, claims)
    elif draft is None:
        draft = Draft(answer="")
        checked = fallback(run, draft, claims, conflicts, code="writing_failed")
    else:
        checked = check(run, draft, claims, conflicts)
    by_number, citations = number_citations(run, checked, draft, conflicts, claims)
    report = build_report(
        run,
        checked,
        by_number,
        citations,
        draft,
        claims,
        conflicts,
        counter=counter,
        limitations=limitations,
        conflict_rounds=conflict_rounds,
        incomplete=incomplete,
    )
    verification = verification_record(
        run,
        checked,
        citations,
        draft,
        report,
        claims,
        conflicts,
        counter=counter,
        conflict_rounds=conflict_rounds,
        hypothesis_status=hypothesis_status,
        incomplete=incomplete,
    )
    full_answer = (
        (checked.summary.strip() + "\n\n" + checked.answer).strip() + "\n"
        if checked.summary.strip()
        else checked.answer
    )
    return Finished(answer=full_answer, citations=citations, verification=verification, report=report)


def superseded_claims(conflicts: list[Conflict]) -> set[int]:
    """The claims of every side that lost a conflict the engine settled."""
    return {
        i
        for c in conflicts
        if c.status == "resolved" and c.prevailing_side is not None
        for n, side in enumerate(c.sides)
        if n != c.prevailing_side
        for i in side.claim_ids
    }


def _body_claims(claims: ClaimSet, superseded: set[int]) -> list[Claim]:
    return [c for c in claims.verified() if c.id not in superseded and not c.flagged]


def fallback(
    run: RunContext, draft: Draft, claims: ClaimSet, conflicts: list[Conflict], *, code: str
) -> Checked:
    """The body when the draft cannot be used: the verified claims under the plan's
    sub-questions, each with its citation; `code` says why, as a limitation."""
    superseded = superseded_claims(conflicts)
    sources_of = {c.id: c.source_ids for c in claims.claims}
    answer = claims_body(
        _body_claims(claims, superseded), [sq.question for sq in run.plan.sub_questions], run.lang
    )
    return Checked(
        stated_claims={c.id for c in _body_claims(claims, superseded)},
        summary="",
        answer=expand_claim_markers(answer, sources_of),
        judgement=None,
        units=[],
        ledger=[],
        not_verified=[],
        limitations=[{"code": code, "detail": {}}],
        superseded=superseded,
    )


def nothing_verified(run: RunContext, claims: ClaimSet) -> Checked:
    """No statement could be verified: the body stays empty and the report says so with a code
    (the page words it in the reader's language) and the sources that were consulted."""
    consulted = [_source_ref(run, i) for i, _ in run.registry.items() if not run.registry.flagged(i)]
    return Checked(
        summary="",
        answer="",
        judgement=None,
        units=[],
        ledger=[],
        not_verified=[],
        limitations=[
            {
                "code": "no_verified_claims",
                "detail": {"claims": len(claims.claims), "sources": consulted[:30]},
            }
        ],
    )


def _without_code(markdown: str, not_verified: list[dict]) -> str:
    """Fenced code blocks leave the body (a report states claims; code states none)."""
    out, block, fence = [], [], None
    for line in markdown.splitlines(keepends=True):
        stripped = line.strip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence, block = stripped[:3], []
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
                text = "".join(block).strip()
                if text:
                    not_verified.append(
                        {
                            "kind": "code",
                            "text": text[:300],
                            "reason": NOT_IN_CLAIMS,
                            "detail": "",
                            "sources": [],
                        }
                    )
            else:
                block.append(line)
            continue
        out.append(line)
    if fence is not None and "".join(block).strip():
        not_verified.append(
            {
                "kind": "code",
                "text": "".join(block).strip()[:300],
                "reason": NOT_IN_CLAIMS,
                "detail": "",
                "sources": [],
            }
        )
    return "".join(out)


_TABLE_LINE = re.compile(r"^\s*\|")


def _figure_tables(
    markdown: str, claims: ClaimSet, superseded: set[int], rendered: list[str]
) -> tuple[str, str]:
    """Tables that state figures are rendered by the engine from the verified figure claims they
    cite; returns (markdown with the engine's tables, the writer's tables for checking apart)."""
    lines = markdown.splitlines(keepends=True)
    out, writer, n = [], [], 0
    while n < len(lines):
        if not _TABLE_LINE.match(lines[n]):
            out.append(lines[n])
            n += 1
            continue
        end = n
        while end < len(lines) and _TABLE_LINE.match(lines[end]):
            end += 1
        block = "".join(lines[n:end])
        cells = [p for p in segments(block) if p.cell and p.role != "header"]
        if any(figures.stated_figures(p.claim) for p in cells):
            cited_claims = {i for p in cells for i in p.claim_ids}
            cited_sources = {i for p in cells for i in p.ids}
            shown = [
                c
                for c in _body_claims(claims, superseded)
                if c.kind == "figure" and (c.id in cited_claims or set(c.source_ids) & cited_sources)
            ]
            table = figure_table(shown)
            if table not in rendered:  # two tables of the same claims are one table
                rendered.append(table)
                out.append(table)
            writer.append(block + "\n")
        else:
            out.append(block)
        n = end
    return "".join(out), "".join(writer)


def _trust_engine_tables(parts: list[Segment], engine_lines: set[str]) -> None:
    """The rows of the engine's own figure tables are claims' fields, not the writer's words."""
    line: list[Segment] = []
    for part in parts:
        line.append(part)
        if part.text.endswith("\n"):
            if "".join(p.text for p in line) in engine_lines:
                for p in line:
                    p.cell = False
            line = []
    if line and "".join(p.text for p in line) + "\n" in engine_lines:
        for p in line:
            p.cell = False


def _give_headings_context(parts: list[Segment]) -> None:
    """A heading stands for the markers of its section (up to the next heading)."""
    for n, part in enumerate(parts):
        if not part.heading:
            continue
        ids, cids = [], []
        for later in parts[n + 1 :]:
            if later.heading:
                break
            ids += later.ids
            cids += later.claim_ids
        part.context_ids, part.context_claim_ids = list(dict.fromkeys(ids)), list(dict.fromkeys(cids))


def _rebuild_conflicts(
    run: RunContext,
    draft: Draft,
    claims: ClaimSet,
    engine: list[Conflict],
    superseded: set[int],
    not_verified: list[dict],
) -> list[Conflict]:
    """The writer's conflicts, each side rebuilt from the verified claims of the sources it names
    (their text, quotes and sources). A side without one: the conflict leaves the report."""
    engine_sources = [set(s.source_ids) for c in engine for s in c.sides]
    out = []
    usable = _body_claims(claims, set())
    for c in draft.conflicts:
        if all(set(p["source_ids"]) in engine_sources for p in c["positions"]):
            continue  # the engine found it already
        sides = []
        for p in c["positions"]:
            members = [m for m in usable if set(m.source_ids) & set(p["source_ids"])]
            if not members:
                break
            ids = list(dict.fromkeys(i for m in members for i in m.source_ids))
            sides.append(
                Side(
                    statement=" ".join(m.text for m in members),
                    claim_ids=[m.id for m in members],
                    source_ids=ids,
                    tier=best_tier(run, ids),
                    value=members[0].value if len(members) == 1 else None,
                    unit=members[0].unit if len(members) == 1 else "",
                )
            )
        if len(sides) < 2 or len(sides) != len(c["positions"]):
            not_verified.append(
                {
                    "kind": "conflict",
                    "text": " / ".join([c["topic"]] + [p["summary"] for p in c["positions"]])[:300],
                    "reason": UNSUPPORTED,
                    "detail": "a side rests on no verified claim",
                    "sources": [
                        _source_ref(run, i)
                        for i in dict.fromkeys(i for p in c["positions"] for i in p["source_ids"])
                        if run.registry.get(i)
                    ],
                }
            )
            continue
        members = [claims.get(i) for s in sides for i in s.claim_ids]
        subject = c["topic"] if not novel_words(c["topic"], grounds(members)) else ""
        out.append(Conflict(subject=subject, found_by="writer", sides=sides))
    return out


def _rebuild_counter(
    run: RunContext, draft: Draft, claims: ClaimSet, superseded: set[int], not_verified: list[dict]
) -> list[dict]:
    """The writer's counter-evidence, as the verified claims of the sources it names: its words
    stay only when those claims state every one of them."""
    usable = _body_claims(claims, superseded)
    out = []
    for item in draft.counter_evidence:
        members = [m for m in usable if set(m.source_ids) & set(item["source_ids"])]
        if not members:
            not_verified.append(
                {
                    "kind": "counter_evidence",
                    "text": item["summary"][:300] or None,
                    "reason": UNSUPPORTED,
                    "detail": "rests on no verified claim",
                    "sources": [_source_ref(run, i) for i in item["source_ids"] if run.registry.get(i)],
                }
            )
            continue
        summary = item["summary"]
        if not summary.strip() or novel_words(summary, grounds(members)):
            summary = " ".join(m.text for m in members)
        out.append(
            {
                "summary": summary,
                "source_ids": list(dict.fromkeys(i for m in members for i in m.source_ids)),
                "claim_ids": [m.id for m in members],
            }
        )
    return out


def check(run: RunContext, draft: Draft, claims: ClaimSet, conflicts: list[Conflict] = ()) -> Checked:
    """Summary, findings and the judgement, unit by unit (headings, labels and questions
    included); what fails leaves the body (or is marked, opt-in), a partly supported sentence
    becomes its claims' text; claim markers become the claims' source markers. When the check
    cannot run, or nothing the writer wrote survives, the body is the verified claims."""
    # A "disagreement" or "counter-evidence" that a source's instructions asked for is neither.
    draft.conflicts = [
        c
        for c in draft.conflicts
        if not any(
            obeys_instructions(run, f"{c['topic']} {p['summary']}", set(p["source_ids"]))
            for p in c["positions"]
        )
    ]
    draft.counter_evidence = [
        c for c in draft.counter_evidence if not obeys_instructions(run, c["summary"], set(c["source_ids"]))
    ]
    superseded = superseded_claims(list(conflicts))
    ledger, not_verified = [], []
    summary_md = _without_code(draft.summary, not_verified)
    answer_md = _without_code(draft.answer, not_verified)
    engine_tables: list[str] = []
    summary_md, summary_tables = _figure_tables(summary_md, claims, superseded, engine_tables)
    answer_md, answer_tables = _figure_tables(answer_md, claims, superseded, engine_tables)
    summary_parts, answer_parts = segments(summary_md), segments(answer_md)
    engine_lines = {line + "\n" for table in engine_tables for line in table.splitlines()}
    _trust_engine_tables(summary_parts, engine_lines)
    _trust_engine_tables(answer_parts, engine_lines)
    _give_headings_context(answer_parts)
    _give_headings_context(summary_parts)
    judgement_parts = segments(draft.judgement["text"]) if draft.judgement else []
    rests_on = []
    if draft.judgement:
        rests_on = [
            i
            for i in draft.judgement["claim_ids"]
            if claims.get(i) and claims.get(i).verified and i not in superseded
        ]
        for part in judgement_parts:
            if part.unit:
                part.role, part.context_claim_ids = "judgement", rests_on
    # The writer's own figure tables are checked (to list what was wrong) but never shown.
    writer_tables = [p for p in segments(summary_tables + answer_tables)]
    for part in writer_tables:
        if part.role == "header" or part.heading:
            part.cell = part.heading = False
        elif part.cell:
            part.role = part.role or "figure_table"
    everything = (
        summary_parts
        + [Segment("\n\n")]
        + answer_parts
        + [Segment("\n\n")]
        + judgement_parts
        + [Segment("\n\n")]
        + writer_tables
    )
    result = check_draft(run, everything, claims, superseded)
    units = result.units
    for entry in draft.fabricated:  # sentences citing only invented ids: gone already, listed here
        entry = dict(entry)
        if obeys_instructions(run, entry["text"]):
            entry.update(text="", verdict=INSTRUCTION, reason=INSTRUCTION_TEXT)
        ledger.append(entry)
        not_verified.append(
            {
                "kind": entry["kind"],
                "text": entry["text"] or None,
                "reason": entry["verdict"],
                "detail": entry["reason"],
                "sources": [],
            }
        )
    body_end = len(summary_parts) + 1 + len(answer_parts)
    judgement_end = body_end + 1 + len(judgement_parts)
    _apply(run, everything, [u for u in units if u.part < body_end], claims, ledger, not_verified)
    for unit in units:
        if unit.part <= judgement_end:
            continue
        # A cell of the writer's figure table: the engine's table stands in its place.
        instruction = unit.verdict == INSTRUCTION
        tiers = sorted(
            {run.registry.get(i).tier for i in unit.source_ids if run.registry.get(i)},
            key=lambda t: TIER_RANK.get(t, 9),
        )
        ledger.append(
            {
                "text": "" if instruction else everything[unit.part].claim,
                "kind": "cell",
                "source_ids": unit.source_ids,
                "claim_ids": unit.claim_ids,
                "verdict": _LEDGER_VERDICT.get(unit.verdict, unit.verdict),
                "reason": unit.detail,
                "verifier_confidence": unit.confidence,
                "confidence": 0.0,
                "tiers": tiers,
                "web_only": tiers == ["web"],
                "action": "replaced" if unit.verified else "dropped",
            }
        )
        if not unit.verified:
            not_verified.append(
                {
                    "kind": "cell",
                    "text": None if instruction else everything[unit.part].claim,
                    "reason": unit.verdict,
                    "detail": unit.detail[:300],
                    "sources": _sources_of_unit(run, unit, claims),
                }
            )
    judgement = _checked_judgement(
        run,
        draft,
        claims,
        superseded,
        rests_on,
        judgement_parts,
        [u for u in units if body_end < u.part < judgement_end],
        body_end + 1,
        not_verified,
    )
    if run.inp.unsupported_policy != "mark" and any(
        e["action"] == "kept" and e["verdict"] != "supported" for e in ledger
    ):
        raise AssertionError("strict policy: an unverified unit was about to stay in the body")
    writer_conflicts = _rebuild_conflicts(run, draft, claims, list(conflicts), superseded, not_verified)
    counter_found = _rebuild_counter(run, draft, claims, superseded, not_verified)
    sources_of = {c.id: c.source_ids for c in claims.claims}
    summary = expand_claim_markers(join(summary_parts), sources_of) if draft.summary.strip() else ""
    answer = expand_claim_markers(join(answer_parts), sources_of)
    if result.failed or (_body_claims(claims, superseded) and not marker_ids(summary + answer)):
        code = "draft_check_failed" if result.failed else "draft_unverified"
        base = fallback(run, draft, claims, list(conflicts), code=code)
        summary, answer, judgement = "", base.answer, None if result.failed else judgement
        limitations, stated = base.limitations, base.stated_claims
    else:
        limitations = []
        stated = {
            i
            for e in ledger
            if e["action"] in ("kept", "replaced") and e["kind"] in ("sentence", "cell")
            for i in e.get("claim_ids", [])
        } | {
            c.id
            for c in _body_claims(claims, superseded)
            if c.kind == "figure" and f"[c{c.id}]" in summary_md + answer_md
        }
    if judgement:
        cited = [i for c in judgement["claim_ids"] for i in sources_of[c]]
        judgement["text"] = expand_claim_markers(judgement["text"], sources_of).rstrip() + "".join(
            f"[{i}]" for i in dict.fromkeys(cited) if f"[{i}]" not in judgement["text"]
        )
    return Checked(
        summary=summary,
        answer=answer,
        judgement=judgement,
        units=units,
        ledger=ledger,
        not_verified=not_verified,
        writer_conflicts=writer_conflicts,
        counter_found=counter_found,
        limitations=limitations,
        superseded=superseded,
        stated_claims=stated - superseded,
    )


def _checked_judgement(
    run: RunContext,
    draft: Draft,
    claims: ClaimSet,
    superseded: set[int],
    rests_on: list[int],
    parts: list[Segment],
    units: list[UnitVerdict],
    offset: int,
    not_verified: list[dict],
) -> dict | None:
    """Each sentence of the judgement is a unit checked against the verified claims it names;
    one that fails leaves it. Each assumption may state no number or name that no verified claim
    states. A judgement left with no sentence, or resting on no verified claim, leaves the report."""
    if draft.judgement is None:
        return None
    obeying = any(u.verdict == INSTRUCTION for u in units) or obeys_instructions(
        run, " ".join(draft.judgement["assumptions"])
    )
    for unit in units:
        if unit.verified:
            continue
        part = parts[unit.part - offset]
        not_verified.append(
            {
                "kind": "judgement",
                "text": None if unit.verdict == INSTRUCTION else part.claim,
                "reason": unit.verdict,
                "detail": unit.detail[:300],
                "sources": _sources_of_unit(run, unit, claims),
            }
        )
        part.text = ""
    text = join(parts).strip() if any(u.verified for u in units) else ""
    if not rests_on or obeying or not text:
        if not units or any(u.verified for u in units):  # say why when no sentence was listed yet
            not_verified.append(
                {
                    "kind": "judgement",
                    "text": None if obeying else (text or draft.judgement["text"].strip() or None),
                    "reason": INSTRUCTION if obeying else UNSUPPORTED,
                    "detail": INSTRUCTION_TEXT if obeying else "rests on no verified claim",
                    "sources": [],
                }
            )
        return None
    usable = _body_claims(claims, superseded)
    allowed_figures = [q for c in usable for q in figures.quantities(c.text)] + [
        q for c in usable for q in [figures.of_claim(c.value, c.unit)] if q is not None
    ]
    assumptions = []
    for assumption in draft.judgement["assumptions"]:
        new = novel_names(assumption, grounds(usable))
        wrong = [
            q
            for q in figures.stated_figures(assumption)
            if not any(q.matches(a, exact=False) for a in allowed_figures)
        ]
        if new or wrong:
            not_verified.append(
                {
                    "kind": "assumption",
                    "text": assumption,
                    "reason": FIGURE_MISMATCH if wrong else NOT_IN_CLAIMS,
                    "detail": ("names or numbers no verified claim states: " + ", ".join(new))[:300]
                    if new
                    else "the figure is stated by no verified claim",
                    "sources": [],
                }
            )
            continue
        assumptions.append(assumption)
    return {"text": text, "claim_ids": rests_on, "assumptions": assumptions}


def number_citations(
    run: RunContext, checked: Checked, draft: Draft, conflicts: list[Conflict], claims: ClaimSet
) -> tuple[dict[int, int], list[Citation]]:
    """Display numbers in order of appearance (summary, findings, judgement, then the sources only
    conflicts and counter-evidence cite); the texts are rewritten to them in place."""
    valid = run.registry.ids()
    numbering = Numbering.of(
        checked.summary
        + "\n"
        + checked.answer
        + "\n"
        + (checked.judgement["text"] if checked.judgement else ""),
        valid,
    )
    extra = [i for c in [*conflicts, *checked.writer_conflicts] for s in c.sides for i in s.source_ids]
    extra += [i for c in checked.counter_found for i in c["source_ids"]]
    for source_id in extra:
        if source_id in valid and source_id not in numbering.by_source:
            numbering.by_source[source_id] = len(numbering.by_source) + 1
    by_number = numbering.by_source
    checked.summary, _ = rewrite_markers(checked.summary, by_number)
    checked.answer, _ = rewrite_markers(checked.answer, by_number)
    if checked.judgement:
        sources_of = {c.id: c.source_ids for c in claims.claims}
        text, _ = rewrite_markers(checked.judgement["text"], by_number)
        checked.judgement = {
            "kind": "judgement",
            "text": text.strip(),
            "claim_ids": checked.judgement["claim_ids"],
            "citations": sorted(
                {
                    by_number[i]
                    for c in checked.judgement["claim_ids"]
                    for i in sources_of[c]
                    if i in by_number
                }
            ),
            "assumptions": checked.judgement["assumptions"],
        }
    observed_urls = {s.url for _, s in run.registry.items() if s.url}
    spans = _quoted_spans(run, checked, claims)
    citations = []
    for source_id, number in sorted(by_number.items(), key=lambda kv: kv[1]):
        s = run.registry.get(source_id)
        flags = run.registry.flagged(source_id)
        # A flagged source's excerpt is shown without the passages that address the model.
        snippet = flags.clean_text[:300] if flags else s.snippet
        citations.append(
            Citation(
                number=number,
                source_id=source_id,
                title=scrub_links(s.title, observed_urls)[0].strip() or s.url,
                url=s.url,
                source_tool=s.source_tool,
                snippet=scrub_links(snippet, observed_urls)[0],
                tier=s.tier,
                origin=s.origin,
                locator=s.locator,
                **spans.get(source_id, {"location": {"page": page_of(s), "start": -1, "end": -1}}),
            )
        )
    for entry in checked.ledger:
        entry["citations"] = [by_number[i] for i in entry["source_ids"] if i in by_number]
    return by_number, citations


def _quoted_spans(run: RunContext, checked: Checked, claims: ClaimSet) -> dict[int, dict]:
    """For each source, the quote a citation of it shows: the first located quote of a verified
    claim that a kept unit rests on, else of any verified claim (conflicts cite those too)."""
    kept = [i for u in checked.units if u.verified for i in u.claim_ids]
    ordered = [claims.get(i) for i in dict.fromkeys(kept)] + claims.verified()
    spans: dict[int, dict] = {}
    for claim in ordered:
        if claim is None or not claim.verified or claim.flagged:
            continue
        for quote in claim.quotes:
            source = run.registry.get(quote.source_id)
            if quote.source_id in spans or source is None or not quote.located:
                continue
            spans[quote.source_id] = {
                "quote": located_text(quote, source),
                "location": {"page": quote.page or page_of(source), "start": quote.start, "end": quote.end},
            }
    return spans


def build_report(
    run: RunContext,
    checked: Checked,
    by_number: dict[int, int],
    citations: list[Citation],
    draft: Draft,
    claims: ClaimSet,
    conflicts: list[Conflict],
    *,
    counter: CounterSearch,
    limitations: list[dict],
    conflict_rounds: int,
    incomplete: bool,
) -> dict:
    """The machine-readable report, validated against REPORT_SCHEMA before it leaves."""
    sources_of = {c.id: c.source_ids for c in claims.claims}

    def numbers(ids) -> list[int]:
        return [by_number[i] for i in dict.fromkeys(ids) if i in by_number]

    kept_units = [u for u in checked.units if u.verified]
    stated = checked.stated_claims
    findings = []
    for heading, text in _sections(checked.answer):
        ids = marker_ids(text)
        sources = {sid for sid, n in by_number.items() if n in ids}
        used = sorted({cid for cid in stated if set(sources_of.get(cid, [])) & sources})
        findings.append(
            {
                "heading": heading,
                "text": text,
                "citations": sorted(set(ids)),
                "claims": [
                    {
                        "id": c.id,
                        "text": c.text,
                        "kind": c.kind,
                        "entity": c.entity,
                        "metric": c.metric,
                        "period": c.period,
                        "value": c.value,
                        "unit": c.unit,
                        "citations": numbers(c.source_ids),
                        "confidence": c.verifier_confidence,
                    }
                    for c in (claims.get(i) for i in used)
                    if c is not None
                ],
            }
        )

    def quotes(side: Side) -> list[dict]:
        """The verbatim spans the side's claims rest on, each with the citation it quotes."""
        out = []
        for claim in (claims.get(i) for i in side.claim_ids):
            for quote in getattr(claim, "quotes", []) if claim is not None and not claim.flagged else []:
                if quote.source_id in by_number and quote.text:
                    out.append({"text": quote.text, "citation": by_number[quote.source_id]})
        return out

    conflict_rows = [
        {
            "subject": c.subject,
            "found_by": c.found_by,
            "status": c.status,
            "resolution": c.resolution,
            "prevailing_side": c.prevailing_side,
            "re_search": c.re_search,
            "sides": [
                {
                    "statement": s.statement,
                    "claim_ids": s.claim_ids,
                    "citations": numbers(s.source_ids),
                    "tier": s.tier,
                    "value": s.value,
                    "unit": s.unit,
                    "quotes": quotes(s),
                    "sources": [_source_ref(run, i) for i in s.source_ids],
                }
                for s in c.sides
            ],
        }
        for c in [*conflicts, *checked.writer_conflicts]
    ]
    against = {i for c in checked.counter_found for i in c["source_ids"]}
    against |= {i for c in claims.verified() if c.found_by == "counter_search" for i in c.source_ids}
    support = {i for u in kept_units for i in u.source_ids} - against
    found = [
        {"summary": c["summary"], "citations": numbers(c["source_ids"]), "claim_ids": c["claim_ids"]}
        for c in checked.counter_found
    ]
    counter_report = {
        "searched": counter.ran,
        "searches": counter.searches,
        "queries": list(dict.fromkeys(counter.queries)),
        "found": found,
        "support_by_tier": _independent_by_tier(run, support),
        "against_by_tier": _independent_by_tier(run, against),
    }
    limitations = list(limitations) + checked.limitations
    unresolved = [r for r in conflict_rows if r["status"] == "unresolved"]
    web_only = sum(1 for e in checked.ledger if e.get("web_only") and e["action"] == "kept")
    if counter.ran and not found:
        limitations.append({"code": "no_counter_evidence", "detail": {"searches": counter.searches}})
    if unresolved:
        limitations.append(
            {"code": "unresolved_conflicts", "detail": {"count": len(unresolved), "rounds": conflict_rounds}}
        )
    if web_only:
        limitations.append({"code": "web_only_claims", "detail": {"count": web_only}})
    if incomplete:
        limitations.append({"code": "verification_incomplete", "detail": {}})
    flagged_sources = sum(1 for f in run.registry.flags.values() if f)
    if flagged_sources:
        limitations.append({"code": "instructions_in_sources", "detail": {"sources": flagged_sources}})
    report = {
        "schema_version": SCHEMA_VERSION,
        "question": run.inp.question,
        "summary": checked.summary.strip(),
        "findings": findings,
        "conflicts": conflict_rows,
        "counter_evidence": counter_report,
        "judgement": checked.judgement,
        "limitations": limitations,
        "not_verified": checked.not_verified,
        "citations": [
            {
                "id": c.number,
                **{k: v for k, v in c.as_dict().items() if k != "number"},
                "flagged": bool(run.registry.flagged(c.source_id)),
            }
            for c in citations
        ],
    }
    validate(report)
    return report


def verification_record(
    run: RunContext,
    checked: Checked,
    citations: list[Citation],
    draft: Draft,
    report: dict,
    claims: ClaimSet,
    conflicts: list[Conflict],
    *,
    counter: CounterSearch,
    conflict_rounds: int,
    hypothesis_status: dict[int, str],
    incomplete: bool,
) -> VerificationReport:
    """What is stored as the task's verification report: the ledger, the counts the metrics read."""
    weigh = run.credibility or tier_weight
    cited_sources = [(c.source_id, run.registry.get(c.source_id)) for c in citations]
    low = sum(1 for _, s in cited_sources if weigh(s) < LOW_CREDIBILITY)
    polluted = sum(1 for i, s in cited_sources if weigh(s) < LOW_CREDIBILITY or run.registry.flagged(i))
    removed: dict[str, int] = {}
    counts: dict[str, int] = {}
    for entry in checked.ledger:
        counts[entry["verdict"]] = counts.get(entry["verdict"], 0) + 1
        if entry["action"] == "dropped":
            removed[entry["verdict"]] = removed.get(entry["verdict"], 0) + 1
    unresolved = [r for r in report["conflicts"] if r["status"] == "unresolved"]
    return VerificationReport(
        status="incomplete" if incomplete else "complete",
        policy=run.inp.unsupported_policy,
        claims=checked.ledger,
        evidence_claims=[
            dict(
                c.as_json(),
                sources=[
                    {
                        "source_tool": run.registry.get(i).source_tool,
                        "url": run.registry.get(i).url,
                        "tier": run.registry.get(i).tier,
                    }
                    for i in c.source_ids
                    if run.registry.get(i)
                ],
            )
            for c in claims.claims
        ],
        counts=counts,
        conflicts=[
            {
                "topic": r["subject"],
                "found_by": r["found_by"],
                "positions": [
                    {"summary": s["statement"], "citations": s["citations"], "tier": s["tier"]}
                    for s in r["sides"]
                ],
            }
            for r in unresolved
        ],
        conflicts_found=len(conflicts),
        conflicts_reported_by_writer=len(draft.conflicts),
        conflicts_shown=len(report["conflicts"]),
        conflict_rounds=conflict_rounds,
        counter_evidence=[
            {"summary": f["summary"], "citations": f["citations"]}
            for f in report["counter_evidence"]["found"]
        ],
        counter_searches=counter.searches if counter.ran else None,
        web_only_claims=sum(1 for e in checked.ledger if e.get("web_only") and e["action"] == "kept"),
        low_credibility_sources=low,
        flagged_sources_cited=sum(1 for i, _ in cited_sources if run.registry.flagged(i)),
        source_pollution_rate=round(polluted / len(citations), 4) if citations else None,
        cells=sum(1 for u in checked.units if u.kind == "cell"),
        removed=removed,
        invalid_citations_removed=draft.invalid_citations,
        links_removed=draft.links_removed,
        instruction_echoes_removed=draft.instruction_echoes,
        internal_sources=sum(1 for c in citations if c.origin == "internal"),
        external_sources=sum(1 for c in citations if c.origin == "external"),
        hypotheses=[
            {"text": h, "status": hypothesis_status.get(i, "open")}
            for i, h in enumerate(run.plan.hypotheses, start=1)
        ],
        retries=run.retries,
    )


def empty_report(run: RunContext, answer: str, limitations: list[dict]) -> dict:
    """The report of a research that found nothing to cite."""
    report = {
        "schema_version": SCHEMA_VERSION,
        "question": run.inp.question,
        "summary": answer.strip(),
        "findings": [],
        "conflicts": [],
        "counter_evidence": {
            "searched": False,
            "searches": 0,
            "queries": [],
            "found": [],
            "support_by_tier": {},
            "against_by_tier": {},
        },
        "judgement": None,
        "limitations": [*limitations, {"code": "no_sources", "detail": {}}],
        "not_verified": [],
        "citations": [],
    }
    validate(report)
    return report
