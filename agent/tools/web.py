"""Web tools (tier "web"): web_search and fetch_url. Offered only in channels whose teacher
switched web tools on (needs_web=True; the registry filters by ctx.web_tools_enabled), and both
honour the channel's allowed/denied domains."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from agent.connectors import webfetch, websearch
from agent.connectors.http import ExternalServiceError
from agent.engine.boundaries import host_permitted
from agent.engine.types import Source, ToolResult

from . import REGISTRY
from .registry import ToolContext
from .snippets import TEXT_CHARS, clip

MAX_RESULTS = 10
# A PDF is returned page by page (each page its own citable source); this many pages per call,
# `first_page` chooses where the window starts.
PDF_PAGES_PER_CALL = 8


@REGISTRY.tool(tier="web", search=True, exact_figures=False, needs_web=True)
def web_search(ctx: ToolContext, query: str, limit: int = 8) -> ToolResult:
    """Search the public web. Returns titles, links and short extracts; open a promising page with
    fetch_url before relying on it. Web pages are the least trusted kind of source.

    Args:
        query: search words
        limit: how many results to return (1-10)
    """
    if not query.strip():
        return ToolResult(error="give search words")

    def permitted(hit: websearch.Hit) -> bool:
        return host_permitted(hit.host, ctx.allowed_domains, ctx.denied_domains)

    try:
        hits = websearch.search(query.strip(), limit=max(1, min(MAX_RESULTS, limit)), keep=permitted)
    except ExternalServiceError as exc:
        return ToolResult(error=str(exc))
    sources = [
        Source(
            title=hit.title,
            snippet=clip(hit.snippet) or hit.url,
            text=hit.snippet[:TEXT_CHARS],
            tier="web",
            url=hit.url,
            locator=hit.host,
            meta={"external": True, "engine": hit.engine, "published": hit.published},
        )
        for hit in hits
    ]
    return ToolResult(sources=sources, data={"results": [{"title": h.title, "url": h.url} for h in hits]})


@REGISTRY.tool(tier="web", search=False, exact_figures=False, needs_web=True, observed_url_params=("url",))
def fetch_url(ctx: ToolContext, url: str, first_page: int = 1) -> ToolResult:
    """Read one public web page or PDF (http or https) as clean text: the main content without
    menus and ads. A PDF comes back page by page, each page citable on its own, 8 pages per call.
    Pages on private networks, non-web schemes and very large bodies are refused.

    Args:
        url: the page's full address, starting with http:// or https://
        first_page: for a PDF, the first page to read (1 = from the start); ignored for web pages
    """
    try:
        page = webfetch.fetch_page(
            url, allowed_domains=ctx.allowed_domains, denied_domains=ctx.denied_domains
        )
    except ExternalServiceError as exc:
        return ToolResult(error=str(exc))
    if page.pages:
        return _pdf_result(page, max(1, first_page))
    if not page.text:
        return ToolResult(error=f"{page.url} has no readable text")
    source = Source(
        title=page.title,
        snippet=clip(page.text),
        text=page.text[:TEXT_CHARS]
        + ("\n[…the page is longer; it was cut at the size limit]" if page.truncated else ""),
        tier="web",
        url=page.url,
        locator=urlsplit(page.url).hostname or "",
        meta={
            "external": True,
            "content_type": page.content_type,
            "truncated": page.truncated,
            "redirects": page.redirects,
        },
    )
    return ToolResult(
        sources=[source],
        data={
            "url": page.url,
            "title": page.title,
            "chars": len(page.text),
            "truncated": page.truncated,
            "redirects": page.redirects,
        },
    )


def _pdf_result(page: webfetch.Page, first_page: int) -> ToolResult:
    """One source per PDF page with text, cited as "<file> p. N" and linked to that page (#page=N
    is the PDF open parameter browsers follow)."""
    path = urlsplit(page.url).path
    file_name = unquote(path.rsplit("/", 1)[-1]) or (urlsplit(page.url).hostname or "document.pdf")
    title = page.title if page.title and page.title != urlsplit(page.url).hostname else file_name
    window = range(first_page, min(len(page.pages), first_page + PDF_PAGES_PER_CALL - 1) + 1)
    sources = [
        Source(
            title=title,
            snippet=clip(page.pages[number - 1]),
            text=page.pages[number - 1][:TEXT_CHARS],
            tier="web",
            url=f"{page.url.split('#', 1)[0]}#page={number}",
            locator=f"{file_name} p. {number}",
            meta={
                "external": True,
                "content_type": "application/pdf",
                "page": number,
                "redirects": page.redirects,
            },
        )
        for number in window
        if page.pages[number - 1].strip()
    ]
    if not sources:
        if first_page > page.page_count:
            return ToolResult(
                error=f"{page.url} has {page.page_count} pages; page {first_page} is past the end"
            )
        if first_page > len(page.pages):
            return ToolResult(error=f"{page.url}: pages after {len(page.pages)} are past the text size limit")
        return ToolResult(
            error=f"{page.url} has no extractable text on pages {first_page}-{window.stop - 1} (a scanned PDF?)"
        )
    return ToolResult(
        sources=sources,
        data={
            "url": page.url,
            "title": title,
            "pages": page.page_count,
            "pages_read": [window.start, window.stop - 1],
            "truncated": page.truncated,
            "redirects": page.redirects,
        },
    )
