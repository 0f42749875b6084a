"""Fetch one web page for fetch_url without letting it reach inside our network (SSRF).

For every hop (the first URL and each redirect) we resolve the host ourselves, refuse it when
any of its addresses is private, loopback, link-local, multicast, reserved or unspecified
(IPv4 and IPv6, including IPv4 embedded in IPv6) unless UEDU_FETCH_ALLOWED_NETWORKS exempts it,
and then connect to the very address we checked: the request URL carries the IP, while the
Host header and TLS SNI/certificate check carry the name. A DNS answer that changes between
the check and the connection (DNS rebinding) therefore never reaches the socket.
Proxies from the environment are ignored for the same reason: a proxy would resolve the name
again, out of our sight."""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass, field

import httpx
from django.conf import settings

from agent.engine.boundaries import host_permitted
from uedu_dr.bounded_process import run_bounded

from . import webparse
from .http import ExternalServiceError

USER_AGENT = "UeduDeepResearch/1.0 (research assistant; fetch_url)"
REDIRECT_STATUSES = {301, 302, 303, 307, 308}
# Content we can turn into text; anything else (images, archives, office files) is refused by type.
HTML_TYPES = webparse.HTML_TYPES
TEXT_TYPES = {"text/plain", "text/markdown", "text/csv", "application/json", "text/xml", "application/xml"}
PDF_TYPES = {"application/pdf", "application/x-pdf"}
# Many servers label a PDF download as a generic binary; those are read when the path says .pdf
# and the body starts like a PDF.
GENERIC_BINARY = "application/octet-stream"
NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchRefused(ExternalServiceError):
    """The URL is not fetched by policy (scheme, address, domain, size)."""


@dataclass
class Page:
    url: str  # the final URL, after redirects (with the host name, never the pinned IP)
    title: str
    text: str
    content_type: str
    status: int
    bytes_read: int
    truncated: bool  # the body was cut at UEDU_FETCH_MAX_BYTES or the text at UEDU_FETCH_MAX_TEXT_CHARS
    redirects: list[str] = field(default_factory=list)
    # A PDF's text page by page (page 1 first), so that citations can name the page; empty otherwise.
    pages: list[str] = field(default_factory=list)
    page_count: int = 0


def _allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in settings.UEDU_FETCH_ALLOWED_NETWORKS]


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if ip.version != 6:
        return None
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(ip: IPAddress, allowed_networks=None) -> str:
    """Why this address may not be fetched ('' when it may)."""
    networks = _allowed_networks() if allowed_networks is None else allowed_networks
    if any(ip.version == net.version and ip in net for net in networks):
        return ""
    if ip.version == 6 and ip.ipv4_mapped is not None:
        # ::ffff:a.b.c.d is a.b.c.d on the wire: judge the IPv4 address.
        inner = address_problem(ip.ipv4_mapped, networks)
        return f"{inner} (as IPv4-mapped {ip})" if inner else ""
    inner_v4 = _embedded_ipv4(ip)
    if inner_v4 is not None:
        inner = address_problem(inner_v4, networks)
        if inner:
            return f"{inner} (embedded in {ip})"
    for attribute, label in (
        ("is_unspecified", "an unspecified"),
        ("is_loopback", "a loopback"),
        ("is_link_local", "a link-local"),
        ("is_multicast", "a multicast"),
        ("is_private", "a private"),
        ("is_reserved", "a reserved"),
    ):
        if getattr(ip, attribute):
            return f"{ip} is {label} address"
    if not ip.is_global:
        return f"{ip} is not a public address"
    return ""


