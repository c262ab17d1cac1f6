"""Every Redis key and pub/sub channel of the server: the one module that names them.

Every key has one form, ``moose:{tag}:kind[:id]``. The part in braces is the
key's hash tag: Redis Cluster hashes only that part to pick the key's slot. A
Lua script may touch only keys of one slot (the client refuses a script whose
KEYS span two, and there is no MULTI), so the keys that one script touches
share one tag:

``{b<n>}`` -- a bucket of games (`bucket`: crc32 of the game id, modulo
    ``MOOSE_BUCKETS``). lua/commit.lua writes a game's hash, stream and move
    ids, its bucket's deadline set and unrated set and a rated game's record in
    one step; lua/claim.lua reads a bucket's deadlines and poll stamp::

        moose:{b7}:game:<id>     hash: v (version = last seq), data (msgpack;
                                 zlib-compressed once the game is over), dl
                                 (deadline ms), w (the wake-up channels of the
                                 instances that follow it, lua/follow.lua), and
                                 while it goes on its move ids ("m:<player>:
                                 <move_id>" -> seq of its first event): a
                                 resent move gets its first answer
        moose:{b7}:events:<id>   stream, entry id "<seq>-0": e (event), a ("1":
                                 the server plays the seat to act), d (deadline
                                 ms), t (server time ms), and on some entries s
                                 (the state snapshot after it; streams.py says which)
        moose:{b7}:moves:<id>    hash: a finished game's move ids, moved out of
                                 its game hash for the grace (lua/commit.lua)
        moose:{b7}:record:<id>   a rated game's record (msgpack, zlib), record_ttl
        moose:{b7}:deal:<id>     hash: a provably fair deal waiting for its seeds
                                 (deals/deals.py): data (msgpack: seats,
                                 server seed...), wait (seeds still awaited),
                                 f<seat> (a fair seat), s<seat> (its seed), n<seat>
                                 (its nonce), closed; gone once the game is dealt
        moose:{b7}:deadlines     sorted set: game id -> deadline ms, and
                                 "deal:<id>" -> when a fair deal waits no more
        moose:{b7}:unrated       sorted set: rated game id -> when it ended (ms)
        moose:{b7}:polled        Redis time (ms) of the bucket's last deadline claim

    (moose_loadtest's storage ceiling runs the commit script on game keys of its
    own tag, ``moose:{lt}:...``, apart from the server's, and deletes them after.)

``{pl}`` -- players. lua/rate.lua applies a finished game to every seat's
    profile and history and both leaderboards of its pool at once; lua/account_claim.lua
    writes the names index, a profile, its history and the guests::

        moose:{pl}:p:<player>    hash: name, mu, sigma, games, rating (real time),
                                 cmu, csigma, cgames, crating (correspondence), bot, on,
                                 con (the pool's leaderboard it was last put on: h, b),
                                 an account's pw (scrypt), gen (token generation),
                                 since (ms); a guest's expires guest_ttl after
                                 their last rated game (gx: when, ms; renewed once
                                 under 167/168 of guest_ttl is left); revoked "1": a
                                 banned guest's tokens are refused (kept token_ttl)
        moose:{pl}:h:<player>    list: the player's last rated games (JSON)
        moose:{pl}:names         hash: an account name's look-alike key -> player
        moose:{pl}:names_keyed   the key function the names hash is keyed by
                                 (names.KEY_VERSION; PlayerStore.rekey_names)
        moose:{pl}:top:humans    sorted set: player -> rating (not provisional)
        moose:{pl}:top:bots      the same for bots
        moose:{pl}:ctop:humans   the same of correspondence ratings (crating)
        moose:{pl}:ctop:bots
        moose:{pl}:guests        sorted set: guest -> when their rating expires (ms)
        moose:{pl}:rated:<game>  "1" once the game is rated (kept 2 x game_ttl)

``{mm}`` -- matchmaking: every lua/mm_*.lua script gets all of `mm_keys` (see
    their docstrings there), in that order.

``{ar}`` -- arena tournaments (arenas/store.py): every
    lua/arena_*.lua script gets one arena's `ArenaKeys`, in their order::

        moose:{ar}:arenas        sorted set: arena id -> its end (ms); a closed
                                 arena's keys expire after MOOSE_RECORD_TTL
        moose:{ar}:busy          hash: player -> the arena game they are seated in
        moose:{ar}:arena:<id>    hash: the arena (name, for, min, max, rated,
                                 start, end, status, ver, running, seq, winners)
        moose:{ar}:members:<id>  hash: player -> member JSON {name, min, max,
                                 bot, r, state, games}
        moose:{ar}:waiting:<id>  sorted set: waiting member -> points*10000 + rating
        moose:{ar}:points:<id>   sorted set: member -> points (the standings)
        moose:{ar}:games:<id>    hash: game id -> JSON {key, players, names,
                                 start; once scored: places, points, end}
        moose:{ar}:scored:<id>   set: games whose points are applied
        moose:{ar}:pending:<id>  hash: table key -> seats, not dealt yet
        moose:{ar}:leases:<id>   sorted set: table key -> when another instance
                                 may deal it (ms)
        moose:{ar}:won:<player>  sorted set: arena id -> its end (ms): arenas won

``{live}`` -- live public games (lua/live_add.lua, live_remove.lua) and players
    online (lua/online.lua)::

        moose:{live}:games       sorted set: game id -> start ms (the newest kept)
        moose:{live}:info        hash: game id -> msgpack summary
        moose:{live}:online      sorted set: instance id -> when its count lapses
        moose:{live}:counts      hash: instance id -> players connected to it

A key that no script touches together with another is tagged by its own
subject, so that such keys spread over the cluster's slots::

    moose:{<player>}:games            set of the player's unfinished games
    moose:{<instance>}:heartbeat      "1" with a TTL, or "dead" once another
                                      instance dropped its queue tickets
    moose:{<kind>:<per>:<subject>}:limit   a rate limit (lua/limit.lua): its next
                                      free time (ms), expiring when it is full
    moose:{tokens}:secret             the token secret every instance shares
    moose:{<kind>:address:<subject>}:hold   what one client address holds
                                      (lua/hold.lua): sorted set, a game id or join
                                      code (or a reservation "~<hex>") -> when taken (ms)
    moose:{bots:address:<subject>}:sessions  the bot sessions of one address
                                      (lua/sessions.lua): hash, <process> -> count and
                                      <process>@ -> when its lease ends (ms)

``{mod}`` -- moderation (moderation/store.py), small and bounded::

    moose:{mod}:bans                  hash: "account:<player>" or "address:<network>"
                                      -> ban (JSON: reason, until ms or 0, by, at)
    moose:{mod}:audit                 stream (capped): every moderator action
    moose:{mod}:refusals              stream (capped): recent refusals of limits
    moose:{mod}:heavy:<hour>:<limit>  sorted set: client -> refusals that hour (TTL)
    moose:{mod}:limits:<hour>         set: the limits refused that hour (TTL)
    moose:{mod}:reports               stream (capped): players' reports of players

Chat, blocks and follows (social/)::

    moose:{b7}:chat:<game>:<room>     list (capped): a game's chat, room "players" or
                                      "spectators" (lua/chat.lua); the game's bucket tag,
                                      so the script reads the events' lifetime
    moose:{table:<code>}:chat         list (capped): a private table's chat before its start
    moose:{<player>}:blocks           hash (bounded, lua/bounded_add.lua): players blocked,
                                      id -> name
    moose:{<player>}:follows          hash (bounded): players followed, id -> name
    moose:{<player>}:followers        hash (bounded): players following, id -> name
    (who is online, for follows too: presence_key below, social/presence.py)

Notices away from the page (notify/), each a small key::

    moose:{nt}:deliveries             stream (capped): notices to send, read by the
                                      consumer group "senders" (XREADGROUP, XAUTOCLAIM)
    moose:{nt}:due                    sorted set: "time running out" notices (JSON)
                                      -> when they are due (ms); moved to the stream then
    moose:{nt}:sent:<notice>          "1" once the notice went out (TTL): a reclaimed
                                      entry already sent is not sent again
    moose:{<player>}:push             hash (bounded): subscription id -> Web Push
                                      subscription (JSON: endpoint, keys)
    moose:{<player>}:notify           hash: per-kind settings ("0": off), email,
                                      email_ok ("1": confirmed), confirm and unsub
                                      (the tokens of the mail links)
    moose:{<player>}:told:<subject>   the id of the notice of that kind and game that
                                      went out lately (TTL: MOOSE_NOTIFY_QUIET)

Key names are built here, in Python, and passed to scripts in KEYS; no script
builds one. Pub/sub channels belong to no slot (a PUBLISH reaches every node):
a game's wake-up "<game id> <last seq>" goes to `wake_channel(instance)` of
each instance that follows the game (its sockets do; the game hash's field
`w` lists them, lua/follow.lua), but the one that committed it, and to
`GAMES_CHANNEL`, which every instance hears, while none follows it or once
too many do. A follower that hears steps gets instead the step
itself, published on the sharded channel `steps_channel(bucket, its wake
channel)` ("<game id> <first seq> <Redis ms> <deadline ms> " + msgpack
[event, state, ...]): tagged with the game's bucket, so that SPUBLISH reaches
only the shard that holds the game; `PLAYERS_CHANNEL` msgpack
[player id, message, message id] (or, for "seats:<game>", a message that holds
each seat's: store.SEATS), `MODERATION_CHANNEL` a moderator's notice
(msgpack map: ban, unban, end_session, takeover). They are a wake-up only; the
streams (and the bans hash) are the record.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

__all__ = [
    "ARENAS_KEY",
    "CHAT_CHANNEL",
    "DUE_NOTICES_KEY",
    "GAMES_CHANNEL",
    "GUESTS_KEY",
    "LIVE_GAMES_KEY",
    "LIVE_INFO_KEY",
    "LOADTEST_CHANNEL",
    "MM_KEY_KINDS",
    "MODERATION_CHANNEL",
    "NAMES_KEY",
    "NAMES_KEYED_KEY",
    "NOTICES_KEY",
    "ONLINE_COUNTS_KEY",
    "ONLINE_KEY",
    "PLAYERS_CHANNEL",
    "SECRET_KEY",
    "STEPS_MARK",
    "ArenaKeys",
    "GameKeys",
    "ModerationKeys",
    "arena_won_key",
    "blocks_key",
    "bucket",
    "challenged_key",
    "chat_key",
    "ctop_key",
    "deadlines_key",
    "followers_key",
    "follows_key",
    "history_key",
    "hold_key",
    "instance_key",
    "limit_key",
    "listed_key",
    "looking_key",
    "mm_done_key",
    "mm_key",
    "mm_keys",
    "move_field",
    "notify_key",
    "player_games_key",
    "polled_key",
    "presence_key",
    "profile_key",
    "push_key",
    "rated_key",
    "sent_key",
    "sessions_key",
    "steps_channel",
    "table_chat_key",
    "told_key",
    "top_key",
    "undealt_game",
    "unrated_key",
    "wake_channel",
]

PREFIX = "moose"

GAMES_CHANNEL = b"moose:games"
PLAYERS_CHANNEL = b"moose:players"
STEPS_MARK = b":s"  # the end of the wake-up channel of an instance that hears steps
LOADTEST_CHANNEL = b"moose:loadtest"  # moose_loadtest's Redis ceiling: a channel nobody hears
MODERATION_CHANNEL = b"moose:moderation"  # moderators' notices
CHAT_CHANNEL = b"moose:chat"  # chat lines: b"<game or code>\n<room>\n<id>\n<line>"


def _key(tag: str, kind: str, ident: str | None = None) -> str:
    """``moose:{tag}:kind[:id]``, the one form of every key."""
    tail = kind if ident is None else f"{kind}:{ident}"
    return f"{PREFIX}:{{{tag}}}:{tail}"


# -- games: one tag per bucket -----------------------------------------------------


def bucket(game: str, buckets: int) -> int:
    """The bucket of a game id (crc32, as Redis Cluster hashes its slots)."""
    return zlib.crc32(game.encode()) % buckets


def _bucket_tag(bucket: int) -> str:
    return f"b{bucket}"


def deadlines_key(bucket: int) -> str:
    """The deadline set of one bucket."""
    return _key(_bucket_tag(bucket), "deadlines")


def unrated_key(bucket: int) -> str:
    """The rated games of one bucket that ended and wait for their rating update."""
    return _key(_bucket_tag(bucket), "unrated")


def polled_key(bucket: int) -> str:
    """When a deadline claim last ran on one bucket (Redis time, ms)."""
    return _key(_bucket_tag(bucket), "polled")


@dataclass(frozen=True)
class GameKeys:
    """The keys of one game, all tagged with its bucket (each name made once a GameKeys:
    store.py keeps one for each game in play)."""

    id: str
    tag: str  # "b<bucket>"; moose_loadtest's storage ceiling uses its own, "lt"

    @classmethod
    def of(cls, game: str, buckets: int) -> GameKeys:
        """The keys of `game` among `buckets` buckets."""
        return cls(game, _bucket_tag(bucket(game, buckets)))

    @classmethod
    def loadtest(cls, game: str) -> GameKeys:
        """The keys of a game of moose_loadtest's storage ceiling: apart from the server's."""
        return cls(game, "lt")

    @functools.cached_property
    def game(self) -> str:
        """The game's hash."""
        return _key(self.tag, "game", self.id)

    @functools.cached_property
    def events(self) -> str:
        """The game's event stream."""
        return _key(self.tag, "events", self.id)

    @functools.cached_property
    def moves(self) -> str:
        """A finished game's move ids, for its grace (the game hash holds them before)."""
        return _key(self.tag, "moves", self.id)

    @functools.cached_property
    def record(self) -> str:
        """The kept record of a rated game."""
        return _key(self.tag, "record", self.id)

    # Provably fair deals: a deal waiting for the seats' seeds.

    @property
    def deal(self) -> str:
        """The game's deal while it waits for the seats' seeds."""
        return _key(self.tag, "deal", self.id)

    @property
    def deal_member(self) -> str:
        """The game's member in its bucket's deadline set while its deal waits."""
        return f"{DEAL_MEMBER}{self.id}"

    @functools.cached_property
    def deadlines(self) -> str:
        """The deadline set of the game's bucket."""
        return _key(self.tag, "deadlines")

    @functools.cached_property
    def unrated(self) -> str:
        """The unrated set of the game's bucket."""
        return _key(self.tag, "unrated")

    @functools.cached_property
    def steps(self) -> bytes:
        """The prefix of the game's sharded step channels (`steps_channel`)."""
        return _key(self.tag, "steps:").encode()

    def held(self) -> list[str]:
        """Every key the game holds (what `MEMORY USAGE` sums for a game's memory)."""
        return [self.game, self.events, self.moves, self.record]


