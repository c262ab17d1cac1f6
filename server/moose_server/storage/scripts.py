"""Every Lua script of the server (lua/*.lua) and the one typed call of each.

A script reads its KEYS and ARGV by position. Each script has one frozen
dataclass here whose `build` returns (KEYS, ARGV) in the order the script reads
them, so that a caller names every argument (``CommitCall(game=..., expected=...)``)
and the order lives in one place, next to the script's source. Key names come
from keys.py; a script never builds one. tests/test_scripts.py checks each
`build` against the KEYS and ARGV indices its script reads.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, ClassVar

from moose_server.storage.codec import pack
from moose_server.storage.keys import (
    GAMES_CHANNEL,
    GUESTS_KEY,
    LIVE_GAMES_KEY,
    LIVE_INFO_KEY,
    NAMES_KEY,
    ONLINE_COUNTS_KEY,
    ONLINE_KEY,
    ArenaKeys,
    GameKeys,
    deadlines_key,
    history_key,
    listed_key,
    mm_done_key,
    mm_keys,
    offer_key,
    open_offers_key,
    polled_key,
    profile_key,
    rated_key,
    top_key,
)

__all__ = [
    "CALLS",
    "AccountClaimCall",
    "AddBotCall",
    "ArenaCall",
    "ArenaCreateCall",
    "ArenaFinishCall",
    "ArenaMemberCall",
    "ArenaScoreCall",
    "ArenaSeatCall",
    "ArenaStartedCall",
    "BotsCall",
    "BoundedAddCall",
    "ChatCall",
    "ClaimCall",
    "CommitCall",
    "CreateTableCall",
    "DealCloseCall",
    "DealOpenCall",
    "DealSeedCall",
    "DeferCall",
    "EnqueueCall",
    "FollowCall",
    "ForgetCall",
    "FormCall",
    "HistoryCall",
    "HoldCall",
    "InviteAnswerCall",
    "InviteOfferCall",
    "JoinTableCall",
    "LeaveCall",
    "LeaveTableCall",
    "LimitCall",
    "LiveAddCall",
    "LiveRemoveCall",
    "MatchCall",
    "OnlineCall",
    "PasswordUpgradeCall",
    "RangeCall",
    "RateCall",
    "RatedSeat",
    "SessionsCall",
    "StartTableCall",
    "StartedCall",
    "TableCall",
    "lua_folder",
    "register",
    "source",
]

Argv = list[Any]


def lua_folder(script: str) -> Traversable:
    """The `lua/` folder holding <script>.lua: the one of the package whose script it is."""
    root = resources.files("moose_server")
    for package in sorted(root.iterdir(), key=lambda p: p.name):
        folder = package / "lua"
        if (folder / f"{script}.lua").is_file():
            return folder
    raise FileNotFoundError(f"no package of moose_server has lua/{script}.lua")


@functools.cache
def source(script: str) -> str:
    """The text of <script>.lua; a matchmaking script comes with its prelude and epilogue,
    an arena's with the prelude naming its keys."""
    lua = lua_folder(script)
    body = (lua / f"{script}.lua").read_text()
    if script.startswith("arena_"):
        return "\n".join(((lua / "arena_lib.lua").read_text(), body))
    if not script.startswith("mm_"):
        return body
    end = "return main()\n" if script in _READ_ONLY else (lua / "mm_end.lua").read_text()
    return "\n".join(((lua / "mm_lib.lua").read_text(), body, end))


def register(redis: Any, call: type[Any]) -> Any:
    """Register the script of a call type on a client (redis-py's `AsyncScript`)."""
    return redis.register_script(source(call.SCRIPT))


# -- games --------------------------------------------------------------------------


