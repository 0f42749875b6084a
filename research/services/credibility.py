"""Source weights from history.

For each web domain and each tool we count citations that passed or failed verification and
readers' "this source does not say this" reports. The weight is the tier's base weight times a
history factor from a Beta prior — (passed + 4) / (passed + failed + 2·reports + 5), divided by
the prior mean 0.8 — so a new source starts at its tier's weight and is neither punished nor
rewarded for being new, and each failure moves it down more than a success moves it up.
Admins can pin a domain: "allow" gives it full weight, "deny" keeps it out of every research."""

from __future__ import annotations

from urllib.parse import urlparse

from django.db import IntegrityError, connection, transaction
from django.db.models import F

from agent.engine import ResearchResult
from agent.engine.types import Source, tier_weight
from research.models import AnswerFeedback, ResearchTask, SourceStat

PRIOR_PASSED, PRIOR_FAILED = 4, 1
PRIOR_MEAN = PRIOR_PASSED / (PRIOR_PASSED + PRIOR_FAILED)
REPORT_WEIGHT = 2
FACTOR_RANGE = (0.2, 1.2)


def domain_of(url: str) -> str:
    host = (urlparse(url or "").hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def history_factor(passed: int, failed: int, reports: int) -> float:
    value = (passed + PRIOR_PASSED) / (
        passed + failed + REPORT_WEIGHT * reports + PRIOR_PASSED + PRIOR_FAILED
    )
    low, high = FACTOR_RANGE
    return min(high, max(low, value / PRIOR_MEAN))


def weight_of(tier: str, tool_stat: SourceStat | None, domain_stat: SourceStat | None) -> float:
    if domain_stat is not None and domain_stat.pinned == SourceStat.Pin.ALLOW:
        return 1.0
    weight = tier_weight(Source(title="", snippet="", tier=tier))
    for stat in (tool_stat, domain_stat):
        if stat is not None:
            weight *= history_factor(stat.passed, stat.failed, stat.reports)
    return round(min(1.0, weight), 4)


def weigher():
    """A credibility function for one research, over a snapshot of the statistics (read once)."""
    snapshot: dict[tuple[str, str], SourceStat] | None = None

    def weigh(source: Source) -> float:
        nonlocal snapshot
        if snapshot is None:
            snapshot = {(s.kind, s.key): s for s in SourceStat.objects.all()}
        domain = domain_of(source.url) if source.url.startswith("http") else ""
        return weight_of(
            source.tier,
            snapshot.get(("tool", source.source_tool)),
            snapshot.get(("domain", domain)) if domain else None,
        )

    return weigh


def denied_domains() -> tuple[str, ...]:
    return tuple(
        SourceStat.objects.filter(kind=SourceStat.Kind.DOMAIN, pinned=SourceStat.Pin.DENY).values_list(
            "key", flat=True
        )
    )


def _bump(kind: str, key: str, field: str, amount: int = 1) -> None:
    if not key:
        return
    updated = SourceStat.objects.filter(kind=kind, key=key).update(**{field: F(field) + amount})
    if not updated:
        try:
            with transaction.atomic():
                SourceStat.objects.create(kind=kind, key=key, **{field: amount})
        except IntegrityError:  # created meanwhile by another task
            SourceStat.objects.filter(kind=kind, key=key).update(**{field: F(field) + amount})


def _keys(citation: dict) -> list[tuple[str, str]]:
    keys = [(SourceStat.Kind.TOOL, citation.get("source_tool", ""))]
    if (citation.get("url") or "").startswith("http"):
        keys.append((SourceStat.Kind.DOMAIN, domain_of(citation["url"])))
    return keys


def record_verdicts(task: ResearchTask, result: ResearchResult) -> None:
    """Count each source as passed or failed, in one upsert for the whole task: each fact is a
    passage the source holds and the research stood on (passed); a source holding passages that
    address the model fails once (verification["evidence"], agent/engine/assemble.py)."""
    counts: dict[tuple[str, str], list[int]] = {}

    def count(verdict: str, sources) -> None:
        field = {"supported": 0, "partial": 0, "unsupported": 1}.get(verdict)
        if field is None:
            return
        for source in sources:
            for kind, key in _keys(source):
                if key:
                    counts.setdefault((kind, key), [0, 0])[field] += 1

    for item in result.verification.get("evidence", []):
        count(item["verdict"], item.get("sources", []))
    if not counts:
        return
    rows = [(kind, key, passed, failed) for (kind, key), (passed, failed) in sorted(counts.items())]
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO deep_research_source_stats (kind, key, passed, failed, reports, pinned, updated_at) VALUES "
            + ", ".join(["(%s, %s, %s, %s, 0, '', now())"] * len(rows))
            + " ON CONFLICT (kind, key) DO UPDATE SET passed = deep_research_source_stats.passed + EXCLUDED.passed,"
            " failed = deep_research_source_stats.failed + EXCLUDED.failed, updated_at = now()",
            [value for row in rows for value in row],
        )


def record_report(feedback: AnswerFeedback) -> None:
    """A reader says a cited source does not say what the answer claims. Only distinct readers
    move a source: a reader's first report of a domain or tool counts, any later one (the same
    citation again, or another answer citing the same source) does not."""
    if feedback.reason != AnswerFeedback.Reason.SOURCE_DOES_NOT_SAY or not feedback.citation_number:
        return
    citation = next(
        (c for c in feedback.task.citations_json or [] if c.get("number") == feedback.citation_number), None
    )
    if citation:
        for kind, key in _keys(citation):
            if key and _first_report(kind, key, feedback.user_id):
                _bump(kind, key, "reports")


def _first_report(kind: str, key: str, user_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO deep_research_source_reports (kind, key, user_id, created_at) VALUES (%s, %s, %s, now())"
            " ON CONFLICT (kind, key, user_id) DO NOTHING",
            [kind, key, user_id],
        )
        return cursor.rowcount == 1
