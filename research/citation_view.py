"""The numbered source list under an answer (templates/research/_citations.html), for a research's
report and an ordinary chat answer alike: only http(s) links and this site's pages, a label for an
untitled source, and, for a report, every span its facts quote, highlighted inside the passage the
research read, with a link that opens a course material at that place."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.utils.translation import gettext as _

from agent.engine import vocabulary as V
from agent.engine.report_types import Report, Source, Span
from research.models import ResearchTask
from research.vocabulary_labels import text as label

# How many characters of the passage the page shows on each side of a quote.
QUOTE_CONTEXT = 220


@dataclass
class QuoteView:
    """One span inside its passage: the words around it when the passage is known."""

    text: str
    span_id: str = ""
    page: str = ""
    before: str = ""
    after: str = ""
    before_is_start: bool = False  # the passage starts where `before` starts (no "…")
    after_is_end: bool = False
    url: str = ""  # the cited material opened at that place, the quote highlighted
    language: str = ""


@dataclass
class CitationView:
    number: int
    anchor: str
    title: str
    url: str
    source_tool: str
    snippet: str
    locator: str
    internal: bool
    tier: str = ""
    flagged: bool = False
    quotes: list[QuoteView] = field(default_factory=list)


def safe_link(url: str) -> str:
    """http(s) addresses, and this site's own pages (a course material: "/channels/…")."""
    if url.lower().startswith(("http://", "https://")):
        return url
    return url if url.startswith("/") and not url.startswith("//") and "\\" not in url else ""


def quote_link(url: str, quote: str, internal: bool) -> str:
    """A course material's page opened at the quote: the page highlights `quote` (?quote=)."""
    if not (internal and url.startswith("/") and quote):
        return ""
    base, _sep, fragment = url.partition("#")
    return f"{base}?{urlencode({'quote': quote[:400]})}" + (f"#{fragment}" if fragment else "")


class Passages:
    """The stored text of every source a research observed (its steps' results): what a span's
    character offsets point into. Looked up by (url, title), else by a url only one passage has."""

    def __init__(self, task: ResearchTask | None):
        self.by_key: dict[tuple[str, str], str] = {}
        by_url: dict[str, list[str]] = {}
        steps = task.steps.exclude(result_full=None).values_list("result_full", flat=True) if task else []
        for full in steps:
            for source in (full or {}).get("sources") or []:
                if not isinstance(source, dict):
                    continue
                url, title = str(source.get("url") or ""), str(source.get("title") or "")
                text = str(source.get("text") or source.get("snippet") or "")
                if (url, title) not in self.by_key:
                    self.by_key[(url, title)] = text
                    by_url.setdefault(url, []).append(text)
        self.by_url = {url: texts[0] for url, texts in by_url.items() if url and len(set(texts)) == 1}

    def of(self, source: Source) -> str:
        return self.text(source.url, source.title)

    def text(self, url: str, title: str) -> str:
        return self.by_key.get((url, title)) or self.by_url.get(url, "")


def place(span: Span, passage: str) -> QuoteView:
    """The span inside its passage: at its offsets when they still point at it, else where its
    text is found, else the span alone."""
    view = QuoteView(text=span.text, span_id=span.id, page=span.location.page, language=span.language)
    start, end = span.location.start, span.location.end
    if not (0 <= start < end <= len(passage)) or passage[start:end] != span.text:
        start = passage.find(span.text) if span.text else -1
        end = start + len(span.text)
    if start < 0:
        return view
    view.before = passage[max(0, start - QUOTE_CONTEXT) : start]
    view.after = passage[end : end + QUOTE_CONTEXT]
    view.before_is_start = start <= QUOTE_CONTEXT
    view.after_is_end = end + QUOTE_CONTEXT >= len(passage)
    return view


def report_citations(
    report: Report, anchor: str, passages: Passages, *, cited: bool = True
) -> list[CitationView]:
    """The report's sources (`cited`: those a fact rests on; else the others it consulted), each
    with the spans its shown facts quote, in their passage. A flagged source shows no passage."""
    quoted: dict[int, list[Span]] = {}
    for fact in report.facts:
        for span in report.fact_spans(fact):
            if span not in quoted.setdefault(span.source, []):
                quoted[span.source].append(span)
    views = []
    for source in sorted(report.sources, key=lambda s: s.number):
        if bool(source.cited) != cited:
            continue
        url = safe_link(source.url)
        view = CitationView(
            number=source.number,
            anchor=f"{anchor}-{source.number}",
            title=source.title or _("(untitled source)"),
            url=url,
            source_tool=source.tool,
            snippet="",
            locator=source.locator,
            internal=source.origin == "internal",
            tier=label(V.TIERS, source.tier),
            flagged=source.flagged,
        )
        if not source.flagged:
            passage = passages.of(source)
            for span in sorted(quoted.get(source.number, []), key=lambda s: s.location.start):
                quote = place(span, passage)
                quote.url = quote_link(url, span.text, view.internal)
                view.quotes.append(quote)
        views.append(view)
    return views


def citation_views(raw_citations, anchor: str) -> list[CitationView]:
    """An ordinary chat answer's stored sources as the page lists them (its excerpt, no quote)."""
    citations = []
    for raw in raw_citations or []:
        try:
            number = int(raw.get("number"))
        except (TypeError, ValueError, AttributeError):
            continue
        citations.append(
            CitationView(
                number=number,
                anchor=f"{anchor}-{number}",
                title=str(raw.get("title") or _("(untitled source)")),
                url=safe_link(str(raw.get("url") or "")),
                source_tool=str(raw.get("source_tool") or ""),
                snippet=str(raw.get("snippet") or ""),
                locator=str(raw.get("locator") or ""),
                internal=raw.get("origin") == "internal",
            )
        )
    return citations