DEAL_MEMBER = "deal:"  # a deadline member "deal:<id>": a fair deal waits for seeds


def undealt_game(member: str) -> str | None:
    """The game id of a deadline member that is a waiting deal's, else None."""
    return member.removeprefix(DEAL_MEMBER) if member.startswith(DEAL_MEMBER) else None


def move_field(player: str, move_id: str) -> str:
    """The field of a game's move ids that remembers the answer to a player's move id."""
    return f"m:{player}:{move_id}"


# -- players: one tag, {pl} ----------------------------------------------------------

NAMES_KEY = _key("pl", "names")
NAMES_KEYED_KEY = _key("pl", "names_keyed")  # names: the names' key version
GUESTS_KEY = _key("pl", "guests")


def profile_key(player: str) -> str:
    """A player's profile hash."""
    return _key("pl", "p", player)


def history_key(player: str) -> str:
    """A player's history list."""
    return _key("pl", "h", player)


def top_key(kind: str, pool: str = "realtime") -> str:
    """The leaderboard of 'humans' or 'bots' of a rating pool: 'realtime' (`top`) or
    'correspondence' (`ctop_key`)."""
    return ctop_key(kind) if pool == "correspondence" else _key("pl", "top", kind)


def ctop_key(kind: str) -> str:
    """The correspondence games' leaderboard of 'humans' or 'bots'."""
    return _key("pl", "ctop", kind)


