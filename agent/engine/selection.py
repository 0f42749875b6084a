"""Selection: the model points at spans, code makes them facts.

For each target (each of the plan's sub-questions, or the question as a whole when the plan has
one sub-question or fell back), the candidates are the unflagged spans of the observed sources,
ranked by `spans.rank` against the target and the question, as many as fit a 4,096-token window
(or the server's smaller one), shown as `[id] text`. One structured call per target (role
`selector`, run side by side within the run's budgets) answers with span ids only: its schema's
ids are an enum of that call's candidates. Code then checks every answer: each id exists and was a
candidate of its call, a fact is one to three adjacent spans of one source (a longer or broken run
is split into its adjacent runs), a span flagged as addressing the model is never a fact, a span
already stated by an earlier fact is not stated twice; contradictions must join two facts.

When the model selects nothing usable for a target (the call failed, was cut off, came back
empty or all invalid, or did not fit the time or tokens left), code takes the best spans by rank
that have any relevance (`selected_by: search_ranking`), and the report says so. So a weak
model, or a server that only fills the schema, still yields a report of located spans."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from . import prompts, schemas, spans
from .errors import Cancelled, OutOfBudget, PhaseFailed
from .llm import MIN_ANSWER_TOKENS, TEMPLATE_MARGIN_TOKENS, text_tokens
from .report_types import MAX_SPANS_PER_FACT
from .sources import neutralise
from .state import RunContext

# The window the selection prompt is sized for, whatever larger window a server has: a small
# local model must be able to run it, and a research pays for every candidate it shows.
SELECTION_WINDOW = 4_096
# The most of the selection window the header (channel, agreed context, conversation, question,
# sub-question, hypotheses) may take, as a divisor: the candidates need the rest.
HEADER_SHARE = 4
MAX_CANDIDATES = 10
# Spans the search ranking contributes for a target the model gave nothing usable for.
FALLBACK_FACTS = 3
# The fewest facts a first round states when its sources hold that many on the subject.
MIN_FACTS = 3
MAX_PARALLEL_CALLS = 3
# What a source's <source …> tag around its spans costs (its title is at most 200 characters).
SOURCE_TAG_TOKENS = 90
SHORT_TAG_TOKENS = 12  # <source id="…"> … </source> again
WHOLE_QUESTION = -1
# The words of the plan's own fields (schemas.PLAN): a sub-question made only of these asks nothing.
_PLAN_FIELD_TERMS = frozenset(
    spans.terms("complexity sub questions question suggested tools hypotheses rationale asks for judgement")
)


@dataclass
class Picked:
    """A fact as the engine holds it: one to three adjacent spans of one source (registry id)."""

    id: int
    spans: list[str]
    source_id: int
    sub_question: int
    selected_by: str  # vocabulary.SELECTED_BY
    found_by: str  # evidence | counter_search | conflict
    stances: list[tuple[int, str]] = field(default_factory=list)  # (hypothesis index, for|against)


@dataclass
class Dropped:
    """Something the report lists as not shown (vocabulary NOT_SHOWN_KINDS / _REASONS)."""

    kind: str
    reason: str
    span: str = ""
    index: int | None = None


@dataclass
class Target:
    index: int  # plan.sub_questions index, or WHOLE_QUESTION
    text: str


@dataclass
class Round:
    """What one selection round found."""

    facts: list[Picked] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    contradictions: list[tuple[str, str]] = field(default_factory=list)
    limitations: list[dict] = field(default_factory=list)
    calls: int = 0
    by_ranking: int = 0  # targets whose facts the search ranking chose
    sources: int = 0  # sources whose spans were candidates


def targets(run: RunContext, plan_fallback: bool) -> list[Target]:
    """The plan's sub-questions, each asked once: one that asks nothing (no term but the plan's
    own field names: a weak model writes "question" into every field) or asks what an earlier
    one asks (the same terms) is not a target of its own. Fewer than two left: the question as
    a whole."""
    chosen: list[Target] = []
    asked: list[frozenset[str]] = []
    for i, sq in enumerate(run.plan.sub_questions):
        wanted = frozenset(spans.query_terms(sq.question) - _PLAN_FIELD_TERMS)
        if wanted and wanted not in asked:
            chosen.append(Target(i, sq.question))
            asked.append(wanted)
    if plan_fallback or len(chosen) <= 1:
        return [Target(WHOLE_QUESTION, run.inp.question)]
    return chosen


def _ranked(cuts: list, query: str, scores: dict[int, float]) -> list[tuple]:
    """(cut, relevant) best first (the query's terms, then the tools' retrieval scores):
    `relevant` when the span shares a term with the query, the only spans the search ranking's
    fallback takes. A span whose words an earlier one already has (two overlapping passages of
    one page) is left out: it would only state the same thing twice."""
    wanted = spans.query_terms(query)
    seen: set[str] = set()
    out = []
    for c, _ in spans.scored(cuts, query, score=scores):
        words = " ".join(c.text.split())
        if words in seen:
            continue
        seen.add(words)
        out.append((c, bool(wanted & spans.terms(c.text))))
    return out


def _hypotheses(run: RunContext) -> list[int]:
    """The plan's hypotheses (their indexes) a span may be tagged for, shown to the model as
    1, 2, …: not one that says nothing but the plan's field names, nor one that says what an
    earlier one says."""
    numbers: list[int] = []
    said: list[frozenset[str]] = []
    for n, text in enumerate(run.plan.hypotheses):
        claims = frozenset(spans.query_terms(text) - _PLAN_FIELD_TERMS)
        if claims and claims not in said:
            numbers.append(n)
            said.append(claims)
    return numbers


def _system(run: RunContext) -> str:
    return prompts.SELECTOR.format(tagging=prompts.SELECTOR_TAGGING if _hypotheses(run) else "")


def _ask_line(target: Target) -> str:
    about = "the student's question" if target.index == WHOLE_QUESTION else f"sub-question {target.index + 1}"
    return prompts.SELECTOR_ASK.format(target=about)


def _header(run: RunContext, target: Target) -> str:
    lines = [f"Student's question:\n{run.inp.question}", ""]
    if target.index == WHOLE_QUESTION:
        lines.append("Sub-question: the question as a whole")
    else:
        lines.append(f"Sub-question {target.index + 1}: {target.text}")
    shown = _hypotheses(run)
    if shown:
        lines += ["", "Hypotheses:"] + [
            f"{k}. {run.plan.hypotheses[n]}" for k, n in enumerate(shown, start=1)
        ]
    header = run.channel_context() + "\n".join(lines)
    if run.inp.conversation and text_tokens(header) > _window(run) // HEADER_SHARE:
        # A follow-up's earlier conversation (a whole earlier report) would leave no room for the
        # candidates; the plan's sub-questions already say what this research asks.
        header = run.channel_context(conversation=False) + "\n".join(lines)
    return header


def _line(cut) -> str:
    """About what the span's line costs in the prompt (index.render writes the real one)."""
    return f"[{cut.id}] {neutralise(' '.join(cut.text.split()))}"


