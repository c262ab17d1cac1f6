"""Who a client is, for the limits kept per client: its address, as a proxy may tell it.

A socket's peer is the client, unless the peer is a trusted proxy (a load
balancer the operator names in MOOSE_TRUSTED_PROXIES): then the client is the
last address in `X-Forwarded-For` that is not itself a trusted proxy. Read
from the right, since a client can write anything at the left of that header
and each proxy appends the address it saw. Limits count an IPv6 client by its
/64, the network one host usually holds whole.
"""

from __future__ import annotations

import ipaddress

__all__ = ["client_address", "client_trusted", "limit_subject", "networks", "within"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(text: str, setting: str = "trusted_proxies") -> tuple[Network, ...]:
    """Comma-separated addresses or networks ("10.0.0.0/8, 127.0.0.1"); ValueError naming
    the `setting` if one is bad."""
    out = []
    for item in text.split(","):
        if item.strip():
            try:
                out.append(ipaddress.ip_network(item.strip(), strict=False))
            except ValueError as exc:
                raise ValueError(f"{setting}: {item.strip()!r} is not an address") from exc
    return tuple(out)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped  # ::ffff:1.2.3.4 from a dual-stack socket is 1.2.3.4
    return ip


def _trusted(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address, trusted: tuple[Network, ...]
) -> bool:
    return any(ip.version == net.version and ip in net for net in trusted)


def within(address: str | None, nets: tuple[Network, ...]) -> bool:
    """Whether the address is in one of the networks."""
    ip = _ip(address or "")
    return ip is not None and _trusted(ip, nets)


def client_trusted(peer: str | None, trusted: tuple[Network, ...]) -> bool:
    """Whether the peer is a trusted proxy (its X-Forwarded-* headers are believed)."""
    return within(peer, trusted)


def client_address(peer: str | None, forwarded: str | None, trusted: tuple[Network, ...]) -> str:
    """The client's address: the peer's, or what trusted proxies say in X-Forwarded-For."""
    ip = _ip(peer or "")
    if ip is None:
        return peer or "unknown"  # a unix socket: one client as far as limits go
    if not forwarded or not _trusted(ip, trusted):
        return str(ip)
    for hop in reversed(forwarded.split(",")):
        said = _ip(hop)
        if said is None:
            break  # garbage from the client's side of the header: stop at the last good hop
        ip = said
        if not _trusted(ip, trusted):
            break
    return str(ip)


def limit_subject(address: str) -> str:
    """What a per-address limit counts: the address, or an IPv6 address's /64."""
    ip = _ip(address)
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return address
