"""One resilient JSON GET for every external API: explicit timeouts, bounded retries with
exponential backoff on 429/5xx/network errors, and a response cache in the Django cache."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any

import httpx
from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 10.0  # even a polite Retry-After must not stall a research for minutes


class ExternalServiceError(Exception):
    """An outside service failed; the message is meant for the LLM and the student."""


class NotFoundError(ExternalServiceError):
    """The service answered 404 for the thing asked about."""


def cache_key(service: str, url: str, params: dict | None) -> str:
    """Keyed by the request itself (URL and parameters, credentials excluded by the caller)."""
    raw = json.dumps([service, url, sorted((params or {}).items())], ensure_ascii=False, default=str)
    name = re.sub(r"[^a-z0-9]+", "-", service.lower())  # cache keys stay ASCII without spaces
    return f"tool-http:{name}:{hashlib.sha256(raw.encode()).hexdigest()}"


def _cache_get(key: str) -> Any:
    try:
        return cache.get(key)
    except Exception:  # a cache outage makes calls slower, never makes them fail
        log.warning("tool cache unavailable for get", exc_info=True)
        return None


def _cache_set(key: str, value: Any, seconds: int) -> None:
    if seconds <= 0:
        return
    try:
        cache.set(key, value, seconds)
    except Exception:
        log.warning("tool cache unavailable for set", exc_info=True)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date or garbage: use our own backoff


def get_json(
    *,
    service: str,
    url: str,
    params: dict | None = None,
    secret_params: dict | None = None,
    headers: dict | None = None,
    cache_seconds: int | None = None,
    transform: Callable[[Any], Any] | None = None,
) -> Any:
    """GET `url` and return its JSON body (after `transform`, which runs before caching so that
    only what we need is cached). `secret_params` (API keys) are sent but not part of the cache key.

    Raises ExternalServiceError (NotFoundError for 404) with a message naming the service."""
    ttl = settings.UEDU_TOOL_CACHE_SECONDS if cache_seconds is None else cache_seconds
    key = cache_key(service, url, params)
    if ttl > 0:
        cached = _cache_get(key)
        if cached is not None:
            return cached

    timeout = settings.UEDU_TOOL_HTTP_TIMEOUT_SECONDS
    attempts = settings.UEDU_TOOL_HTTP_MAX_RETRIES + 1
    query = {**(params or {}), **(secret_params or {})}
    problem = ""
    wait_hint: float | None = None
    with httpx.Client(
        timeout=httpx.Timeout(timeout), headers=headers or {}, follow_redirects=True, max_redirects=3
    ) as client:
        for attempt in range(attempts):
            if attempt:
                backoff = settings.UEDU_TOOL_HTTP_BACKOFF_SECONDS * 2 ** (attempt - 1)
                time.sleep(min(MAX_BACKOFF_SECONDS, wait_hint if wait_hint is not None else backoff))
                wait_hint = None
            try:
                response = client.get(url, params=query)
            except httpx.TimeoutException:
                problem = f"{service} did not answer within {timeout:g} s"
                continue
            except httpx.TransportError as exc:
                problem = f"{service} could not be reached ({exc.__class__.__name__})"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                problem = f"{service} answered HTTP {response.status_code}"
                wait_hint = _retry_after(response)
                continue
            if response.status_code == 404:
                raise NotFoundError(f"{service} has no such resource (HTTP 404)")
            if response.status_code >= 400:
                raise ExternalServiceError(
                    f"{service} refused the request (HTTP {response.status_code}): {response.text[:200]}"
                )
            try:
                data = response.json()
            except ValueError:
                raise ExternalServiceError(f"{service} sent a response that is not valid JSON") from None
            if transform is not None:
                data = transform(data)
            _cache_set(key, data, ttl)
            return data
    raise ExternalServiceError(f"{problem}; gave up after {attempts} attempts")
