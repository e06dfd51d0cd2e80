"""Network policy for web_fetch (reference t, NetworkPolicy): which URLs may be fetched.

Only http(s), and never a host that is, or resolves to, an address inside this machine
or its network (loopback, private, link-local such as cloud metadata at 169.254.169.254,
multicast, reserved, unspecified), IPv4 addresses embedded in IPv6 included. Every
resolved address must pass. Hosts on the allow-list skip the address check.

Time-of-check limit: the address is checked here and resolved again when httpx connects,
so a DNS server that answers differently the second time (DNS rebinding) can still steer
a fetch inside. Pinning the checked address would close that; we do not, because httpx
offers no clean way to connect to one address while keeping the host for TLS and Host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import SplitResult, urlsplit

from paicli.tools.urls import WEB_SCHEMES

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix: IPv4 in the low 32 bits


class NetworkDenied(Exception):
    """The target is off limits; web_fetch shows ``❌ 网络访问被拒绝: <reason>``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


async def system_resolve(host: str, port: int) -> list[str]:
    """Every address the system resolver gives; ``loop.getaddrinfo`` runs it off the event loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


async def check_url(url: str, allow_hosts: Iterable[str] = (),
                    resolve: Resolver = system_resolve) -> None:
    """Raise ``NetworkDenied`` unless ``url`` may be fetched."""
    parts = parse_web_url(url)
    host = _bare_host(parts.hostname or "")
    if host in {_bare_host(h) for h in allow_hosts if h.strip()}:
        return
    if host == "localhost" or host.endswith(".localhost"):
        raise NetworkDenied("禁止访问 localhost")
    if host == "0.0.0.0":
        raise NetworkDenied("禁止访问 0.0.0.0")
    for address in await _addresses(host, _port(parts), resolve):
        reason = address_denial(address)
        if reason:
            raise NetworkDenied(reason)


def parse_web_url(url: str) -> SplitResult:
    """Split ``url``; raise ``NetworkDenied`` unless it is http(s) with a host."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise NetworkDenied(f"URL 格式非法: {exc}") from None
    scheme = parts.scheme.lower()
    if not scheme:
        raise NetworkDenied("URL 缺少 scheme（需 http 或 https）")
    if scheme not in WEB_SCHEMES:
        raise NetworkDenied(f"禁止的 scheme: {scheme}（仅允许 http、https）")
    if not parts.hostname:
        raise NetworkDenied("URL 缺少 host")
    return parts


def address_denial(address: str) -> str | None:
    """Why ``address`` is off limits, or None for a public address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    target = _embedded_ipv4(ip) or ip  # ::ffff:10.0.0.1 is judged as 10.0.0.1
    kind = _kind(target)
    return f"禁止访问{kind}（{address}）" if kind else None


def _kind(ip: IPAddress) -> str | None:
    # Named classes first for a precise message; "not global" catches the rest (e.g. 100.64/10).
    checks = [
        (ip.is_unspecified, "未指定地址"), (ip.is_loopback, "环回地址"),
        (ip.is_link_local, "链路本地地址"), (ip.is_multicast, "组播地址"),
        (ip.is_reserved, "保留地址"), (ip.is_private, "站内地址"), (not ip.is_global, "非公网地址"),
    ]
    return next((name for hit, name in checks if hit), None)


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    if ip.version == 4:
        return None
    if ip.ipv4_mapped or ip.sixtofour:
        return ip.ipv4_mapped or ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


async def _addresses(host: str, port: int, resolve: Resolver) -> list[str]:
    try:
        ipaddress.ip_address(host)
        return [host]  # a literal needs no lookup
    except ValueError:
        pass
    try:
        addresses = await resolve(host, port)
    except (OSError, UnicodeError):
        addresses = []
    if not addresses:
        raise NetworkDenied(f"无法解析主机: {host}")
    return addresses


def _bare_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _port(parts: SplitResult) -> int:
    return parts.port or (443 if parts.scheme.lower() == "https" else 80)
