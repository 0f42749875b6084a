"""Verification, in two passes.

1. Claims (before writing), code first (docs/claims.md): each claim's quotes are located in its
   sources (quotes.py) and the claim is checked against them by code (checks.py: figures with
   their scale, periods, names, direction; instructions.py: quotes of passages that address the
   model). A failure is final and costs no model call; a claim that only restates its quote is
   supported with no model call either. The verifier model reads the other claims' quotes and
   judges only whether their wording follows from them.
2. The draft (after writing): every unit — sentence, table cell, header and row label, heading,
   judgement sentence — must map to verified claims (claim markers [cN], or source markers [N] of
   sources with verified claims), repeat no flagged passage, state no figure and no word those
   claims do not state (body.py), and, unless code settled it (a claim rendered verbatim, a label,
   a heading), be judged supported by the verifier. What fails leaves the body under the strict
   policy (or is marked under `mark`), a partly supported sentence becomes its claims' text, and
   each is listed, with its reason, as not verified."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from . import body, checks, figures, instructions, prompts, quotes, schemas
from .answer import Segment
from .checks import (
    DIRECTION_CONTRADICTS_QUOTE,
    ENTITY_NOT_IN_QUOTE,
    FIGURE_NOT_IN_SOURCE,
    PERIOD_NOT_IN_QUOTE,
)
from .claims import Claim, ClaimSet, Quote
from .errors import PhaseFailed
from .sources import neutralise
from .state import RunContext
from .types import TIER_RANK, TIER_WEIGHT, Source

VERIFY_BATCH = 10
LOW_CREDIBILITY = 0.65

# Reasons decided by the engine (the page words them in the reader's language).
NO_CITATION = "no_citation"
FABRICATED = "fabricated_citation"
UNSUPPORTED = "unsupported"
FIGURE_MISMATCH = "figure_mismatch"
QUOTE_NOT_FOUND = "quote_not_found"
INSTRUCTION = "instruction_in_source"
UNVERIFIED = "unverified"
NOT_IN_CLAIMS = "not_in_claims"  # words that no claim the unit cites states (code)
SUPERSEDED = "superseded"  # states the losing side of a conflict the engine settled
INSTRUCTION_TEXT = "instruction found in source"
# A heading that repeats the question or a sub-question: structure, passed by code, not a fact.
PLAN_HEADING = "plan"
# What code writes as a check's detail (the page words each in the reader's language:
# research/presentation.py, DETAIL_LABELS); a detail the verifier model writes is its own.
NO_VERDICT_TEXT = "the verifier gave no verdict"
QUOTES_NOTHING_TEXT = "the claim quotes nothing"
QUOTE_MISSING_TEXT = "quote {n} is not in source {source}"
FIGURE_NOT_QUOTED_TEXT = "its quotes do not state this figure"
PERIOD_NOT_QUOTED_TEXT = "its quotes and sources do not name this period"
ENTITY_NOT_QUOTED_TEXT = "its quotes and sources do not name this entity"
OPPOSITE_DIRECTION_TEXT = "its quotes say the opposite direction"
RESTATES_QUOTE_TEXT = "restates_quote"
NO_CITATION_TEXT = "no claim or source cited"
SUPERSEDED_TEXT = "states a side that lost a settled conflict"
NO_CLAIM_SAYS_TEXT = "no verified claim says this"
FIGURE_MISMATCH_TEXT = "the figure differs from the verified claims it cites"
NOT_IN_CLAIMS_TEXT = "words no cited claim states: "  # followed by the words
CLAIMS_DO_NOT_SAY_TEXT = "the verified claims it cites do not say this"
PARTLY_SUPPORTED_TEXT = "partly supported by the claims it cites"
# Why code failed a claim before any model read it (the page words them in the reader's language).
CLAIM_REASONS = (
    QUOTE_NOT_FOUND,
    INSTRUCTION,
    FIGURE_NOT_IN_SOURCE,
    PERIOD_NOT_IN_QUOTE,
    ENTITY_NOT_IN_QUOTE,
    DIRECTION_CONTRADICTS_QUOTE,
)

# Plain text, no emphasis (CommonMark does not close "*…*" next to CJK punctuation). Only the
# opt-in `mark` policy writes these into the answer, as it always did.
MARKS = {
    "unverified": {"en": " ⚠ (not supported by the cited sources)", "zh": "⚠（此句未獲引用來源支持）"},
    "uncited": {"en": " ⚠ (no source cited)", "zh": "⚠（此句未附來源）"},
}


def tier_weight(source: Source) -> float:
    """The tier table's weight (history-based weights, when the product provides them, replace it)."""
    return TIER_WEIGHT.get(source.tier, 0.5)