@dataclass(frozen=True)
class CommitCall:
    """One step of a game (lua/commit.lua): version check, move id, state, events, deadline.

    `data`, each event and its state snapshot may come packed already (bytes); a
    snapshot of None is not kept. `deadline_ms`: from now (> 0), 0 clears it, -1
    keeps it. `ttl` > 0 ends the game: its hash is kept that long (s), its stream
    and move ids `grace_ms`. `auto`: the server plays the seat to act next;
    `autos`, where given, says it per event (a step with forced passes folded in).
    `record`: the packed record of a rated game this commit ends (kept
    `record_ttl` s). `due`: a timeout's, the deadline it fires for; a deadline
    deferred since (DeferCall) makes the commit stale.
    """

    SCRIPT: ClassVar[str] = "commit"

    game: str
    expected: int  # the version the step was made on
    data: dict[str, Any] | bytes
    events: Sequence[tuple[dict[str, Any] | bytes, dict[str, Any] | bytes | None]]
    deadline_ms: int
    move_field: str = ""  # keys.move_field of the player's move id; "" for none
    ttl: int = 0
    record: bytes = b""
    record_ttl: int = 0
    auto: bool = False
    autos: Sequence[bool] = ()  # per event; () : `auto` for every event
    grace_ms: int = 0
    channel: bytes = GAMES_CHANNEL  # the wake-up's while no instance follows the game
    due: int = 0  # a timeout's deadline (ms), which the game must still have; 0: any
    own: bytes = b""  # the committing instance's wake-up channel: its hub has the events

    def build(self, keys: GameKeys) -> tuple[list[str], Argv]:
        """KEYS and ARGV as commit.lua reads them, for the game's `keys`."""
        argv: Argv = [
            self.expected, self.move_field, _packed(self.data), self.deadline_ms, self.game,
            self.channel, self.ttl, min(self.grace_ms, self.ttl * 1000) if self.ttl else 0,
            self.record, self.record_ttl, len(self.events), self.due, self.own,
        ]  # fmt: skip
        autos = self.autos or [self.auto] * len(self.events)
        for (event, state), auto in zip(self.events, autos, strict=True):
            argv += [_packed(event), b"" if state is None else _packed(state), int(auto)]
        return [keys.game, keys.events, keys.deadlines, keys.unrated, keys.record,
                keys.moves], argv  # fmt: skip


@dataclass(frozen=True)
class FollowCall:
    """An instance follows a game (lua/follow.lua): the game's wake-ups come to its
    `channel`, or to `everyone` once `most` channels are listed."""

    SCRIPT: ClassVar[str] = "follow"

    channel: bytes
    everyone: bytes = GAMES_CHANNEL
    most: int = 8

    def build(self, keys: GameKeys) -> tuple[list[str], Argv]:
        """KEYS and ARGV as follow.lua reads them, for the game's `keys`."""
        return [keys.game], [self.channel, self.everyone, self.most]


@dataclass(frozen=True)
class ClaimCall:
    """Claim the due deadlines of one bucket (lua/claim.lua), or move them after an outage."""

    SCRIPT: ClassVar[str] = "claim"

    bucket: int
    lease_ms: int
    limit: int  # entries claimed at most
    outage_ms: int  # no claim of the bucket for longer: the service was down
    grace_ms: int  # then every deadline is at least this far after it is back
    # The Redis time of the caller's last claim of this bucket (0: none): a poll
    # stamp older than it means Redis lost its last writes, an outage too.
    seen_ms: int = 0

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as claim.lua reads them."""
        keys = [deadlines_key(self.bucket), polled_key(self.bucket)]
        return keys, [self.lease_ms, self.limit, self.outage_ms, self.grace_ms, self.seen_ms]


@dataclass(frozen=True)
class DeferCall:
    """Defer a game's deadlines `grace_ms` from now at least (lua/defer.lua): its
    players are being told that Redis lost its last writes."""

    SCRIPT: ClassVar[str] = "defer"

    game: str
    grace_ms: int

    def build(self, keys: GameKeys) -> tuple[list[str], Argv]:
        """KEYS and ARGV as defer.lua reads them, for the game's `keys`."""
        return [keys.game, keys.deadlines], [self.game, self.grace_ms]


@dataclass(frozen=True)
class LimitCall:
    """Take a token from a rate limit (lua/limit.lua), or give one back (`give`)."""

    SCRIPT: ClassVar[str] = "limit"

    key: str  # keys.limit_key
    interval_ms: int
    burst: int = 0
    give: bool = False

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as limit.lua reads them."""
        return [self.key], [self.interval_ms, self.burst, "give" if self.give else "take"]


@dataclass(frozen=True)
class LiveAddCall:
    """List a public game among the live ones (lua/live_add.lua), keeping the newest `kept`."""

    SCRIPT: ClassVar[str] = "live_add"

    game: str
    summary: bytes  # packed
    kept: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as live_add.lua reads them."""
        return [LIVE_GAMES_KEY, LIVE_INFO_KEY], [self.game, self.summary, self.kept]


