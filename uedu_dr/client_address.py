"""The client's address: one rule for the whole app, resolved once per request or socket.

Who connects to daphne is the *peer* (REMOTE_ADDR, the ASGI scope's "client"). Behind a reverse
proxy the peer is the proxy, and the client is named in X-Forwarded-For, a header anyone can
write. So the header counts only as far as the operator says it can be trusted, with
UEDU_TRUSTED_PROXIES:

- unset or 0 (the default): nobody is trusted; the address is the peer, and X-Forwarded-For is
  ignored (the first request that carries one logs a warning: a proxy nobody told us about makes
  every client its own address);
- a count N: every request comes through N proxies, the nearest being the peer; the client is the
  N-th address from the right of "X-Forwarded-For, peer" (what a client wrote to the left of that
  is ignored). A request with fewer hops did not come through the proxies: the peer is used;
- networks ("10.0.0.0/8, 2001:db8::/48"): the peer and the hops to its left are skipped while they
  are in these networks; the first address outside them is the client. A peer outside them is
  the client itself, whatever it sends.

The header is parsed strictly, here: it is split at commas, and every hop must be an address as a
proxy writes one (IPv4, optionally with a port; IPv6 bare, or in brackets with an optional port).
One hop that is anything else (a quote, a name, "unknown", an empty hop, a port where none can be
told apart from the address) makes the whole header untrusted, and the answer is the peer. A
lenient parser that skips or joins such tokens lets a client shape what the proxy appended after
it: an unclosed double quote once swallowed the hops to its right, so a client chose its own
address (docs/security.md, "Client address").

Daphne must NOT run with --proxy-headers: that makes the left-most X-Forwarded-For value (the one a
client chooses) the peer, before this rule sees anything (uedu_dr/launcher.py, docs/security.md).

Everything that needs an address uses `client_ip(request)` (or, on a WebSocket, the scope's
"client_address" that ClientAddressSocketMiddleware sets): django-axes (AXES_CLIENT_IP_CALLABLE),
django-ratelimit's "ip" keys (RATELIMIT_IP_META_KEY, IPv6 counted per /64), /healthz's details
(`is_local`) and the log lines (`ClientAddressLogFilter`)."""

from __future__ import annotations

import contextvars
import ipaddress
import logging
import threading
from dataclasses import dataclass

from django.conf import settings

log = logging.getLogger(__name__)

FORWARDED_HEADER = "HTTP_X_FORWARDED_FOR"
# IPv6 hands each subscriber (a home, a phone) a /64: counting per /128 lets one client rotate
# through 2^64 addresses. Log-in locks and rate limits count the /64 (RATELIMIT_IPV6_MASK too).
IPV6_PREFIX = 64
LOOPBACK = ("127.0.0.1", "::1")

_current: contextvars.ContextVar[str] = contextvars.ContextVar("client_address", default="-")


@dataclass(frozen=True)
class TrustedProxies:
    count: int = 0
    networks: tuple = ()
    # Whether the operator set the variable at all ("0" says "no proxy" on purpose): an unset one
    # is what `check --deploy` asks about (uedu_dr.checks).
    configured: bool = False

    @property
    def none(self) -> bool:
        return not self.count and not self.networks


def parse_trusted_proxies(raw: str | None) -> TrustedProxies:
    """The setting's value: unset or "" (none), a count ("1"; "0" = none, on purpose) or networks
    ("10.0.0.0/8, ::1"). Raises ValueError with a readable message on anything else (settings turn
    it into a failed start)."""
    if raw is None or not raw.strip():
        return TrustedProxies()
    raw = raw.strip()
    if raw.isdigit():
        count = int(raw)
        if count > 10:
            raise ValueError(f"a count of trusted proxies above 10 is not a real deployment (got {count})")
        return TrustedProxies(count=count, configured=True)
    networks = []
    for part in raw.split(","):
        part = part.strip()
        if not part:
            raise ValueError(f"an empty entry in {raw!r} (a stray comma?)")
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(
                f"{part!r} is neither a count of proxies nor an IP network (like 10.0.0.0/8)"
            ) from None
    return TrustedProxies(networks=tuple(networks), configured=True)