def best_tier(run: RunContext, source_ids) -> str:
    tiers = [run.registry.get(i).tier for i in source_ids if run.registry.get(i)]
    return min(tiers, key=lambda t: TIER_RANK.get(t, 9)) if tiers else "web"


# --------------------------------------------------------------------------- pass 1: claims


@dataclass
class ClaimCheck:
    """What verifying a batch of claims found (the claims' verdicts are set on them)."""

    contradictions: list[dict] = field(default_factory=list)  # [{"claim_ids": [a, b], "reason"}]
    incomplete: bool = False


def verify_claims(run: RunContext, claims: list[Claim]) -> ClaimCheck:
    """Code first, then the model, and code's verdict stands: a claim whose quote is not in its
    source, rests on instructions, or states a figure, period, name or direction its quotes do
    not, fails here with its reason and no model call; a claim that only restates its quote is
    supported here, with no model call either. The rest go to the verifier model, which reads
    the claims' quotes (not whole passages) and judges only whether each wording follows."""
    check = ClaimCheck()
    to_model = []
    for claim in claims:
        flags = [run.registry.flagged(i) for i in claim.source_ids]
        passages = [p for f in flags for p in f.passages]
        clean = [run.registry.evidence_text(i) for i in claim.source_ids]
        if not any(t.strip() for t in clean) or instructions.repeats(claim.text, passages):
            _fail(claim, INSTRUCTION, INSTRUCTION_TEXT)
            claim.flagged = True
            continue
        if not _code_checks(run, claim):
            continue
        if checks.restates(claim.text, [_quoted(run, q) for q in claim.quotes]):
            claim.verdict, claim.verifier_confidence, claim.verified_by = "supported", 1.0, "code"
            claim.detail = RESTATES_QUOTE_TEXT
            continue
        to_model.append(claim)
    verdicts, contradictions, check.incomplete = _ask_verifier(
        run, [(c.id, c.text, [(q.source_id, _quoted(run, q)) for q in c.quotes]) for c in to_model]
    )
    known = {c.id for c in claims}
    check.contradictions = [x for x in contradictions if len(set(x["claim_ids"]) & known) >= 2]
    for claim in to_model:
        verdict = verdicts.get(claim.id)
        if verdict is None:
            claim.verdict, claim.reason, claim.detail = UNVERIFIED, UNVERIFIED, NO_VERDICT_TEXT
            continue
        claim.verdict, claim.verifier_confidence, claim.detail = (
            verdict["verdict"],
            verdict["confidence"],
            verdict["reason"],
        )
        claim.verified_by = "model"
        if claim.verdict == "unsupported":
            claim.reason = UNSUPPORTED
    return check


def _fail(claim: Claim, reason: str, detail: str) -> None:
    claim.verdict, claim.reason, claim.detail, claim.verifier_confidence = "unsupported", reason, detail, 0.0
    claim.verified_by = "code"


def exact_figures(run: RunContext, source: Source | None) -> bool:
    """Sources whose figures are exact (a tool registered with exact_figures=True: filings): a
    claim must state them at its own precision."""
    return source is not None and run.exact_figures(source.source_tool)


def _quoted(run: RunContext, quote: Quote) -> str:
    source = run.registry.get(quote.source_id)
    return quotes.located_text(quote, source) if source is not None else ""