@dataclass(frozen=True)
class LiveRemoveCall:
    """Forget games of the index of live games (lua/live_remove.lua)."""

    SCRIPT: ClassVar[str] = "live_remove"

    games: tuple[str, ...]

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as live_remove.lua reads them."""
        return [LIVE_GAMES_KEY, LIVE_INFO_KEY], list(self.games)


@dataclass(frozen=True)
class OnlineCall:
    """Write an instance's count of players (lua/online.lua); it answers the service's."""

    SCRIPT: ClassVar[str] = "online"

    instance: str
    players: int
    ttl_ms: int  # until the entry lapses

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as online.lua reads them."""
        return [ONLINE_KEY, ONLINE_COUNTS_KEY], [self.instance, self.players, self.ttl_ms]


# -- holds: what one client holds ---------------------------------------------


@dataclass(frozen=True)
class HoldCall:
    """Take, swap or drop an id in what one client holds (lua/hold.lua)."""

    SCRIPT: ClassVar[str] = "hold"

    key: str  # keys.hold_key
    op: str  # "take" (only under `limit`), "swap" (`old` becomes `id`), "drop"
    id: str
    limit: int = 0
    ttl_ms: int = 0
    old: str = ""

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as hold.lua reads them."""
        return [self.key], [self.op, self.limit, self.ttl_ms, self.id, self.old]


@dataclass(frozen=True)
class SessionsCall:
    """One more, one fewer, or a renewed lease of one process' bot sessions of an address
    (lua/sessions.lua)."""

    SCRIPT: ClassVar[str] = "sessions"

    key: str  # keys.sessions_key
    op: str  # "enter", "leave", "renew"
    process: str
    limit: int = 0
    lease_ms: int = 0

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as sessions.lua reads them."""
        return [self.key], [self.op, self.process, self.limit, self.lease_ms]


# -- players ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RatedSeat:
    """One seat's part of a rating update (see lua/rate.lua)."""

    player: str
    name: str
    bot: bool
    mu_delta: float
    sigma_ratio: float
    entry: str  # the history entry, JSON


@dataclass(frozen=True)
class RateCall:
    """Apply a finished game's rating changes once (lua/rate.lua)."""

    SCRIPT: ClassVar[str] = "rate"

    game: str
    seats: Sequence[RatedSeat]
    marker_ttl: int  # s: how long the "rated" marker stays
    history_size: int
    guest_ttl_ms: int
    provisional_games: int
    base: float  # the display scale of ratings.display
    scale: float
    base_ordinal: float
    spread: float
    mu: float  # a newcomer's
    sigma: float

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as rate.lua reads them."""
        keys = [rated_key(self.game), top_key("humans"), top_key("bots"), GUESTS_KEY]
        argv: Argv = [
            self.marker_ttl, self.history_size, self.guest_ttl_ms, self.provisional_games,
            self.base, self.scale, self.base_ordinal, self.spread, self.mu, self.sigma,
            len(self.seats),
        ]  # fmt: skip
        for s in self.seats:
            keys += [profile_key(s.player), history_key(s.player)]
            argv += [s.player, s.name, int(s.bot), repr(s.mu_delta), repr(s.sigma_ratio), s.entry]
        return keys, argv


@dataclass(frozen=True)
class HistoryCall:
    """Put a finished game in the histories of the players it did not rate, once
    (lua/history.lua)."""

    SCRIPT: ClassVar[str] = "history"

    game: str
    entries: Sequence[tuple[str, str]]  # (player, history entry JSON)
    marker_ttl: int  # s: how long the "listed" marker stays
    history_size: int
    guest_ttl_ms: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as history.lua reads them."""
        keys = [listed_key(self.game)]
        argv: Argv = [self.marker_ttl, self.history_size, self.guest_ttl_ms, len(self.entries)]
        for player, entry in self.entries:
            keys += [profile_key(player), history_key(player)]
            argv.append(entry)
        return keys, argv


