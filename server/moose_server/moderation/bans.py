"""Bans: who may not come in, for how long and why.

An operator bans an account (its player id) or an address: one address, or a
network (an IPv6 address stands for its /64, as limits count it, see
addresses.py), for a time or for good (`until` 0), with a reason. The bans
live in Redis (moderation/store.py); each instance keeps a copy in memory
(`Bans`), so that the check at `hello` and on the HTTP API costs no Redis call.
The copy takes a moderator's notice at once (moderation/notices.py) and is read again
every `ban_refresh` seconds, which also covers a notice lost while pub/sub
reconnected. A banned client is refused with `Banned`: the PROTOCOL.md code
`banned`, with the reason, `until` and `retry_after` (ms) when it ends.
"""

from __future__ import annotations

import ipaddress
import time
from dataclasses import asdict, dataclass
from typing import Any

from moose_server.addresses import limit_subject
from moose_server.errors import Refusal
from moose_server.moderation.store import ModerationStore

__all__ = ["CLOSE_BANNED", "Ban", "Banned", "Bans", "ban_network"]

CLOSE_BANNED = 4003  # the account or address is banned (after the error `banned`)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def ban_network(text: str) -> str:
    """The network an address ban holds, as text: "1.2.3.4" -> "1.2.3.4/32", an IPv6
    address -> its /64; ValueError when `text` is neither an address nor a network."""
    net = ipaddress.ip_network(text.strip().strip("[]"), strict=False)
    if isinstance(net, ipaddress.IPv6Network) and net.prefixlen > 64:
        net = net.supernet(new_prefix=64)
    return str(net)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


@dataclass(frozen=True)
class Ban:
    """One ban: an account (`subject`: player id) or an address (`subject`: a network)."""

    kind: str  # "account" or "address"
    subject: str
    reason: str
    until: int  # ms since the epoch; 0: for good
    by: str  # the moderator
    at: int  # when it was issued (ms)
    name: str = ""  # an account's name, for people reading the list

    @property
    def field(self) -> str:
        """Its field in the bans hash: one ban per subject."""
        return f"{self.kind}:{self.subject}"

    def active(self, now_ms: int) -> bool:
        """Whether the ban holds at `now_ms`."""
        return self.until == 0 or self.until > now_ms

    def refusal(self, now_ms: int) -> Banned:
        """The error a client it bans gets."""
        return Banned(self, now_ms)

    def record(self) -> dict[str, Any]:
        """The ban as kept in Redis."""
        return asdict(self)

    @classmethod
    def of(cls, record: dict[str, Any]) -> Ban:
        """A ban read back from Redis."""
        return cls(**{k: record[k] for k in cls.__dataclass_fields__ if k in record})


class Banned(Refusal):
    """`banned`: the reason, `until` (ms; absent for good) and `retry_after` (ms); the
    socket is closed after it."""

    close = CLOSE_BANNED

    def __init__(self, ban: Ban, now_ms: int) -> None:
        what = "this account" if ban.kind == "account" else "your address"
        end = (
            "for good"
            if ban.until == 0
            else "until " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ban.until / 1000))
        )
        super().__init__("banned", f"{what} is banned {end}: {ban.reason}")
        self.ban = ban
        self.fields = {"reason": ban.reason}
        if ban.until:
            self.fields |= {"until": ban.until, "retry_after": max(1, ban.until - now_ms)}


class Bans:
    """This instance's copy of the bans, checked without a Redis call (module docstring)."""

    def __init__(self, store: ModerationStore, now_ms: Any) -> None:
        self.store = store
        self._now_ms = now_ms  # async () -> Redis' clock in ms
        self._skew = 0.0  # Redis' clock minus ours, ms
        self.accounts: dict[str, Ban] = {}
        self.addresses: dict[str, Ban] = {}  # by limit_subject: one address, an IPv6 /64
        self.networks: list[tuple[Network, Ban]] = []  # wider networks

    def now(self) -> int:
        """Redis' clock, as of the last refresh (ms)."""
        return int(time.time() * 1000 + self._skew)

    async def load(self) -> list[Ban]:
        """Read every ban from Redis; return those this copy did not hold."""
        records = await self.store.bans()
        self._skew = await self._now_ms() - time.time() * 1000
        old = {b.field for b in self.all()}
        self.accounts, self.addresses, self.networks = {}, {}, []
        for record in records.values():
            self.add(Ban.of(record))
        return [b for b in self.all() if b.field not in old]

    def all(self) -> list[Ban]:
        """Every ban held (some may have ended)."""
        return [*self.accounts.values(), *self.addresses.values(), *(b for _, b in self.networks)]

    def add(self, ban: Ban) -> None:
        """Hold a ban (from Redis, or a notice)."""
        self.remove(ban.field)
        if ban.kind == "account":
            self.accounts[ban.subject] = ban
            return
        net = ipaddress.ip_network(ban.subject)
        whole = net.prefixlen == (32 if net.version == 4 else 64)
        if whole:
            self.addresses[limit_subject(str(net.network_address))] = ban
        else:
            self.networks.append((net, ban))

    def remove(self, field: str) -> None:
        """Forget the ban on one subject, if held."""
        kind, _, subject = field.partition(":")
        if kind == "account":
            self.accounts.pop(subject, None)
            return
        self.addresses = {k: b for k, b in self.addresses.items() if b.field != field}
        self.networks = [(n, b) for n, b in self.networks if b.field != field]

    def of_address(self, address: str) -> Ban | None:
        """The ban that holds the address now, if any."""
        now = self.now()
        ban = self.addresses.get(limit_subject(address))
        if ban is not None and ban.active(now):
            return ban
        if self.networks:
            ip = _ip(address)
            for net, ban in self.networks:
                if ip is not None and ip.version == net.version and ip in net and ban.active(now):
                    return ban
        return None

    def of_player(self, player: str) -> Ban | None:
        """The ban that holds the account now, if any."""
        ban = self.accounts.get(player)
        return ban if ban is not None and ban.active(self.now()) else None

    def check(self, address: str, player: str | None = None) -> None:
        """Raise `Banned` if the address or the player is banned now."""
        ban = self.of_address(address) or (self.of_player(player) if player else None)
        if ban is not None:
            raise ban.refusal(self.now())