def rated_key(game: str) -> str:
    """The marker of a rated game."""
    return _key("pl", "rated", game)


def listed_key(game: str) -> str:
    """The marker of a game put in the histories of the players it did not rate."""
    return _key("pl", "listed", game)


# -- matchmaking: one tag, {mm} ------------------------------------------------------

# What each is, in the order every mm_*.lua script reads KEYS (mm_lib.lua's K_*).
MM_KEY_KINDS = (
    "queue",  # sorted set: player -> ticket time (Redis us, after every ticket waiting)
    "tickets",  # hash: player -> ticket JSON {name, min, max, inst, r}
    "counts",  # hash: requested max_players -> players waiting with it
    "tables",  # hash: join code -> private table JSON {host, players, seats, rated}
    "table_expiry",  # sorted set: join code -> when the table expires (Redis us)
    "seated",  # hash: player -> join code of the private table they sit at
    "instances",  # hash: server instance id -> tickets taken through it
    "starting",  # hash: start key -> a formed table whose game is not dealt yet
    "starting_at",  # sorted set: start key -> when another instance may deal it (us)
)


def mm_key(kind: str) -> str:
    """One matchmaking key, by its kind in `MM_KEY_KINDS`."""
    if kind not in MM_KEY_KINDS:
        raise ValueError(f"no matchmaking key {kind!r}")
    return _key("mm", kind)