@dataclass(frozen=True)
class AccountClaimCall:
    """Make a player an account under a name (lua/account_claim.lua)."""

    SCRIPT: ClassVar[str] = "account_claim"

    player: str
    name_key: str  # the name's look-alike key (identity.name_key)
    name: str
    pw: str  # the password's scrypt hash
    bot: bool
    now: int  # ms

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as account_claim.lua reads them."""
        keys = [NAMES_KEY, profile_key(self.player), history_key(self.player), GUESTS_KEY]
        return keys, [self.name_key, self.player, self.name, self.pw, int(self.bot), self.now]


@dataclass(frozen=True)
class PasswordUpgradeCall:
    """Logins: a verified password's hash of older parameters replaced by one
    of today's (lua/pw_upgrade.lua), unless the password changed meanwhile."""

    SCRIPT: ClassVar[str] = "pw_upgrade"

    player: str
    old: str  # the hash the login verified
    new: str

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as pw_upgrade.lua reads them."""
        return [profile_key(self.player)], [self.old, self.new]


# -- matchmaking ----------------------------------------------------------------------

# Scripts that change nothing: no nonce kept, no mm_end.lua.
_READ_ONLY = frozenset({"mm_table"})


@dataclass(frozen=True)
class MatchCall:
    """A matchmaking script (lua/mm_*.lua): KEYS are every `mm_keys` and the call's
    `mm_done_key`; ARGV a nonce, then the call's fields in their order (booleans as
    1/0), as the script's header lists them."""

    SCRIPT: ClassVar[str] = ""

    def build(self, nonce: str) -> tuple[list[str], Argv]:
        """KEYS and ARGV as the script reads them; `nonce` answers a re-sent call once."""
        values = (getattr(self, f.name) for f in dataclasses.fields(self))
        keys = [*mm_keys(), mm_done_key(nonce)]
        return keys, [nonce, *(int(v) if isinstance(v, bool) else v for v in values)]


@dataclass(frozen=True)
class EnqueueCall(MatchCall):
    """Put a ticket in the queue."""

    SCRIPT: ClassVar[str] = "mm_enqueue"

    player: str
    ticket: str  # JSON {name, min, max, inst, r}
    max_players: int


@dataclass(frozen=True)
class LeaveCall(MatchCall):
    """Take a player's ticket out of the queue."""

    SCRIPT: ClassVar[str] = "mm_leave"

    player: str


@dataclass(frozen=True)
class RangeCall(MatchCall):
    """Change the sizes a waiting ticket accepts, keeping its place."""

    SCRIPT: ClassVar[str] = "mm_range"

    player: str
    min_players: int
    max_players: int


@dataclass(frozen=True)
class BotsCall(MatchCall):
    """A waiting player asks for a table of `players` with bots in the empty seats."""

    SCRIPT: ClassVar[str] = "mm_bots"

    player: str
    players: int
    offer_after_us: int  # the ticket must have waited this long


@dataclass(frozen=True)
class FormCall(MatchCall):
    """Seat whoever the queue can seat now."""

    SCRIPT: ClassVar[str] = "mm_form"

    match_wait_us: int
    bots_after_us: int  # 0 = never
    scan: int  # the oldest tickets looked at
    lease_us: int
    window: float  # rating points apart at once...
    widen: float  # ...and more a second waited
    most: int  # tables formed at most


@dataclass(frozen=True)
class ForgetCall(MatchCall):
    """Drop every ticket taken through one server instance."""

    SCRIPT: ClassVar[str] = "mm_forget"

    instance: str


@dataclass(frozen=True)
class CreateTableCall(MatchCall):
    """Open a private table with the host in seat 0."""

    SCRIPT: ClassVar[str] = "mm_create"

    code: str
    host: str
    name: str
    players: int
    ttl_us: int
    rated: bool
    host_is_bot: bool
    fair: bool = False  # the host asked for a provably fair deal


@dataclass(frozen=True)
class JoinTableCall(MatchCall):
    """Take the first empty seat of a private table."""

    SCRIPT: ClassVar[str] = "mm_join"

    code: str
    player: str
    name: str
    ttl_us: int
    is_bot: bool
    fair: bool = False  # the player asked for a provably fair deal


