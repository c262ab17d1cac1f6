"""The table of per-client limits: each one's name, what it counts, per whom, how
much at once and how fast it refills, the settings that change it, and the code a
refusal gets.

`RATES` are rate limits (a token bucket: `burst` at once, then one more every
`every` seconds), taken by limiter.Limiter; `HOLDS` are limits on what one client
holds at once (quotas.py, and the features that count what a player keeps).
PROTOCOL.md's "Limits" section says each in words that `said` and `row` write
from this table, and tests/test_documented_facts.py checks that it does.

One rule for every refusal: a request a limit refuses takes nothing from any limit
(the tokens it took from its other counters are given back), so a client that
retries too early never pushes its next allowed request later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from moose_server.settings import Settings

__all__ = ["COSTS", "HEADER", "HOLDS", "RATES", "Hold", "Rate", "hold", "rate", "row", "said"]

# Which of the requests a limit lets through keep the token they took (a request the
# limit itself refuses never takes one).
COSTS = {
    "done": "it succeeds",
    "failed": "it is refused for another reason",
    "tried": "it is let through, whatever its answer",
}

PER = {
    "player": "per player",
    "address": "per client address",
    "pair": "per client address and account",
    "socket": "per socket",
}


@dataclass(frozen=True)
class Rate:
    """A rate limit: `burst` at once, then one more every `every` seconds."""

    name: str  # its refusals' label (`moose admin refusals`) and its keys' kind
    counts: str  # what one token pays for, as PROTOCOL.md says it
    per: tuple[str, ...]  # whose counters: one of PER's each, all taken together
    burst: Callable[[Settings], int]
    every: Callable[[Settings], float]  # seconds until one more token
    settings: tuple[str, ...]  # the Settings fields that change it
    message: str  # the refusal's message (`{burst}`: the burst)
    costs: str = "done"  # which requests it lets through keep their token (COSTS)
    shared: bool = True  # in Redis, for every instance (else one socket's, in memory)
    code: str = "rate_limited"
    key: str = ""  # the kind in its keys (keys.limit_key), when not `name`
    note: str = ""  # what PROTOCOL.md adds after the code

    @property
    def kind(self) -> str:
        """The kind its keys are named by."""
        return self.key or self.name


@dataclass(frozen=True)
class Hold:
    """A limit on what one client holds at once: `setting` of them."""

    name: str
    counts: str
    per: str
    setting: str
    code: str


def _hourly(field: str) -> Callable[[Settings], float]:
    return lambda s: 3600 / getattr(s, field)


def _field(field: str) -> Callable[[Settings], int]:
    return lambda s: int(getattr(s, field))


RATES: tuple[Rate, ...] = (
    Rate(
        "messages",
        "messages sent on one socket",
        ("socket",),
        _field("burst"),
        lambda s: 1 / s.rate,
        ("burst", "rate", "rate_strikes"),
        "too many messages; slow down",
        costs="tried",
        shared=False,
        note="; `MOOSE_RATE_STRIKES` (5) refusals in a row: close `1008`",
    ),
    Rate(
        "code",
        "refused requests naming a join code",
        ("address", "player"),
        _field("code_guesses"),
        lambda s: s.code_guess_interval,
        ("code_guesses", "code_guess_interval"),
        "too many join codes tried; wait and try again",
        costs="failed",
        note=", before the code is looked at",
    ),
    Rate(
        "login",
        "failed logins of one client address on one account",
        ("pair",),
        _field("login_attempts"),
        lambda s: s.login_window / s.login_attempts,
        ("login_attempts", "login_window"),
        "too many failed logins; try again later",
        costs="failed",
        note=", before the password is checked",
    ),
    Rate(
        "login_any",
        "failed logins of one client address on any accounts",
        ("address",),
        _field("login_address_attempts"),
        lambda s: s.login_window / s.login_address_attempts,
        ("login_address_attempts", "login_window"),
        "too many failed logins; try again later",
        costs="failed",
        key="login",
        note=", before the password is checked",
    ),
    Rate(
        "register",
        "accounts registered (each try costs a password hash)",
        ("address",),
        _field("registrations_per_hour"),
        _hourly("registrations_per_hour"),
        ("registrations_per_hour",),
        "too many accounts registered from your address; try again later",
        costs="tried",  # each costs a password hash, even one whose name was taken
        note=", before the password is hashed",
    ),
    Rate(
        "report",
        "reports of players",
        ("player", "address"),
        _field("report_burst"),
        lambda s: s.report_interval,
        ("report_burst", "report_interval"),
        "too many reports; wait and try again",
    ),
    Rate(
        "chat",
        "chat lines",
        ("player", "address"),
        _field("chat_burst"),
        lambda s: s.chat_interval,
        ("chat_burst", "chat_interval"),
        "you are chatting too fast; wait and try again",
        note="; the line is not kept",
    ),
    Rate(
        "social",
        "follows and blocks added",
        ("address",),
        _field("social_adds_per_hour"),
        _hourly("social_adds_per_hour"),
        ("social_adds_per_hour",),
        "your address added {burst} follows and blocks this hour; wait",
    ),
    Rate(
        "arena",
        "new arena members (a member coming back is not new)",
        ("address",),
        _field("arena_joins_per_hour"),
        _hourly("arena_joins_per_hour"),
        ("arena_joins_per_hour",),
        "your address joined {burst} arenas as new members this hour; wait",
    ),
    Rate(
        "following",
        "`following` answers",
        ("socket",),
        lambda s: 1,
        lambda s: s.following_every,
        ("following_every",),
        "`following` is answered once every few seconds per socket; wait",
        costs="tried",
        shared=False,
        note="; meanwhile the player's other sockets get the same answer",
    ),
    Rate(
        "challenge",
        "challenges sent",
        ("player",),
        _field("challenges_per_hour"),
        _hourly("challenges_per_hour"),
        ("challenges_per_hour",),
        "you sent {burst} challenges this hour; try again later",
    ),
    Rate(
        "challenge_address",
        "challenges sent by the players of one address",
        ("address",),
        _field("challenges_per_address_hour"),
        _hourly("challenges_per_address_hour"),
        ("challenges_per_address_hour",),
        "{burst} challenges were sent from your address this hour; try again later",
    ),
    Rate(
        "confirm_mail",
        "confirm mails asked for (`notify_settings` with a new `email`)",
        ("player", "address"),
        _field("confirm_mails_per_hour"),
        _hourly("confirm_mails_per_hour"),
        ("confirm_mails_per_hour",),
        "you asked for {burst} confirm mails this hour; try again later",
    ),
    Rate(
        "start",
        "private tables' games started",
        ("address",),
        _field("table_starts_per_hour"),
        _hourly("table_starts_per_hour"),
        ("table_starts_per_hour",),
        "too many private tables started from your address; wait",
    ),
    Rate(
        "bot",
        "new bot players (`hello` as a bot without a `token`)",
        ("address",),
        _field("bot_hellos_per_hour"),
        _hourly("bot_hellos_per_hour"),
        ("bot_hellos_per_hour",),
        "too many new bot players from your address; reconnect with a bot's token, or wait",
        costs="tried",
        note="; a bot that comes back with its `token` is not new",
    ),
    Rate(
        "guest",
        "new guests (`hello` with a `name` alone: no `token`, `password` or `bot`)",
        ("address",),
        _field("guest_hellos_per_hour"),
        _hourly("guest_hellos_per_hour"),
        ("guest_hellos_per_hour",),
        "too many new guests from your address; come back with your `token`, or wait",
        costs="tried",
        note=", before the guest is made; a guest who comes back with their `token` is not new",
    ),
    Rate(
        "api",
        "HTTP API requests (`/api/`)",
        ("address",),
        _field("api_burst"),
        lambda s: 1 / s.api_rate,
        ("api_burst", "api_rate"),
        "too many API requests from your address; slow down",
        costs="tried",
        note=": HTTP `429` with `Retry-After` (s) and "
        '`{"error": "rate_limited", "message": ..., "retry_after": ms}`',
    ),
)

HOLDS: tuple[Hold, ...] = (
    Hold(
        "games",
        "unfinished games a player is seated in",
        "player",
        "games_per_player",
        "too_many_games",
    ),
    Hold(
        "correspondence_games",
        "unfinished correspondence games (days per move) a player is seated in",
        "player",
        "correspondence_games",
        "too_many_games",
    ),
    Hold(
        "correspondence_address_games",
        "unfinished correspondence games the players of one address are seated in",
        "address",
        "correspondence_games_per_address",
        "too_many_games",
    ),
    Hold(
        "address_games",
        "unfinished games the players of one address are seated in",
        "address",
        "games_per_address",
        "too_many_games",
    ),
    Hold(
        "tables",
        "open private tables hosted from one address",
        "address",
        "tables_per_address",
        "too_many_tables",
    ),
    Hold(
        "bot_sessions",
        "sockets that said `hello` as a bot, from one address at once",
        "address",
        "bot_sessions_per_address",
        "too_many_sessions",
    ),
    Hold(
        "watched",
        "games one socket watches as a spectator",
        "socket",
        "watched_per_socket",
        "too_many_watched",
    ),
    Hold(
        "arenas_watched",
        "arenas one socket watches",
        "socket",
        "arenas_watched",
        "too_many_watched",
    ),
    Hold(
        "challenges_open",
        "challenges waiting for an answer",
        "player",
        "challenges_open",
        "too_many_challenges",
    ),
    Hold("follows", "players one player follows", "player", "follows_max", "too_many_follows"),
    Hold("blocks", "players one player blocks", "player", "blocks_max", "too_many_blocks"),
)

_BY_NAME = {r.name: r for r in RATES}


_HOLDS = {h.name: h for h in HOLDS}


def hold(name: str) -> Hold:
    """The hold limit called `name` (KeyError: no such limit)."""
    return _HOLDS[name]


def rate(name: str) -> Rate:
    """The rate limit called `name` (KeyError: no such limit)."""
    return _BY_NAME[name]


def _number(x: float) -> str:
    return f"{x:,.0f}" if x == round(x) else f"{x:g}"


def _every(seconds: float) -> str:
    """'every 2 minutes', 'every 6 s', 'every hour', '10 a second' (of one token)."""
    if seconds < 1:
        return f"{_number(1 / seconds)} more a second"
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            n = seconds // size
            return f"one more every {unit}" if n == 1 else f"one more every {n:.0f} {unit}s"
    return f"one more every {_number(seconds)} s"


def said(limit: Rate, settings: Settings) -> str:
    """The limit in words: '30 at once, then one more every 2 minutes, per player'."""
    burst, every = limit.burst(settings), limit.every(settings)
    whom = " and ".join(PER[p] for p in limit.per).replace(" and per ", " and ")
    shared = ", across instances" if limit.shared else ""
    return f"{_number(burst)} at once, then {_every(every)}, {whom}{shared}"


HEADER = "| rate | how many | past it | a request counts when |"


def row(limit: Rate, settings: Settings) -> str:
    """The limit's row of PROTOCOL.md's table of rates."""
    names = ", ".join(f"`MOOSE_{s.upper()}`" for s in limit.settings if s != "rate_strikes")
    past = f"`{limit.code}` (`retry_after`){limit.note}"
    return f"| {limit.counts} | {said(limit, settings)} ({names}) | {past} | {COSTS[limit.costs]} |"


if __name__ == "__main__":  # print the table, to paste into PROTOCOL.md
    print(HEADER)
    print("| --- | --- | --- | --- |")
    for each in RATES:
        print(row(each, Settings()))