def mm_keys() -> list[str]:
    """Every matchmaking key, in the order the scripts read KEYS."""
    return [mm_key(kind) for kind in MM_KEY_KINDS]


# Fewer commands a game: a call's remembered reply is a key of its own
# that expires, one SET where a hash, a sorted set and their purge took three.
def mm_done_key(nonce: str) -> str:
    """The reply of the matchmaking call with this nonce, so a re-sent call is answered once."""
    return _key("mm", "done", nonce)


# -- live games and players online: one tag, {live} ------------------------------------

LIVE_GAMES_KEY = _key("live", "games")
LIVE_INFO_KEY = _key("live", "info")
ONLINE_KEY = _key("live", "online")
ONLINE_COUNTS_KEY = _key("live", "counts")


# -- correspondence tickets of the public queue: one tag, {seeks} ----------------------

SEEK_NAMES_KEY = _key("seeks", "names")  # "<days>:<player>" -> the name they queued with


def seeks_key(days: int) -> str:
    """The correspondence tickets of `days` per move: player ids by when they queued (ms)."""
    return _key("seeks", "queue", str(days))


# -- keys that stand alone: tagged by their subject ----------------------------------


def player_games_key(player: str) -> str:
    """The set of a player's unfinished games."""
    return _key(player, "games")