@dataclass(frozen=True)
class AddBotCall(MatchCall):
    """The host puts a bot in the first empty seat."""

    SCRIPT: ClassVar[str] = "mm_add_bot"

    code: str
    player: str
    bot: str
    ttl_us: int


@dataclass(frozen=True)
class LeaveTableCall(MatchCall):
    """A player leaves a private table."""

    SCRIPT: ClassVar[str] = "mm_leave_table"

    code: str
    player: str
    ttl_us: int


@dataclass(frozen=True)
class StartTableCall(MatchCall):
    """The host starts a private table."""

    SCRIPT: ClassVar[str] = "mm_start"

    code: str
    player: str
    lease_us: int


@dataclass(frozen=True)
class StartedCall(MatchCall):
    """The game of a formed table has been dealt: forget the table."""

    SCRIPT: ClassVar[str] = "mm_started"

    key: str


@dataclass(frozen=True)
class TableCall(MatchCall):
    """Read a private table."""

    SCRIPT: ClassVar[str] = "mm_table"

    code: str


# -- arena tournaments: every script gets one arena's ArenaKeys ----


@dataclass(frozen=True)
class ArenaCall:
    """An arena script (lua/arena_*.lua): KEYS are the arena's `ArenaKeys`; ARGV the
    call's fields in their order (booleans as 1/0), as the script's header lists them."""

    SCRIPT: ClassVar[str] = ""

    arena: str

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as the script reads them."""
        values = (getattr(self, f.name) for f in dataclasses.fields(self))
        return ArenaKeys.of(self.arena).all(), [
            int(v) if isinstance(v, bool) else v for v in values
        ]


@dataclass(frozen=True)
class ArenaCreateCall(ArenaCall):
    """Create an arena unless that id exists."""

    SCRIPT: ClassVar[str] = "arena_create"

    name: str
    who: str  # bots, people or all
    min_players: int
    max_players: int
    start_ms: int  # 0: now (Redis' clock)
    duration_ms: int
    rated: bool
    by: str


@dataclass(frozen=True)
class ArenaMemberCall(ArenaCall):
    """A member joins, pauses or leaves."""

    SCRIPT: ClassVar[str] = "arena_member"

    player: str
    action: str  # join, pause, leave
    member: str = "{}"  # JSON {name, min, max, bot, r} for join


@dataclass(frozen=True)
class ArenaSeatCall(ArenaCall):
    """Seat the waiting members; hand out again the tables not dealt in time."""

    SCRIPT: ClassVar[str] = "arena_seat"

    lease_ms: int
    scan: int


@dataclass(frozen=True)
class ArenaStartedCall(ArenaCall):
    """An arena table's game is dealt."""

    SCRIPT: ClassVar[str] = "arena_started"

    key: str


@dataclass(frozen=True)
class ArenaScoreCall(ArenaCall):
    """Apply a finished arena game's points, once."""

    SCRIPT: ClassVar[str] = "arena_score"

    game: str
    result: str  # JSON {players, points, places, away}


@dataclass(frozen=True)
class ArenaFinishCall(ArenaCall):
    """Close an arena whose window is over, or end its window now."""

    SCRIPT: ClassVar[str] = "arena_finish"

    now: bool = False
    keep: int = 30 * 86400  # a closed arena's standings and games are kept this long (s)


def _packed(value: dict[str, Any] | bytes) -> bytes:
    return value if isinstance(value, bytes) else pack(value)


# -- provably fair deals ------------------------------------------------------