# --------------------------------------------------------------------------- the strict parse


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address written plainly: no zone id (it names an interface of the proxy, not a client),
    nothing around it. An IPv4-mapped IPv6 address is its IPv4 address, as the peer's would be."""
    if not text or "%" in text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _port(text: str) -> bool:
    return 1 <= len(text) <= 5 and text.isascii() and text.isdigit() and 1 <= int(text) <= 65535


def parse_hop(text: str) -> str | None:
    """One hop of X-Forwarded-For as a proxy writes it, normalised ("2001:DB8::1" → "2001:db8::1"),
    or None for anything else:

    - IPv4: "192.0.2.1" or "192.0.2.1:443";
    - IPv6: "2001:db8::1" bare (no port: "2001:db8::1:443" is itself an address), or in brackets,
      "[2001:db8::1]" or "[2001:db8::1]:443";
    - refused: quotes, spaces inside, names, "unknown" and RFC 7239's obfuscated ids, a zone id,
      brackets around IPv4, an empty or out-of-range port, anything left over."""
    if text.startswith("["):
        inner, closing, rest = text[1:].partition("]")
        if not closing or (rest and not (rest.startswith(":") and _port(rest[1:]))):
            return None
        address = _address(inner)
        return str(address) if isinstance(address, ipaddress.IPv6Address) else None
    if text.count(":") == 1:  # an IPv4 address and its port (an IPv6 address has two colons at least)
        host, port = text.split(":")
        address = _address(host) if _port(port) else None
        return str(address) if isinstance(address, ipaddress.IPv4Address) else None
    address = _address(text)
    return str(address) if address is not None else None


def parse_chain(header: str) -> list[str] | None:
    """Every hop of the header, left to right, or None when one of them is not an address (the
    whole header is then untrusted: a client that wrote garbage may have meant it to change how
    the rest is read). Only the optional blanks around commas are allowed."""
    hops = []
    for part in header.split(","):
        hop = parse_hop(part.strip(" \t"))
        if hop is None:
            return None
        hops.append(hop)
    return hops


# --------------------------------------------------------------------------- the rule


# How a forwarded header was treated: none came; it was used (trusted and whole); it was ignored
# (no proxy is trusted, or the peer is not one of ours); it was refused (a hop that is not an
# address, or fewer hops than proxies): the address is then the peer.
NOT_FORWARDED, FORWARDED_USED, FORWARDED_IGNORED, FORWARDED_REFUSED = "none", "used", "ignored", "refused"


@dataclass(frozen=True)
class Resolution:
    address: str
    forwarded: str  # one of the four above

    @property
    def vouched(self) -> bool:
        """Whether the address is the connection's own or one our proxies vouched for: not a peer
        that stood in for a header we could not use (a loopback proxy is not a local probe)."""
        return self.forwarded in (NOT_FORWARDED, FORWARDED_USED)


_warning_lock = threading.Lock()
_warned_untrusted = False


def _warn_untrusted_forwarding(peer: str) -> None:
    """Once per process: a forwarded header while no proxy is trusted. Behind a proxy nobody told
    us about, every client counts as the proxy's address (one lock, one rate limit for all)."""
    global _warned_untrusted
    with _warning_lock:
        if _warned_untrusted:
            return
        _warned_untrusted = True
    log.warning(
        "a request from %s carried X-Forwarded-For, but UEDU_TRUSTED_PROXIES trusts no proxy: the "
        "header is ignored and the peer is the client. Behind a reverse proxy, set "
        "UEDU_TRUSTED_PROXIES to its count or networks (docs/security.md, 'Client address'); "
        "without one, set it to 0. This is logged once per process.",
        peer,
    )


def _in_networks(address: str, networks) -> bool:
    parsed = _address(address)
    return parsed is not None and any(
        parsed.version == network.version and parsed in network for network in networks
    )