def vacation_key(player: str) -> str:
    """The vacation days a player took, per year (hash: year -> days)."""
    return _key(player, "vacation")


def correspondence_games_key(player: str) -> str:
    """The set of a player's unfinished correspondence games (also in player_games_key)."""
    return _key(player, "corr")


def steps_channel(bucket: int, wake: bytes) -> bytes:
    """The sharded channel of the steps of one bucket's games that the instance of
    the wake-up channel `wake` follows (lua/commit.lua SPUBLISHes to it)."""
    return _key(_bucket_tag(bucket), "steps:").encode() + wake


def wake_channel(instance: str, steps: bool = False) -> bytes:
    """The channel of an instance's wake-ups: games it follows (lua/commit.lua).

    `steps`: the instance hears steps on its sharded channels (`steps_channel`); its
    channel ends in STEPS_MARK, so that a commit publishes steps to it alone and a
    wake-up to an instance that does not (one of the version before, mid-upgrade)."""
    return GAMES_CHANNEL + b":" + instance.encode() + (STEPS_MARK if steps else b"")


def instance_key(instance: str) -> str:
    """An instance's heartbeat."""
    return _key(instance, "heartbeat")


def limit_key(kind: str, per: str, subject: str) -> str:
    """A counter of the rate limit `kind` (limits/rates.py: "code", "chat", ...) of one
    client `per` "address", "player" or "pair" (an account from an address)."""
    return _key(f"{kind}:{per}:{subject}", "limit")


SECRET_KEY = _key("tokens", "secret")


# Moderation: one tag, {mod}; a few small bounded keys, read by `moose admin`.


@dataclass(frozen=True)
class ModerationKeys:
    """The keys of moderation: bans, the audit log, refusals and reports."""

    bans: str = _key("mod", "bans")
    audit: str = _key("mod", "audit")
    refusals: str = _key("mod", "refusals")
    reports: str = _key("mod", "reports")

    @staticmethod
    def heavy(hour: int, limit: str) -> str:
        """Clients refused by `limit` in one hour (hours since the epoch)."""
        return _key("mod", "heavy", f"{hour}:{limit}")

    @staticmethod
    def limits(hour: int) -> str:
        """The limits that refused someone in one hour."""
        return _key("mod", "limits", str(hour))


# Holds: what one client holds, one key per client (limits/quotas.py).


def hold_key(kind: str, subject: str) -> str:
    """What one client address (`subject`: addresses.limit_subject) holds: "games", "tables"."""
    return _key(f"{kind}:address:{subject}", "hold")