def _code_checks(run: RunContext, claim: Claim) -> bool:
    """Locate the claim's quotes and check it against them; False (with the claim failed and its
    reason set) at the first check it does not pass."""
    if not claim.quotes:
        _fail(claim, QUOTE_NOT_FOUND, QUOTES_NOTHING_TEXT)
        return False
    for n, quote in enumerate(claim.quotes, start=1):
        source = run.registry.get(quote.source_id) if quote.source_id in claim.source_ids else None
        if not quotes.locate(quote, source):
            _fail(claim, QUOTE_NOT_FOUND, QUOTE_MISSING_TEXT.format(n=n, source=quote.source_id))
            return False
    # A claim cites what it quotes: a source it names but does not quote backs nothing.
    claim.source_ids = [i for i in claim.source_ids if any(q.source_id == i for q in claim.quotes)]
    quoted = [_quoted(run, q) for q in claim.quotes]
    flagged = [p for i in claim.source_ids for p in run.registry.flagged(i).passages]
    if any(instructions.flag(text) or instructions.repeats(text, flagged) for text in quoted):
        _fail(claim, INSTRUCTION, INSTRUCTION_TEXT)
        claim.flagged = True
        return False
    sources = [run.registry.get(i) for i in claim.source_ids]
    evidence = checks.Evidence(
        quotes=quoted,
        about=[checks.describe(s.title, s.locator, s.meta) for s in sources if s is not None],
        exact=[exact_figures(run, run.registry.get(q.source_id)) for q in claim.quotes],
    )
    value = claim.value if claim.kind == "figure" else None
    if checks.figures_missing(claim.text, value, claim.unit, evidence):
        _fail(claim, FIGURE_NOT_IN_SOURCE, FIGURE_NOT_QUOTED_TEXT)
        return False
    if checks.period_missing(claim.text, claim.period, evidence):
        _fail(claim, PERIOD_NOT_IN_QUOTE, PERIOD_NOT_QUOTED_TEXT)
        return False
    if checks.entity_missing(claim.text, claim.entity, evidence):
        _fail(claim, ENTITY_NOT_IN_QUOTE, ENTITY_NOT_QUOTED_TEXT)
        return False
    if checks.direction_contradicts(claim.text, evidence):
        _fail(claim, DIRECTION_CONTRADICTS_QUOTE, OPPOSITE_DIRECTION_TEXT)
        return False
    return True


def _ask_verifier(run: RunContext, items: list[tuple[int, str, list[tuple[int, str]]]]):
    """items: (id, statement, [(passage id, passage text)]). Returns verdicts by id, the
    contradictions the verifier reported, and whether a batch failed."""
    batches = [items[i : i + VERIFY_BATCH] for i in range(0, len(items), VERIFY_BATCH)]
    verdicts: dict[int, dict] = {}
    contradictions: list[dict] = []
    incomplete = False
    if not batches:
        return verdicts, contradictions, incomplete
    # Batches are independent: check them side by side (each is one LLM call).
    with ThreadPoolExecutor(max_workers=min(3, len(batches)), thread_name_prefix="verify") as pool:
        futures = [pool.submit(_verify_batch, run, batch) for batch in batches]
        for future in futures:
            try:
                found, said = future.result()
            except PhaseFailed:
                incomplete = True  # those claims stay "unverified" and say so
                continue
            verdicts.update(found)
            contradictions.extend(said)
    return verdicts, contradictions, incomplete


def _verify_batch(run: RunContext, batch) -> tuple[dict[int, dict], list[dict]]:
    """One verifier call. Each distinct passage (a quote, or a claim's text in the draft check)
    is sent once, under a reference the statements name: many claims quote one span, many
    sentences cite one claim."""
    refs: dict[tuple[int, str], str] = {}
    passages: list[dict] = []
    items = []
    for item_id, statement, cited in batch:
        names = []
        for pid, text in cited:
            key = (pid, text)
            if key not in refs:
                refs[key] = f"p{len(refs) + 1}"
                passages.append({"ref": refs[key], "source_id": pid, "text": neutralise(text[:2000])})
            names.append(refs[key])
        items.append({"claim_id": item_id, "claim": statement, "passages": list(dict.fromkeys(names))})

    def build(compact: bool) -> list[dict]:
        shown = passages
        if compact:
            shown = [dict(p, text=p["text"][:600]) for p in passages]
        payload = {"passages": shown, "claims": items}
        return [
            {"role": "system", "content": prompts.VERIFIER},
            {"role": "user", "content": "<observations>\n" + prompts.as_json(payload) + "\n</observations>"},
        ]

    data = run.structured("verifier", build, schemas.VERIFICATION, "claim_verdicts")
    wanted = {item_id for item_id, _, _ in batch}
    verdicts = {
        v["claim_id"]: {
            "verdict": v["verdict"],
            "confidence": float(v["confidence"]),
            "reason": v["reason"][:300],
        }
        for v in data["verdicts"]
        if v["claim_id"] in wanted
    }
    said = [
        {"claim_ids": list(dict.fromkeys(c["claim_ids"])), "reason": c["reason"][:300]}
        for c in data.get("contradictions", [])
        if len(set(c["claim_ids"])) >= 2
    ]
    return verdicts, said