def _window(run: RunContext) -> int:
    known = run.llm.context_window("selector")
    return min(known, SELECTION_WINDOW) if known else SELECTION_WINDOW


def fit_candidates(run: RunContext, target: Target, ranked: list[tuple]) -> list:
    """As many of the ranked spans as fit the selection window with the instructions, the header,
    the schema (it may travel in the prompt) and the answer's room."""
    window = _window(run)
    answer = max(MIN_ANSWER_TOKENS, min(run.llm.answer_budget("selector"), window // 3))
    schema_base = text_tokens(str(schemas.selection([], len(_hypotheses(run)))))
    room = (
        window
        - answer
        - TEMPLATE_MARGIN_TOKENS
        - text_tokens(_system(run))
        - text_tokens(_header(run, target))
        - text_tokens(_ask_line(target))
        - schema_base
        - 64  # the observation tags and message framing
    )
    chosen = []
    tagged: set[int] = set()
    for cut, _relevant in ranked[:MAX_CANDIDATES]:
        # Its line in the prompt, and its id in the schema; a source's tag the first time one of
        # its spans is shown, a short one when its spans come back after another source's.
        cost = text_tokens(_line(cut)) + text_tokens(f'"{cut.id}", ') + 2
        if cut.source_id not in tagged:
            cost += SOURCE_TAG_TOKENS
        elif chosen and chosen[-1].source_id != cut.source_id:
            cost += SHORT_TAG_TOKENS
        if cost > room:
            continue  # a long span does not fit; a shorter one may
        chosen.append(cut)
        tagged.add(cut.source_id)
        room -= cost
    return chosen


def select(
    run: RunContext,
    index,
    *,
    source_ids: list[int],
    plan_fallback: bool,
    first_id: int,
    already: set[str],
) -> Round:
    """One selection round over the spans of `source_ids` (the whole registry, or the sources a
    conflict's re-search found). `already`: spans earlier facts state."""
    found = Round()
    pool = [c for sid in dict.fromkeys(source_ids) for c in index.of_source(sid) if not c.flagged]
    found.sources = len({c.source_id for c in pool})
    if not pool:
        return found
    wanted = targets(run, plan_fallback)
    scores = index.scores()
    ranked = {t.index: _ranked(pool, f"{t.text}\n{run.inp.question}", scores) for t in wanted}
    offered = {t.index: fit_candidates(run, t, ranked[t.index]) for t in wanted}
    answers: dict[int, dict | Exception | None] = {t.index: None for t in wanted}
    asked = [t for t in wanted if offered[t.index]]
    if asked:
        with ThreadPoolExecutor(
            max_workers=min(MAX_PARALLEL_CALLS, len(asked)), thread_name_prefix="select"
        ) as pool_:
            futures = {t.index: pool_.submit(_ask, run, index, t, offered[t.index]) for t in asked}
            for t in asked:
                try:
                    answers[t.index] = futures[t.index].result()
                except Cancelled:
                    raise
                except PhaseFailed as exc:  # OutOfBudget included
                    answers[t.index] = exc
        found.calls = len(asked)
    failed: list[str] = []
    skipped = 0
    by_ranking: set[int] = set()  # targets the search ranking chose facts for
    next_id = first_id
    used = set(already)
    for t in wanted:
        answer = answers[t.index]
        facts: list[Picked] = []
        usable = 0
        if isinstance(answer, dict):
            facts, dropped, said, usable = _check(run, index, t, answer, offered[t.index], used, next_id)
            found.dropped += dropped
            found.contradictions += said
        elif isinstance(answer, OutOfBudget):
            skipped += 1
        elif isinstance(answer, PhaseFailed):
            cause = answer.cause
            failed.append(getattr(cause, "kind", "error"))
        if not usable:
            # Nothing usable (a model that chose only spans other facts already state did choose).
            facts = _by_ranking(run, t, ranked[t.index], used, next_id)
            if facts:
                by_ranking.add(t.index)
        for fact in facts:
            used.update(fact.spans)
        next_id += len(facts)
        found.facts += facts
    # A first round states at least MIN_FACTS facts when its sources hold that many on the
    # subject: what the model chose is kept, and the search ranking adds its best spans not
    # stated yet, a target at a time (labelled as its choice).
    short = 0 if already else MIN_FACTS - len(found.facts)
    while short > 0:
        before = short
        for t in wanted:
            facts = _by_ranking(run, t, ranked[t.index], used, next_id, limit=1) if short else []
            if facts:
                by_ranking.add(t.index)
                found.facts += facts
                next_id += 1
                short -= 1
        if short == before:
            break  # nothing on the subject is left to state
    found.by_ranking = len(by_ranking)
    if failed:
        found.limitations.append(
            {"code": "selection_failed", "detail": {"kind": failed[0], "calls": len(failed)}}
        )
    if skipped:
        found.limitations.append({"code": "selection_not_run", "detail": {"sub_questions": skipped}})
    if found.by_ranking:
        found.limitations.append(
            {"code": "selected_by_search_ranking", "detail": {"sub_questions": found.by_ranking}}
        )
    return found


def _ask(run: RunContext, index, target: Target, candidates: list) -> dict:
    ids = [c.id for c in candidates]
    schema = schemas.selection(ids, len(_hypotheses(run)))

    def build(compact: bool) -> list[dict]:
        shown = candidates[: max(1, len(candidates) * 2 // 3)] if compact else candidates
        return [
            {"role": "system", "content": _system(run)},
            {
                "role": "user",
                "content": f"{_header(run, target)}\n\n{index.render(shown)}\n\n{_ask_line(target)}",
            },
        ]

    return run.structured("selector", build, schema, "span_selection")


def runs_of(index, ids: list[str]) -> list[list[str]]:
    """The ids grouped into runs of adjacent spans of one source (each at most three long), in
    the order the ids were given."""
    groups: dict[int, list] = {}
    for span_id in ids:
        cut = index.get(span_id)
        groups.setdefault(cut.source_id, []).append(cut)
    runs: list[list[str]] = []
    for cuts in groups.values():
        cuts.sort(key=lambda c: c.n)
        current: list = []
        for cut in cuts:
            if current and (cut.n != current[-1].n + 1 or len(current) == MAX_SPANS_PER_FACT):
                runs.append([c.id for c in current])
                current = []
            current.append(cut)
        if current:
            runs.append([c.id for c in current])
    return runs


def _check(
    run: RunContext, index, target: Target, answer: dict, candidates: list, used: set[str], first_id: int
):
    """The model's answer for one target, checked by code: (facts, not shown, contradictions, the
    number of valid spans it chose, stated already or not)."""
    offered = {c.id for c in candidates}
    hypotheses = _hypotheses(run)
    facts: list[Picked] = []
    dropped: list[Dropped] = []
    usable = 0
    for n, item in enumerate(answer.get("facts") or []):
        good = []
        for span_id in dict.fromkeys(str(i) for i in item.get("span_ids") or []):
            cut = index.get(span_id)
            if cut is None:
                dropped.append(Dropped("selection", "unknown_span", span_id, n))
            elif cut.flagged:
                dropped.append(Dropped("span", "instruction_in_source", span_id, n))
            elif span_id not in offered:
                dropped.append(Dropped("selection", "not_a_candidate", span_id, n))
            else:
                usable += 1
                if span_id not in used:
                    good.append(span_id)
        stance = item.get("stance")
        h = item.get("hypothesis") or 0
        shown = stance in ("for", "against") and 1 <= h <= len(hypotheses)
        tags = [(hypotheses[h - 1], stance)] if shown else []
        for ids in runs_of(index, good):
            cut = index.get(ids[0])
            facts.append(
                Picked(
                    id=first_id + len(facts),
                    spans=ids,
                    source_id=cut.source_id,
                    sub_question=target.index,
                    selected_by="model",
                    found_by=run.registry.found_by.get(cut.source_id, "evidence"),
                    stances=list(tags),
                )
            )
            used.update(ids)
    said = []
    for n, pair in enumerate(answer.get("contradictions") or []):
        ids = [str(i) for i in pair.get("span_ids") or []]
        unknown = [i for i in ids if index.get(i) is None]
        elsewhere = [i for i in ids if i not in unknown and i not in offered]
        if unknown:
            dropped.append(Dropped("contradiction", "unknown_span", unknown[0], n))
        elif elsewhere:
            dropped.append(Dropped("contradiction", "not_a_candidate", elsewhere[0], n))
        elif len(set(ids)) != 2:
            dropped.append(Dropped("contradiction", "no_spans", ids[0] if ids else "", n))
        else:
            said.append((ids[0], ids[1]))  # both must turn out to be facts (contradicting_facts)
    return facts, dropped, said, usable


def contradicting_facts(
    said: list[tuple[str, str]], facts: list[Picked]
) -> tuple[list[tuple[int, int]], list[Dropped]]:
    """The model's contradictions between two facts of different sources; a pair naming a span
    that is no fact is listed as not shown."""
    of_span = {s: f for f in facts for s in f.spans}
    pairs, dropped = [], []
    for n, (a, b) in enumerate(said):
        fa, fb = of_span.get(a), of_span.get(b)
        if fa is None or fb is None:
            dropped.append(Dropped("contradiction", "no_spans", a if fa is None else b, n))
        elif fa.id != fb.id and fa.source_id != fb.source_id:
            pairs.append((fa.id, fb.id))
    return list(dict.fromkeys(pairs)), dropped


def _by_ranking(
    run: RunContext,
    target: Target,
    ranked: list[tuple],
    used: set[str],
    first_id: int,
    limit: int = FALLBACK_FACTS,
) -> list[Picked]:
    """The best-ranked spans on the subject (sharing a term with the target) not stated yet, at
    most `limit`, each a fact of its own chosen by the search ranking; `used` grows with them."""
    facts = []
    for cut, relevant in ranked:
        if len(facts) >= limit:
            break
        if not relevant:
            continue
        if cut.id in used:
            continue
        facts.append(
            Picked(
                id=first_id + len(facts),
                spans=[cut.id],
                source_id=cut.source_id,
                sub_question=target.index,
                selected_by="search_ranking",
                found_by=run.registry.found_by.get(cut.source_id, "evidence"),
            )
        )
        used.add(cut.id)
    return facts
