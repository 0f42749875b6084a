"""The client's address: one rule for the whole app, resolved once per request.

Who connects to daphne is the *peer* (REMOTE_ADDR). Behind a reverse proxy the peer is the proxy,
and the client is named in X-Forwarded-For, a header anyone can write. So the header counts only
as far as the operator says it can be trusted, with UEDU_TRUSTED_PROXIES:

- unset (the default): nobody is trusted; the address is the peer, and X-Forwarded-For is ignored;
- a count N: every request comes through N proxies, the nearest being the peer; the client is the
  N-th address from the right of "X-Forwarded-For, peer" (what a client wrote to the left of that
  is ignored). A request with fewer hops did not come through the proxies: the peer is used;
- networks ("10.0.0.0/8, 2001:db8::/48"): the peer and the hops to its left are skipped while they
  are in these networks; the first address outside them is the client. A peer outside them is
  the client itself, whatever it sends.

The header is parsed by django-ipware (python-ipware), not by hand: it handles ports, brackets,
IPv4-mapped IPv6 and RFC 7239 elements, and skips tokens that are not addresses.

Daphne must NOT run with --proxy-headers: that makes the left-most X-Forwarded-For value (the one a
client chooses) the peer, before this rule sees anything (uedu_dr/launcher.py, docs/security.md).

Everything that needs an address uses `client_ip(request)`: django-axes (AXES_CLIENT_IP_CALLABLE),
django-ratelimit's "ip" keys (RATELIMIT_IP_META_KEY, IPv6 counted per /64), /healthz's details and
the log lines (`ClientAddressLogFilter`)."""

from __future__ import annotations

import contextvars
import ipaddress
import logging
from dataclasses import dataclass

from django.conf import settings
from ipware import get_client_ip

FORWARDED_HEADER = "HTTP_X_FORWARDED_FOR"
# IPv6 hands each subscriber (a home, a phone) a /64: counting per /128 lets one client rotate
# through 2^64 addresses. Log-in locks and rate limits count the /64 (RATELIMIT_IPV6_MASK too).
IPV6_PREFIX = 64

_current: contextvars.ContextVar[str] = contextvars.ContextVar("client_address", default="-")


@dataclass(frozen=True)
class TrustedProxies:
    count: int = 0
    networks: tuple = ()

    @property
    def none(self) -> bool:
        return not self.count and not self.networks


def parse_trusted_proxies(raw: str) -> TrustedProxies:
    """The setting's value: "" (none), a count ("1") or networks ("10.0.0.0/8, ::1"). Raises
    ValueError with a readable message on anything else (settings turn it into a failed start)."""
    raw = (raw or "").strip()
    if not raw:
        return TrustedProxies()
    if raw.isdigit():
        count = int(raw)
        if count > 10:
            raise ValueError(f"a count of trusted proxies above 10 is not a real deployment (got {count})")
        return TrustedProxies(count=count)
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
    return TrustedProxies(networks=tuple(networks))


def _parse(address: str):
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        return None


def _in_networks(address, networks) -> bool:
    return address is not None and any(
        address.version == network.version and address in network for network in networks
    )


class _Meta:
    """What django-ipware reads: the forwarded chain with the peer as its right-most hop, so that
    the nearest proxy counts like every other hop."""

    def __init__(self, chain: str):
        self.META = {FORWARDED_HEADER: chain}


def _hop(chain: _Meta, from_right: int) -> str | None:
    """The address `from_right` hops left of the peer (0 = the peer), or None past the left end."""
    ip, _routable = get_client_ip(
        chain, proxy_count=from_right, request_header_order=[FORWARDED_HEADER], strict=False
    )
    return ip


def resolve(meta) -> str:
    """The client's address for a request's META (or an ASGI scope turned into one)."""
    peer = (meta.get("REMOTE_ADDR") or "").strip()
    trusted: TrustedProxies = settings.UEDU_TRUSTED_PROXIES
    forwarded = (meta.get(FORWARDED_HEADER) or "").strip()
    if trusted.none or not forwarded or _parse(peer) is None:
        return peer
    if trusted.networks and not _in_networks(_parse(peer), trusted.networks):
        return peer  # not one of our proxies: what it forwards is its own claim
    chain = _Meta(f"{forwarded}, {peer}")
    if trusted.count:
        return _hop(chain, trusted.count) or peer  # too few hops: it did not come through them
    client, hops = peer, 1
    while True:  # skip trusted hops right to left; a chain of only proxies names its left-most
        candidate = _hop(chain, hops)
        if candidate is None:
            return client
        client = candidate
        if not _in_networks(_parse(candidate), trusted.networks):
            return client
        hops += 1


def client_ip(request) -> str:
    """The client's address, resolved once per request (the middleware stores it)."""
    address = getattr(request, "client_address", None)
    if address is None:
        address = resolve(request.META)
        request.client_address = address
    return address


def lock_key(address: str) -> str:
    """The address as a log-in lock counts it: IPv4 as is, IPv6 as its /64 (written as the
    network's first address, so it still fits axes's address column)."""
    parsed = _parse(address)
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_PREFIX}", strict=False).network_address)
    return address


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


class ClientAddressLogFilter(logging.Filter):
    """Puts the current request's client address on every log record (`%(client)s`); "-" outside
    a request (Celery tasks, commands)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.client = _current.get()
        return True