# --------------------------------------------------------------------------- pass 2: the draft


@dataclass
class UnitVerdict:
    """The verdict on one unit of the draft: a sentence, a table cell, a heading, a judgement's
    sentence."""

    part: int  # index in the segments
    kind: str  # sentence | cell | heading | judgement
    verdict: str  # supported | partial | unsupported | no_citation | instruction_in_source | figure_mismatch | not_in_claims | superseded | unverified
    claim_ids: list[int]
    source_ids: list[int]
    confidence: float = 0.0
    detail: str = ""
    by_code: bool = False  # settled by code alone (no model call)

    @property
    def verified(self) -> bool:
        return self.verdict == "supported"

    @property
    def replaceable(self) -> bool:
        """Partly supported: the unit's claims are verified but its words go beyond them. It is
        replaced by the text of those claims or leaves the body; its extra words never stay."""
        return self.verdict in ("partial", NOT_IN_CLAIMS) and bool(self.claim_ids)


@dataclass
class DraftCheck:
    units: list[UnitVerdict]
    failed: bool = False  # the verifier could not run on the units it had to judge


def _kind(part: Segment) -> str:
    if part.heading:
        return "heading"
    if part.role == "judgement":
        return "judgement"
    return "cell" if part.cell else "sentence"


def _plan_heading(run: RunContext, text: str) -> bool:
    """A heading that is the student's question or one of the plan's sub-questions."""
    wanted = body.normalise(text).strip(" ?？:：.。")
    asked = [run.inp.question] + [sq.question for sq in run.plan.sub_questions]
    return bool(wanted) and any(body.normalise(q).strip(" ?？:：.。") == wanted for q in asked)