@dataclass(frozen=True)
class DealOpenCall:
    """A fair deal waits for the seats' seeds (lua/deal_open.lua); its deadline member
    fires `seed_time_ms` from now. `ttl` (s) bounds the deal hash should nobody deal it."""

    SCRIPT: ClassVar[str] = "deal_open"

    keys: GameKeys
    data: bytes  # packed
    seed_time_ms: int
    ttl: int
    fair_seats: tuple[int, ...]

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as deal_open.lua reads them."""
        k = self.keys
        return [k.deal, k.game, k.deadlines], [
            k.deal_member,
            self.data,
            self.seed_time_ms,
            self.ttl,
            *self.fair_seats,
        ]


@dataclass(frozen=True)
class DealSeedCall:
    """A seat's seed for a waiting deal (lua/deal_seed.lua); the last one closes it."""

    SCRIPT: ClassVar[str] = "deal_seed"

    keys: GameKeys
    seat: int
    seed: str
    nonce: str  # a resent call (redis-py's retry) gets the first answer

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as deal_seed.lua reads them."""
        return [self.keys.deal, self.keys.game], [self.seat, self.seed, self.nonce]


@dataclass(frozen=True)
class DealCloseCall:
    """Close a waiting deal to seeds and read it (lua/deal_close.lua)."""

    SCRIPT: ClassVar[str] = "deal_close"

    keys: GameKeys

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as deal_close.lua reads them."""
        return [self.keys.deal, self.keys.deadlines], [self.keys.deal_member]


# Rematch and challenge offers (tables/invites.py).


@dataclass(frozen=True)
class InviteOfferCall:
    """Make an offer unless one is open (lua/invite_offer.lua); counts a challenger's."""

    SCRIPT: ClassVar[str] = "invite_offer"

    offer: str  # its id
    sender: str
    data: str  # the offer as JSON
    wait_ms: int
    most_open: int  # 0: not counted (a rematch)
    grace_ms: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as invite_offer.lua reads them."""
        keys = [offer_key(self.offer), open_offers_key(self.sender)]
        return keys, [self.data, self.wait_ms, self.most_open, self.grace_ms]


@dataclass(frozen=True)
class InviteAnswerCall:
    """Accept, decline, cancel or expire an offer, atomically (lua/invite_answer.lua)."""

    SCRIPT: ClassVar[str] = "invite_answer"

    offer: str
    sender: str
    action: str
    player: str
    reason: str = ""
    next_game: str = ""

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as invite_answer.lua reads them."""
        keys = [offer_key(self.offer), open_offers_key(self.sender)]
        return keys, [self.action, self.player, self.reason, self.next_game]


# -- chat, blocks and follows ------------------------------------


@dataclass(frozen=True)
class BoundedAddCall:
    """Add to a hash of bounded size (lua/bounded_add.lua): 1 added, 0 there, -1 full."""

    SCRIPT: ClassVar[str] = "bounded_add"

    key: str  # keys.blocks_key, follows_key, followers_key
    member: str  # a player id
    value: str  # their name
    most: int
    ttl_ms: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as bounded_add.lua reads them."""
        return [self.key], [self.member, self.value, self.most, self.ttl_ms]


@dataclass(frozen=True)
class ChatCall:
    """Keep a chat line and publish it (lua/chat.lua); answers the line's id."""

    SCRIPT: ClassVar[str] = "chat"

    key: str  # keys.chat_key or table_chat_key
    life: str  # the game's events key (a table's chat: `key` again)
    channel: bytes
    target: str  # game id or table code
    room: str
    line: bytes  # packed
    kept: int
    ttl_ms: int

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as chat.lua reads them."""
        argv = [self.channel, self.target, self.room, self.line, self.kept, self.ttl_ms]
        return [self.key, self.life], argv


# Every call type, one per script (tests/test_scripts.py checks that none is missing).
CALLS: tuple[type[Any], ...] = (
    CommitCall, ClaimCall, DeferCall, FollowCall, LimitCall, LiveAddCall, LiveRemoveCall,
    OnlineCall, RateCall, HistoryCall,
    AccountClaimCall, EnqueueCall, LeaveCall, RangeCall, BotsCall, FormCall, ForgetCall,
    CreateTableCall, JoinTableCall, AddBotCall, LeaveTableCall, StartTableCall, StartedCall,
    TableCall,
    PasswordUpgradeCall, HoldCall, SessionsCall, DealOpenCall, DealSeedCall, DealCloseCall,
    InviteOfferCall, InviteAnswerCall,
    ArenaCreateCall, ArenaMemberCall, ArenaSeatCall, ArenaStartedCall, ArenaScoreCall,
    ArenaFinishCall,
    BoundedAddCall, ChatCall,
)  # fmt: skip