def resolve(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ExternalServiceError(
            f"cannot resolve {host}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    addresses: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise ExternalServiceError(f"cannot resolve {host}: no addresses")
    return addresses


def _checked_target(url: httpx.URL, allowed: tuple[str, ...], denied: tuple[str, ...]) -> tuple[str, str]:
    """(pinned IP, Host header) for a URL that passed every rule; FetchRefused otherwise."""
    if url.scheme not in ("http", "https"):
        raise FetchRefused(
            f"only http and https URLs are fetched, not {url.scheme or 'this'}: {str(url)[:200]}"
        )
    if url.userinfo:
        raise FetchRefused("URLs with credentials are not fetched")
    host = url.raw_host.decode("ascii").lower()
    if not host:
        raise FetchRefused(f"the URL has no host: {str(url)[:200]}")
    if not host_permitted(host, allowed, denied):
        raise FetchRefused(f"{host} is not allowed by this channel's web domain rules")
    port = url.port or (443 if url.scheme == "https" else 80)
    networks = _allowed_networks()
    addresses = resolve(host, port)
    for address in addresses:
        problem = address_problem(address, networks)
        if problem:
            # One bad address is enough: a resolver may rotate answers between our calls.
            raise FetchRefused(f"refusing to fetch {host}: {problem}")
    host_header = host if url.port is None else f"{'[' + host + ']' if ':' in host else host}:{url.port}"
    return str(addresses[0]), host_header


def _parse_bounded(host: str, target, args: tuple, remaining) -> tuple:
    """Run one of webparse's parsers in the bounded child (memory ceiling, the fetch's own
    deadline, killed past either; it waits for a parse slot within that deadline, or not at all
    in a web process: uedu_dr.bounded_process.refuse_when_busy), and turn its failures into the
    tool's errors."""
    outcome = run_bounded(
        target,
        args,
        memory_mb=settings.UEDU_EXTRACTION_MAX_MEMORY_MB,
        timeout_seconds=remaining,  # what is left of the fetch once a parse slot is free
        wait_seconds=remaining(),
    )
    if outcome[0] == "ok":
        return outcome[1]
    if outcome[0] == "busy":
        raise ExternalServiceError(
            f"the page from {host} was not read: the platform is reading as many pages and files as it "
            f"can at once ({settings.UEDU_PARSE_CHILDREN_PLATFORM}); try again in a minute"
        )
    if outcome[0] == "encrypted":
        raise FetchRefused("the PDF is password-protected")
    if outcome[0] == "timeout":
        raise ExternalServiceError(
            f"reading the page from {host} took longer than the {settings.UEDU_FETCH_TIMEOUT_SECONDS:g} s limit"
        )
    if outcome[0] == "memory":
        raise ExternalServiceError(
            f"reading the page from {host} needs more than {settings.UEDU_EXTRACTION_MAX_MEMORY_MB} MB of memory"
        )
    what = "the PDF" if target is webparse.pdf_text else "the page"
    raise ExternalServiceError(f"{what} could not be read ({outcome[1][:120]})")


def _reads_as_pdf(content_type: str, url: httpx.URL) -> bool:
    return content_type in PDF_TYPES or (content_type == GENERIC_BINARY and url.path.lower().endswith(".pdf"))


def fetch_page(
    url: str, *, allowed_domains: tuple[str, ...] = (), denied_domains: tuple[str, ...] = ()
) -> Page:
    max_bytes = settings.UEDU_FETCH_MAX_BYTES
    deadline = time.monotonic() + settings.UEDU_FETCH_TIMEOUT_SECONDS
    try:
        current = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise FetchRefused(f"not a valid URL: {exc}") from None
    redirects: list[str] = []

    def remaining() -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ExternalServiceError(
                f"fetching {current.host} took longer than {settings.UEDU_FETCH_TIMEOUT_SECONDS:g} s"
            )
        return left

    with httpx.Client(trust_env=False, follow_redirects=False, verify=True) as client:
        for _hop in range(settings.UEDU_FETCH_MAX_REDIRECTS + 1):
            ip, host_header = _checked_target(current, allowed_domains, denied_domains)
            pinned = current.copy_with(host=ip)
            extensions = (
                {"sni_hostname": current.raw_host.decode("ascii")} if current.scheme == "https" else {}
            )
            headers = {
                "Host": host_header,
                "User-Agent": USER_AGENT,
                "Accept": "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.1",
                "Accept-Encoding": "identity",  # the byte limit then counts what the server sends
            }
            try:
                with client.stream(
                    "GET", pinned, headers=headers, extensions=extensions, timeout=httpx.Timeout(remaining())
                ) as response:
                    if response.status_code in REDIRECT_STATUSES and response.headers.get("location"):
                        current = current.join(response.headers["location"])
                        redirects.append(str(current))
                        continue
                    if response.status_code >= 400:
                        raise ExternalServiceError(f"{current.host} answered HTTP {response.status_code}")
                    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                    is_pdf = _reads_as_pdf(content_type, current)
                    if content_type not in HTML_TYPES | TEXT_TYPES and not is_pdf:
                        raise FetchRefused(
                            f"{current.host} sent {content_type or 'an unlabelled body'}, which fetch_url does not read"
                        )
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > max_bytes:
                        raise FetchRefused(
                            f"the page is {int(declared):,} bytes, above the {max_bytes:,}-byte limit"
                        )
                    body = bytearray()
                    truncated = False
                    for chunk in response.iter_bytes():
                        remaining()
                        body += chunk
                        if len(body) > max_bytes:
                            # Undeclared or lying length: keep what fits, say that it was cut.
                            del body[max_bytes:]
                            truncated = True
                            break
                    charset = response.charset_encoding
                    status = response.status_code
            except httpx.TimeoutException:
                raise ExternalServiceError(f"{current.host} did not answer within the time limit") from None
            except httpx.TransportError as exc:
                raise ExternalServiceError(
                    f"could not fetch {current.host} ({exc.__class__.__name__})"
                ) from None
            limit = settings.UEDU_FETCH_MAX_TEXT_CHARS
            pages, page_count = [], 0
            if is_pdf:
                if b"%PDF-" not in body[:1024]:  # readers accept the header anywhere in the first kilobyte
                    raise FetchRefused(f"{current.host} sent {content_type} that is not a PDF document")
                if truncated:
                    # A PDF's index sits at its end: a cut PDF cannot be read at all.
                    raise FetchRefused(f"the PDF is larger than the {max_bytes:,}-byte limit")
                title, pages, page_count, cut = _parse_bounded(
                    str(current.host), webparse.pdf_text, (bytes(body), limit), remaining
                )
                text, truncated = "\n\n".join(pages).strip(), cut
                content_type = "application/pdf"
            elif content_type in HTML_TYPES:
                title, text = _parse_bounded(
                    str(current.host), webparse.page_text, (bytes(body), content_type, charset), remaining
                )
                if len(text) > limit:
                    text, truncated = text[:limit], True
            else:  # plain text: decoding 2 MB at most is bounded work, no parser to trap
                title, text = webparse.page_text(bytes(body), content_type, charset)
                if len(text) > limit:
                    text, truncated = text[:limit], True
            return Page(
                url=str(current),
                title=title or str(current.host),
                text=text,
                content_type=content_type,
                status=status,
                bytes_read=len(body),
                truncated=truncated,
                redirects=redirects,
                pages=pages,
                page_count=page_count,
            )
    raise FetchRefused(f"more than {settings.UEDU_FETCH_MAX_REDIRECTS} redirects")