def resolve_address(peer: str, forwarded: str) -> Resolution:
    """The client's address from the peer and the X-Forwarded-For header ("" when none)."""
    peer = (peer or "").strip()
    forwarded = (forwarded or "").strip()
    trusted: TrustedProxies = settings.UEDU_TRUSTED_PROXIES
    if not forwarded:
        return Resolution(peer, NOT_FORWARDED)
    if trusted.none:
        _warn_untrusted_forwarding(peer)
        return Resolution(peer, FORWARDED_IGNORED)
    peer_address = _address(peer)
    if peer_address is None:
        return Resolution(peer, FORWARDED_REFUSED)
    if trusted.networks and not _in_networks(peer, trusted.networks):
        return Resolution(peer, FORWARDED_IGNORED)  # not one of our proxies: its header is its own claim
    hops = parse_chain(forwarded)
    if hops is None:
        return Resolution(peer, FORWARDED_REFUSED)
    chain = [*hops, str(peer_address)]
    if trusted.count:
        if len(chain) <= trusted.count:
            return Resolution(peer, FORWARDED_REFUSED)  # too few hops: it did not come through them
        return Resolution(chain[-1 - trusted.count], FORWARDED_USED)
    # Skip our proxies right to left; a chain of only proxies names its left-most.
    for hop in reversed(chain[:-1]):
        if not _in_networks(hop, trusted.networks):
            return Resolution(hop, FORWARDED_USED)
    return Resolution(chain[0], FORWARDED_USED)


def resolve(meta) -> str:
    """The client's address for a request's META."""
    return resolve_address(meta.get("REMOTE_ADDR") or "", meta.get(FORWARDED_HEADER) or "").address


def resolution(request) -> Resolution:
    """How the request's address was found, resolved once per request."""
    found = getattr(request, "client_resolution", None)
    if found is None:
        found = resolve_address(
            request.META.get("REMOTE_ADDR") or "", request.META.get(FORWARDED_HEADER) or ""
        )
        request.client_resolution = found
    return found


def client_ip(request) -> str:
    """The client's address, resolved once per request (the middleware does it first)."""
    return resolution(request).address


def is_local(request) -> bool:
    """A probe on the machine itself: a loopback address that is the connection's own (or that our
    proxies vouched for), never a loopback proxy standing in for a header it could not use."""
    found = resolution(request)
    return found.vouched and found.address in LOOPBACK


def lock_key(address: str) -> str:
    """The address as a log-in lock counts it: IPv4 as is, IPv6 as its /64 (written as the
    network's first address, so it still fits axes's address column)."""
    parsed = _address(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_PREFIX}", strict=False).network_address)
    return str(parsed) if parsed is not None else address


def axes_client_ip(request) -> str:
    """AXES_CLIENT_IP_CALLABLE: the client's address, IPv6 per /64."""
    return lock_key(client_ip(request))


class ClientAddressMiddleware:
    """First in MIDDLEWARE: resolves the address once and makes it available to log lines."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _current.set(client_ip(request))
        try:
            return self.get_response(request)
        finally:
            _current.reset(token)


def scope_resolution(scope) -> Resolution:
    """The same rule for an ASGI scope (a WebSocket handshake): the peer is the scope's client,
    and repeated X-Forwarded-For headers are read as one, as Django reads them for HTTP."""
    client = scope.get("client") or ("", 0)
    forwarded = ",".join(
        value.decode("latin-1")
        for name, value in scope.get("headers", ())
        if name.lower() == b"x-forwarded-for"
    )
    return resolve_address(str(client[0] or ""), forwarded)


class ClientAddressSocketMiddleware:
    """Outermost on the WebSocket stack: the socket's client address, by the same rule as HTTP, in
    the scope ("client_address") and on every log line the connection writes."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        address = scope_resolution(scope).address
        token = _current.set(address)
        try:
            return await self.inner({**scope, "client_address": address}, receive, send)
        finally:
            _current.reset(token)


class ClientAddressLogFilter(logging.Filter):
    """Puts the current request's client address on every log record (`%(client)s`); "-" outside
    a request (Celery tasks, commands)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.client = _current.get()
        return True
