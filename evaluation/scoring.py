"""Scores of one answer against its item, judged by entailment (ALCE-style).

- citation recall: share of the claims shown to the reader whose cited passages entail them
  (a claim without a citation counts as not entailed);
- citation precision: share of citations that are relevant — a citation is irrelevant when it
  does not entail its claim alone and the claim's other citations entail it without it (and
  every citation of a claim its passages do not entail is irrelevant);
- expected-fact recall: share of the item's expected facts the answer entails;
- conflict disclosure: share of the item's known conflicts whose two sides the answer reports."""

from __future__ import annotations

import re

from agent.engine.answer import MARKER
from research.models import ResearchTask
from research.presentation import report_markdown_sections
from research.selectors import passages_by_number

from .dataset import Item
from .judge import Judge


def plain(answer: str) -> str:
    return re.sub(r"\s+", " ", MARKER.sub("", answer or "")).strip()


def _mean(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def score(task: ResearchTask, item: Item, judge: Judge) -> dict:
    claims = [c for c in task.claims.order_by("index") if c.action != "dropped"]
    passages = passages_by_number(task)
    cited = {c.index: [passages[n] for n in c.citations if n in passages] for c in claims}
    recall = judge.entails([(c.text, cited[c.index]) for c in claims])

    alone_pairs, rest_pairs, keys = [], [], []
    for claim, entailed in zip(claims, recall):
        for n in claim.citations:
            if n not in passages:
                continue
            others = [passages[m] for m in claim.citations if m != n and m in passages]
            keys.append((entailed, bool(others)))
            alone_pairs.append((claim.text, [passages[n]]))
            rest_pairs.append((claim.text, others))
    alone = judge.entails(alone_pairs)
    rest = judge.entails(rest_pairs)
    relevant = [bool(entailed and (a or not (has_others and r))) for (entailed, has_others), a, r in zip(keys, alone, rest)]

    # The whole report as the reader sees it: conflicts and counter-evidence are sections of the
    # report, not of the stored body text.
    report = "\n".join(report_markdown_sections(task.report_json)) if (task.report_json or {}).get("schema_version") else task.final_answer
    answer = [plain(report)]
    facts = judge.entails([(fact, answer) for fact in item.expected_facts])
    disclosures = judge.entails(
        [(f"On {c['topic']}, the answer reports both that {c['sides'][0]} and that {c['sides'][1]}.", answer) for c in item.known_conflicts]
    )
    return {
        "task_uuid": str(task.task_uuid),
        "status": task.status,
        "claims": len(claims),
        "citation_recall": _mean(recall),
        "citation_precision": _mean(relevant),
        "expected_fact_recall": _mean(facts),
        "conflict_disclosure": _mean(disclosures),
        "tokens": task.tokens_used,
        "cost_usd": float(task.cost_usd),
        "duration_seconds": task.duration_seconds,
    }
