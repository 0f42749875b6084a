"""Web search through the configured provider. SearxNG (self-hostable, JSON API) is the one
provider today; WEB_SEARCH_PROVIDER names it so another can be added beside it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from .http import ExternalServiceError, get_json


@dataclass
class Hit:
    title: str
    url: str
    snippet: str
    engine: str = ""
    published: str = ""

    @property
    def host(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()


def _searxng(query: str, limit: int, keep: Callable[[Hit], bool]) -> list[Hit]:
    if not settings.SEARXNG_URL:
        raise ExternalServiceError("web search is not configured on this server (SEARXNG_URL is empty)")
    data = get_json(
        service="SearxNG",
        url=f"{settings.SEARXNG_URL}/search",
        # SearxNG answers JSON only when the instance enables the json format (settings.yml).
        params={"q": query, "format": "json", "safesearch": 1, "pageno": 1},
    )
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ExternalServiceError("SearxNG sent an unexpected response (no results list)")
    hits: list[Hit] = []
    seen: set[str] = set()
    for item in data["results"]:
        url = str((item or {}).get("url") or "")
        if urlsplit(url).scheme not in ("http", "https") or url in seen:
            continue
        seen.add(url)
        hit = Hit(
            title=str(item.get("title") or url)[:300],
            url=url,
            snippet=str(item.get("content") or ""),
            engine=str(item.get("engine") or ""),
            published=str(item.get("publishedDate") or ""),
        )
        if keep(hit):
            hits.append(hit)
        if len(hits) >= limit:
            break
    return hits


PROVIDERS = {"searxng": _searxng}


def search(query: str, *, limit: int, keep: Callable[[Hit], bool] = lambda hit: True) -> list[Hit]:
    """Up to `limit` hits that `keep` accepts (the channel's domain rules), in the provider's order."""
    return PROVIDERS[settings.WEB_SEARCH_PROVIDER](query, limit, keep)
