"""The web and scholarly boundaries every assistant path shares (Deep Research, ordinary chat).

One function per rule, used by the engine, the web connector and the tools alike, so a rule
cannot drift between two copies (it once did: a URL without a host passed the engine's check
and failed the connector's). No Django here: the engine imports it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

COUNTRY_CODE = re.compile(r"^[a-z]{2}$")
# An address as a student writes it: ASCII URL characters only, so one written straight into
# Chinese text ("請讀https://example.com/a的第二段") ends where the Chinese begins.
_WRITTEN_URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'"


def _ascii_name(name: str) -> str:
    """A domain name in one form for comparing: lower-case, no final dot, internationalised
    labels in their ASCII (punycode) form. A teacher writes "例子.tw", a URL arrives as
    "xn--fsqu00a.tw" (or the other way round): both must be the same name to the rule."""
    name = (name or "").strip().lower().strip(".")
    if not name or name.isascii():
        return name
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:  # not a valid IDN: compared as written, and so never equal to one
        return name


def _under(host: str, rule: str) -> bool:
    rule = _ascii_name(rule)
    return bool(rule) and (host == rule or host.endswith("." + rule))


def host_permitted(host: str, allowed, denied) -> bool:
    """A web host under the channel's rules: a denied domain (or a subdomain of one) never; with
    an allow-list, only those domains and their subdomains. An empty host is no web domain at
    all and is never permitted."""
    host = _ascii_name(host)
    if not host:
        return False
    if any(_under(host, rule) for rule in denied):
        return False
    return not allowed or any(_under(host, rule) for rule in allowed)


def url_permitted(url: str, allowed, denied) -> bool:
    """A URL under the channel's rules. A site-relative link ("/catalogue/papers/7", a Uedu record
    a tool returned) points at this platform, not at the web, so the web rules do not apply to
    it; any other URL without a host ("mailto:…", "javascript:…", "http:///x") is refused, with
    or without an allow-list."""
    url = (url or "").strip()
    if url.startswith("/") and not url.startswith("//"):
        return True
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:  # an invalid IPv6 literal and the like
        return False
    return host_permitted(host, allowed, denied)


def _canonical(url: str) -> str:
    return url.split("#", 1)[0].rstrip("/").lower()


def url_observed(url: str, *, seen_urls, student_text: str) -> bool:
    """The guard of a tool's URL arguments (its observed_url_params): may the model open this address? Only one the student wrote or one a
    source already showed in the same turn or research; a page's text (or a planted instruction
    in an answer) cannot send the tool to an address of its choosing."""
    target = _canonical(url.strip())
    if not target:
        return False
    if any(_canonical(seen) == target for seen in seen_urls if seen):
        return True
    # The whole address the student wrote, not a part of it: "https://example.co" is not
    # "https://example.com/a" (a substring match let it through).
    written = (match.group(0).rstrip(_TRAILING) for match in _WRITTEN_URL.finditer(student_text or ""))
    return any(_canonical(address) == target for address in written)


def narrowed_countries(requested, permitted: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The OpenAlex country rule: the model may narrow the permitted countries, never widen them.
    Returns (the codes to search, the codes refused). No request means all permitted countries."""
    if not requested:
        return list(permitted), []
    codes = list(dict.fromkeys(str(c).strip().lower() for c in requested))
    kept = [c for c in codes if c in permitted]
    return kept, [c for c in codes if c not in permitted]