def sessions_key(subject: str) -> str:
    """The bot sessions of one client address, per server process."""
    return _key(f"bots:address:{subject}", "sessions")


# Rematch and challenges: one tag, {inv}, so that lua/invite_*.lua
# touch an offer and its sender's open offers in one slot (tables/invites.py)::
#
#     moose:{inv}:offer:<id>     JSON: a rematch ("r_<old game>") or challenge ("c_<hex>")
#                                offer, its seats, answers and status; expires after
#                                its answer time plus a grace
#     moose:{inv}:open:<player>  sorted set: the player's open challenges -> expiry ms
#     moose:{inv}:challenged:<player>  sorted set: the correspondence challenges sent to
#                                the player -> expiry ms (shown at their next hello)
#
# Presence has its subject's tag: moose:{<player>}:online, a hash: instance -> when
# that instance's word lapses (ms), and `name` (social/presence.py; follows read it too);
# moose:{<player>}:looking, a hash: "<game> <instance>" -> 1, the games the player's
# sockets on that instance follow (play/hub.py writes it, social/presence.py reads it,
# counting an instance's fields while its word in the presence hash lives).


def offer_key(offer: str) -> str:
    """A rematch or challenge offer (tables/invites.py)."""
    return _key("inv", "offer", offer)


def open_offers_key(player: str) -> str:
    """The challenges a player sent that wait for an answer."""
    return _key("inv", "open", player)


def challenged_key(player: str) -> str:
    """The correspondence challenges sent to a player, shown when they come back."""
    return _key("inv", "challenged", player)


def presence_key(player: str) -> str:
    """The instances a player is connected to, each with when its word lapses."""
    return _key(player, "online")


def looking_key(player: str) -> str:
    """The games a player's sockets follow, as "<game> <instance>" fields (play/hub.py)."""
    return _key(player, "looking")


# Arena tournaments: one tag, {ar}.

ARENAS_KEY = _key("ar", "arenas")


@dataclass(frozen=True)
class ArenaKeys:
    """The keys of one arena, in the order the lua/arena_*.lua scripts read KEYS."""

    arenas: str
    busy: str
    arena: str
    members: str
    waiting: str
    points: str
    games: str
    scored: str
    pending: str
    leases: str

    @classmethod
    def of(cls, arena: str) -> ArenaKeys:
        """The keys of the arena `arena`."""
        return cls(
            ARENAS_KEY,
            _key("ar", "busy"),
            *(
                _key("ar", kind, arena)
                for kind in (
                    "arena",
                    "members",
                    "waiting",
                    "points",
                    "games",
                    "scored",
                    "pending",
                    "leases",
                )
            ),
        )

    def all(self) -> list[str]:
        """Every key, in order."""
        return [getattr(self, f) for f in self.__dataclass_fields__]


def arena_won_key(player: str) -> str:
    """The arenas a player won."""
    return _key("ar", "won", player)


# Chat, blocks and follows: social/.


def chat_key(game: str, room: str, buckets: int) -> str:
    """A game's chat in one room ("players", "spectators"), in the game's bucket."""
    return _key(_bucket_tag(bucket(game, buckets)), "chat", f"{game}:{room}")


def table_chat_key(code: str) -> str:
    """A private table's chat before its game starts."""
    return _key(f"table:{code}", "chat")


def blocks_key(player: str) -> str:
    """The players a player blocked."""
    return _key(player, "blocks")


def follows_key(player: str) -> str:
    """The players a player follows."""
    return _key(player, "follows")


def followers_key(player: str) -> str:
    """The players who follow a player."""
    return _key(player, "followers")


# Notices away from the page: notify/.

NOTICES_KEY = _key("nt", "deliveries")
DUE_NOTICES_KEY = _key("nt", "due")


def sent_key(notice: str) -> str:
    """The mark of a notice already sent (its stream entry may be claimed again)."""
    return _key("nt", "sent", notice)


def push_key(player: str) -> str:
    """A player's Web Push subscriptions."""
    return _key(player, "push")


def notify_key(player: str) -> str:
    """A player's notice settings and e-mail address."""
    return _key(player, "notify")


def told_key(player: str, subject: str) -> str:
    """A notice of `subject` ("<kind>:<game>") was sent to the player lately."""
    return _key(player, "told", subject)