def check_draft(
    run: RunContext, parts: list[Segment], claims: ClaimSet, superseded: set[int] = frozenset()
) -> DraftCheck:
    """Every unit: code first (citations, figures, words, names), then the verifier for the
    sentences and body cells code let through. `superseded`: the claims of a side that lost a
    settled conflict, which the body may not state."""
    flagged = [p for f in run.registry.flags.values() for p in f.passages]
    verdicts: list[UnitVerdict] = []
    to_model: list[tuple[UnitVerdict, list[Claim]]] = []
    for n, part in enumerate(parts):
        if not part.unit or not part.claim.strip(" —–-|"):
            continue
        kind = _kind(part)
        claim_ids = part.claim_ids or part.context_claim_ids
        source_ids = part.ids or ([] if part.claim_ids else part.context_ids)
        unit = UnitVerdict(n, kind, "", claim_ids, source_ids, by_code=True)
        verdicts.append(unit)
        if instructions.repeats(part.claim, flagged):
            unit.verdict, unit.detail = INSTRUCTION, INSTRUCTION_TEXT
            continue
        if part.heading and _plan_heading(run, part.claim):
            unit.verdict, unit.detail, unit.claim_ids, unit.source_ids = "supported", PLAN_HEADING, [], []
            continue
        if not claim_ids and not source_ids:
            unit.verdict, unit.detail = NO_CITATION, NO_CITATION_TEXT
            continue
        named = [c for c in (claims.get(i) for i in claim_ids) if c is not None]
        by_source = [c for c in claims.claims if set(c.source_ids) & set(source_ids)]
        candidates = list({c.id: c for c in named + by_source}.values())
        good = [c for c in candidates if c.verified and c.id not in superseded]
        if not good:
            if candidates and all(c.reason == INSTRUCTION for c in candidates):
                unit.verdict, unit.detail = INSTRUCTION, INSTRUCTION_TEXT
            elif any(c.id in superseded for c in candidates):
                unit.verdict, unit.detail = SUPERSEDED, SUPERSEDED_TEXT
            else:
                unit.verdict = UNSUPPORTED
                unit.detail = (
                    "; ".join(dict.fromkeys(c.detail for c in candidates if c.detail))[:300]
                    or NO_CLAIM_SAYS_TEXT
                )
            continue
        good_ids = {c.id for c in good}
        unit.claim_ids = [c.id for c in named if c.id in good_ids] or [c.id for c in good]
        stated = figures.stated_figures(part.claim)
        allowed = [q for c in good for q in figures.quantities(c.text)]
        allowed += [q for c in good for q in [figures.of_claim(c.value, c.unit)] if q is not None]
        if any(not any(q.matches(a, exact=False) for a in allowed) for q in stated):
            unit.verdict, unit.detail = (
                FIGURE_MISMATCH,
                FIGURE_MISMATCH_TEXT,
            )
            continue
        if kind == "judgement":
            new = body.novel_names(part.claim, body.grounds(good) + [run.inp.question])
        else:
            new = body.novel_words(part.claim, body.grounds(good))
        if new:
            unit.verdict = NOT_IN_CLAIMS
            unit.detail = (NOT_IN_CLAIMS_TEXT + ", ".join(new))[:300]
            continue
        if kind in ("heading",) or part.role in ("header", "label", "figure_table"):
            unit.verdict = "supported"  # a title or a label: its words are its claims' words
            continue
        if any(body.same_text(part.claim, c.text) for c in good):
            unit.verdict = "supported"  # the claim's own text: verified already
            continue
        unit.by_code = False
        to_model.append((unit, good))
    failed = False
    for unit in verdicts:
        _withhold_if_obedient(run, unit, claims, parts[unit.part].claim)
    if to_model:
        answers, _, failed = _ask_verifier(
            run, [(u.part, parts[u.part].claim, [(c.id, c.text) for c in good]) for u, good in to_model]
        )
        for unit, good in to_model:
            answer = answers.get(unit.part)
            if answer is None:
                unit.verdict, unit.detail = UNVERIFIED, NO_VERDICT_TEXT
            elif answer["verdict"] == "unsupported":
                unit.verdict, unit.detail = (
                    UNSUPPORTED,
                    answer["reason"] or CLAIMS_DO_NOT_SAY_TEXT,
                )
            else:
                unit.verdict = answer["verdict"]
                if unit.verdict == "partial":
                    unit.detail = answer["reason"] or PARTLY_SUPPORTED_TEXT
                weigh = run.credibility or tier_weight
                weight = max(
                    (weigh(run.registry.get(i)) for c in good for i in c.source_ids if run.registry.get(i)),
                    default=0.0,
                )
                unit.confidence = round(
                    min(answer["confidence"], max(c.verifier_confidence for c in good)) * weight, 3
                )
            _withhold_if_obedient(run, unit, claims, parts[unit.part].claim)
    for unit in verdicts:
        if unit.claim_ids and unit.verdict in ("supported", "partial", NOT_IN_CLAIMS):
            unit.source_ids = (
                list(
                    dict.fromkeys(
                        i for c in unit.claim_ids if claims.get(c) for i in claims.get(c).source_ids
                    )
                )
                or unit.source_ids
            )
        if unit.verified and unit.by_code:
            weigh = run.credibility or tier_weight
            good = [claims.get(i) for i in unit.claim_ids if claims.get(i)]
            weight = max(
                (weigh(run.registry.get(i)) for c in good for i in c.source_ids if run.registry.get(i)),
                default=0.0,
            )
            unit.confidence = round(max((c.verifier_confidence for c in good), default=0.0) * weight, 3)
    return DraftCheck(verdicts, failed=failed)


def obeys_instructions(run: RunContext, text: str, cited: set[int] = frozenset()) -> bool:
    """Text that failed its check and cites a source with instructions in it, or repeats any part
    of such a source, is presumed to obey them: it is shown nowhere, "not verified" included."""
    if any(run.registry.flagged(i) for i in cited):
        return True
    flagged = [run.registry.get(i) for i, f in run.registry.flags.items() if f]
    return instructions.repeats(text, [s.text or s.snippet for s in flagged if s is not None])


def _withhold_if_obedient(run: RunContext, unit: UnitVerdict, claims: ClaimSet, text: str) -> None:
    if unit.verified or unit.verdict in ("", INSTRUCTION):
        return
    cited = set(unit.source_ids) | {
        i for c in unit.claim_ids if claims.get(c) for i in claims.get(c).source_ids
    }
    if obeys_instructions(run, text, cited):
        unit.verdict, unit.detail = INSTRUCTION, INSTRUCTION_TEXT
