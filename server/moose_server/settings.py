"""Server settings: one frozen dataclass, read from the environment (MOOSE_*) and flags.

Only the entry point (`moose serve`, tests) builds a `Settings`; everything else
takes the object it is given.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from moose import rules
from moose_server.addresses import networks
from moose_server.origins import parse_origins

__all__ = ["PLACEHOLDERS", "Settings", "check_secret"]

APPENDFSYNC = ("always", "everysec", "no")
HOLDS = (
    "games_per_player",
    "correspondence_games",
    "correspondence_games_per_address",
    "games_per_address",
    "tables_per_address",
    "table_starts_per_hour",
    "bot_sessions_per_address",
    "bot_hellos_per_hour",
    "guest_hellos_per_hour",
    "watched_per_socket",
    "api_burst",
    "api_rate",
)


MIN_SECRET = 32  # bytes
# The example secrets of this repository (deploy/, docs/, README.md): refused as
# they are, and any secret with one of the markers in it. tests/test_tokens.py
# scans the repository for more.
PLACEHOLDERS = (
    "REPLACE-ME-with-32-random-bytes-base64",  # deploy/k8s/secret.yaml's old placeholder
    "REPLACE-ME-moose-serve-refuses-this-placeholder-use-openssl-rand-base64-32",
    "change-me",  # docs/SERVER.md's old example
    "...",  # deploy/Dockerfile
)
_MARKERS = ("replace-me", "replace_me", "change-me", "changeme", "placeholder")


def check_secret(secret: str) -> None:
    """ValueError unless `secret` may sign tokens: 32 bytes or more, no placeholder."""
    advice = (
        "give every instance the same random secret, e.g. MOOSE_TOKEN_SECRET="
        "$(openssl rand -base64 32), or leave it unset to share a generated one "
        "through Redis"
    )
    lowered = secret.lower()
    if secret in PLACEHOLDERS or any(marker in lowered for marker in _MARKERS):
        raise ValueError(f"the token secret is a placeholder from the docs: {advice}")
    if len(secret.encode()) < MIN_SECRET:
        raise ValueError(f"the token secret has fewer than {MIN_SECRET} bytes: {advice}")


def _default_data_dir() -> str:
    return platformdirs.user_data_dir("moose-house", appauthor=False)


def _instance_id() -> str:
    return f"i_{secrets.token_hex(4)}"


@dataclass(frozen=True)
class Settings:
    """Every knob of a server instance. Times are in seconds."""

    host: str = "127.0.0.1"
    port: int = 8080
    redis_url: str | None = None  # None: start the bundled redis-server in data_dir
    # A file holding the Redis URL (a Docker or Kubernetes secret): its password then
    # shows in no process list. Read by `from_env` into redis_url.
    redis_url_file: str = ""
    data_dir: str = field(default_factory=_default_data_dir)
    # The embedded Redis' AOF fsync: "everysec" loses up to about a second of writes
    # when the host crashes, "always" none (each write waits for the disk), "no" more.
    appendfsync: str = "everysec"
    turn_time: float = 30.0
    answer_time: float = 8.0  # a trap answer
    away_after: int = 2  # timeouts in a row before a seat is away
    match_wait: float = 10.0  # then the matchmaker seats a player at a smaller table
    queue_bots_after: float = 0.0  # fill a waiting queue table with bots (0 = never)
    # From then on the page offers a player alone in the queue a table with bots
    # (`queue_bots`) or a wider range of sizes (`queue_range`); bots are refused before.
    queue_offer_after: float = 20.0
    game_ttl: int = 86400  # finished games (and their records) expire after this
    # A finished game keeps its events and move ids this long (late `sync`s and resent
    # moves get their answers); then its hash alone remains, compressed (~1.2 KB).
    game_grace: float = 60.0
    token_secret: str | None = None  # None: generated once and shared through Redis
    token_ttl: float = 7 * 86400
    max_msg_size: int = 64 * 1024
    rate: float = 20.0  # messages per second a socket may send...
    burst: int = 40  # ...with this many at once
    rate_strikes: int = 5  # rate_limited errors in a row before closing with 1008
    heartbeat: float = 20.0  # a socket silent this long is pinged (heartbeats.py)
    # Limits for a service open to the internet (deploy/README.md, "Running it in public").
    header_timeout: float = 10.0  # an HTTP request's headers, and an idle keep-alive, within this
    hello_timeout: float = 10.0  # a socket that has not said hello by then is closed (4408)
    close_timeout: float = 5.0  # a closing socket whose peer does not take the close is cut
    max_sockets: int = 20_000  # open sockets of this instance; more are answered 503
    max_sockets_per_address: int = 64  # open sockets of one client address here; more: 429
    trusted_proxies: str = ""  # addresses/networks whose X-Forwarded-For names the client
    # Clients (as trusted proxies name them) that may read /metrics; others get 404.
    metrics_from: str = "127.0.0.0/8,::1"
    code_guesses: int = 10  # failed join-code requests a client may make at once...
    code_guess_interval: float = 6.0  # ...and one more every this many seconds
    poll_interval: float = 0.25  # how often every instance looks for due deadlines
    lease: float = 5.0  # a claimed deadline comes back after this if its claimer died
    auto_delay: float = 2.0  # safety deadline of a seat the server plays at once
    # After an outage, every deadline is at least this far off. 15 s:
    # a page or client is back a second or two after the service, and then still has
    # the 10 s a move needs; a grace from each seat's return would let a player who
    # reconnects again and again hold the table.
    outage_grace: float = 15.0
    match_interval: float = 0.5  # how often the matchmaker tries to form tables
    buckets: int = 16  # must stay the same for the life of the data (ids hash into it)
    drain_grace: float = 5.0  # on shutdown, time for requests in flight
    redis_connections: int = 64
    instance_ttl: float = 10.0  # no heartbeat for this long: the instance is dead
    instance_id: str = field(default_factory=_instance_id)
    log_format: str = "text"  # "text" for a terminal, "json" (one object a line) for operators
    rate_queue: bool = True  # public queue games are rated (private tables: the host's choice)
    provisional_games: int = 5  # a rating is provisional (and off the leaderboard) until then
    history_size: int = 100  # a player's last rated games kept
    record_ttl: int = 30 * 86400  # the record of a rated game is kept this long
    guest_ttl: float = 7 * 86400  # a guest's rating and history, after their last game
    rate_sweep_after: float = 10.0  # a game still unrated this long after its end: rate it
    match_window: float = 100.0  # rating points apart a queue table may be at once...
    match_widen: float = 300.0  # ...widening by this many a second of waiting
    live_interval: float = 1.0  # how often the live games list is read for its followers
    # Seconds between full collections of every object (collector.py): each frees the
    # cycles that died since and pauses the loop ~0.1 ms per connected player. 0: never.
    gc_reclaim: float = 1800.0
    # Exposure: pages of other sites that may open /ws (comma-separated
    # scheme://host[:port]; the server's own page always may), and the CA file that
    # signs a rediss:// Redis' certificate (as ?ssl_ca_certs= in the URL would).
    allowed_origins: str = ""
    redis_ca_certs: str = ""
    # Moderation: bans, refusals, reports (deploy/README.md, "Moderation").
    ban_refresh: float = 1.0  # every instance reads the bans again this often (a lost notice)
    report_burst: int = 5  # reports a player, and an address, may make at once...
    report_interval: float = 60.0  # ...then one more every this many seconds
    moderation_kept: int = 10_000  # entries of the audit log, recent refusals and reports
    heavy_hours: int = 48  # hours the heaviest users of each limit are kept
    # Logins: new accounts, failed logins and password hashing (deploy/README.md,
    # "Accounts, ratings and their memory"); the limits are kept in Redis, for every instance.
    registrations_per_hour: int = 10  # new accounts one client address may register an hour
    login_attempts: int = 10  # failed logins one address may make on one account at once...
    login_window: float = 300.0  # ...then one more every login_window / login_attempts
    login_address_attempts: int = 30  # failed logins of one address, any accounts, per window
    login_slow_after: int = 10  # failures of one account (any address) before its logins slow,
    login_delay_step: float = 0.25  # by this many seconds more per failure past it,
    login_delay_max: float = 3.0  # up to this: an account's logins are slowed, never refused
    hash_threads: int = 2  # password hashes at once on this instance (128 MiB each)...
    hash_login_share: int = 1  # ...of which new accounts may never take these many
    # Holds: what one client may hold at once, and start, shared by every
    # instance through Redis (limits/quotas.py; PROTOCOL.md "Limits" says why each).
    games_per_player: int = 5  # unfinished games a player may be seated in
    correspondence_games: int = 20  # unfinished correspondence games, counted apart
    correspondence_games_per_address: int = 200  # ...and those of one address' players
    correspondence_ticket_ttl: float = 7 * 86400.0  # a correspondence ticket waits this long
    vacation_days: int = 30  # days a year a player may hold their correspondence games
    games_per_address: int = 100  # unfinished games the players of one address may be in
    tables_per_address: int = 20  # open private tables hosted from one address
    table_starts_per_hour: int = 60  # private tables' games started from one address
    bot_sessions_per_address: int = 20  # sockets that said hello as a bot, at once
    bot_hellos_per_hour: int = 200  # new bot players (hello as a bot without a token)
    guest_hellos_per_hour: int = 500  # new guests (hello with a name alone) from one address
    watched_per_socket: int = 20  # games one socket watches as a spectator
    api_burst: int = 60  # HTTP API requests an address may make at once...
    api_rate: float = 10.0  # ...and this many more a second
    # Memory: what slow clients may hold queued, and giving it back after.
    # Bytes one socket may hold queued (its outbox and its transport's buffer, beyond
    # the kernel's) before it is dropped with 1013...
    send_buffer: int = 256 * 1024
    # ...and all sockets of the instance together: past it, those holding the most go.
    send_buffer_total: int = 64 << 20
    # Free bytes in glibc's heap from which the collector hands free pages back to
    # the OS (malloc_trim; it looks every 5 s); 0: never.
    malloc_trim: int = 16 << 20
    # Provably fair deals (PROTOCOL.md): seats that asked for a fair deal
    # send their seeds within seed_time of `match`. test_deck: 58 comma-separated
    # card codes dealt to every game (dealer seat 0), without `deal`: tests only.
    seed_time: float = 1.0
    test_deck: str = ""
    # searchbot: the kind of the bots that fill queue tables; "mcts"
    # searches, about 0.1-0.15 s of CPU a move, never over 0.5 s (in a worker thread).
    queue_bot: str = "greedy"
    # Rematch and challenges (tables/invites.py).
    rematch_wait: float = 30.0  # seconds the other seats have to answer a rematch offer
    challenge_ttl: float = 60.0  # seconds a challenge waits for its answer
    # seconds a correspondence challenge (with `days`) waits: its player may be away
    correspondence_challenge_ttl: float = 259_200.0
    challenges_open: int = 3  # challenges one player may have waiting at once
    challenges_per_hour: int = 30  # challenges one player may send an hour
    # challenges the players of one client address may send an hour, all together:
    # fresh guests of one address cannot each bring a player's 30 to one victim
    challenges_per_address_hour: int = 60
    presence_ttl: float = 60.0  # a player unseen by every instance this long is offline
    # Arena tournaments (arenas/runner.py)
    arenas: str = ""  # recurring arenas, e.g. "bots:hourly:30m:2-4,people:daily:60m:2-4"
    arena_interval: float = 0.5  # how often every instance seats arena members
    arenas_watched: int = 5  # arenas one socket may watch at once
    # New members one client address may add to arenas an hour (a member coming back
    # is not new): guests are free to make, so this bounds one address' standings.
    arena_joins_per_hour: int = 60
    # Seconds a person rests after an arena game before being seated again: the page's
    # end screen stays that long, counting down (bots are seated again at once).
    arena_rest: float = 10.0
    # Chat, blocks and follows (PROTOCOL.md "Chat, blocks and follows").
    chat_burst: int = 5  # chat lines a player, and an address, may say at once...
    chat_interval: float = 2.0  # ...then one more every this many seconds
    chat_kept: int = 100  # lines kept per room (the oldest go)
    blocks_max: int = 200  # players one player may block
    follows_max: int = 500  # players one player may follow
    # Follows and blocks one client address may add an hour (at once, then one every
    # hour / that many): with ids that exist only, Redis memory per address is bounded.
    social_adds_per_hour: int = 120
    followers_max: int = 100_000  # followers one player may have
    # A player's `following` is answered at most once this many seconds per instance
    # (social/following.py; sooner: rate_limited). The page asks every 5 s.
    following_every: float = 4.0
    # Notices away from the page (notify/): Web Push with the server's VAPID key
    # (a PEM or base64url private key; empty: `moose serve` keeps one in data_dir),
    # e-mail through an SMTP server (empty smtp_host: no mail).
    vapid_key: str = ""
    vapid_subject: str = "mailto:moose@localhost"  # who push services may contact
    smtp_host: str = ""
    smtp_port: int = 587
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_tls: str = "starttls"  # "starttls", "tls" (implicit) or "none"
    mail_from: str = "Moose House <moose@localhost>"
    public_url: str = "http://localhost:8080"  # the page's address, for links in mails
    confirm_mails_per_hour: int = 3  # confirm mails one player (and address) may ask for
    push_per_player: int = 5  # Web Push subscriptions one player may hold
    push_timeout: float = 10.0  # seconds a push service or SMTP server has to answer
    notify_retries: int = 5  # tries of a notice whose channel timed out...
    notify_backoff: float = 2.0  # ...this many seconds before the second, doubling
    notify_claim_idle: float = 300.0  # seconds a notice pends before another instance takes it
    notify_quiet: float = 3600.0  # seconds after a notice of a game and kind: no other one
    notify_before: float = 3 * 3600.0  # "time running out": this long before a deadline

    def __post_init__(self) -> None:
        if self.buckets < 1:
            raise ValueError("buckets must be at least 1")
        if self.game_grace < 0:
            raise ValueError("game_grace must not be negative")
        if self.gc_reclaim < 0:
            raise ValueError("gc_reclaim must not be negative")
        positive = (
            "turn_time",
            "answer_time",
            "poll_interval",
            "lease",
            "rate",
            "instance_ttl",
            "heartbeat",
            "header_timeout",
            "hello_timeout",
            "close_timeout",
            "max_sockets",
            "max_sockets_per_address",
            "code_guesses",
            "code_guess_interval",
            "history_size",
            "live_interval",
            "ban_refresh",
            "report_burst",
            "report_interval",
            "moderation_kept",
            "heavy_hours",
            "arena_interval",
            "arenas_watched",
            "arena_joins_per_hour",
            "chat_burst",
            "chat_interval",
            "chat_kept",
            "blocks_max",
            "follows_max",
            "social_adds_per_hour",
            "followers_max",
            "following_every",
            *HOLDS,
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.arena_rest < 0:
            raise ValueError("arena_rest must not be negative")
        self._check_memory()
        networks(self.trusted_proxies)  # a typo must stop the start, not trust no one
        networks(self.metrics_from, "metrics_from")
        if self.appendfsync not in APPENDFSYNC:
            raise ValueError(
                f"appendfsync must be always, everysec or no, not {self.appendfsync!r}"
            )
        if self.log_format not in ("text", "json"):
            raise ValueError(f"log_format must be text or json, not {self.log_format!r}")
        self._check_exposure()
        self._check_logins()
        self._check_deals()

    def _check_logins(self) -> None:
        """Logins: the limits make sense, and the token secret is no placeholder."""
        for name in (
            "registrations_per_hour",
            "login_attempts",
            "login_window",
            "login_address_attempts",
            "login_delay_step",
            "hash_threads",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        for name in ("login_slow_after", "login_delay_max"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if not 0 <= self.hash_login_share < self.hash_threads:
            raise ValueError("hash_login_share must be at least 0 and less than hash_threads")
        if self.token_secret is not None:
            check_secret(self.token_secret)

    def _check_deals(self) -> None:
        """Provably fair deals: a seed time, and a test deck that is a deck."""
        if self.seed_time < 0:
            raise ValueError("seed_time must not be negative")
        deck = self.fixed_deck()
        if deck is not None:
            try:
                rules.check_deck(deck)
            except rules.InvalidGame as exc:
                raise ValueError(f"test_deck: {exc}") from None

    def fixed_deck(self) -> list[str] | None:
        """The deck every game is dealt from (tests only; `test_deck`), or None: fair deals."""
        return [c.strip() for c in self.test_deck.split(",")] if self.test_deck else None

    def _check_exposure(self) -> None:
        parse_origins(self.allowed_origins)  # a typo must stop the start
        if self.redis_ca_certs:
            if not (self.redis_url or "").startswith("rediss"):
                raise ValueError("redis_ca_certs needs a rediss:// (TLS) Redis URL")
            if not os.path.isfile(self.redis_ca_certs):
                raise ValueError(f"redis_ca_certs: no such file {self.redis_ca_certs!r}")

    def _check_memory(self) -> None:
        """Memory: the bounds on what sockets hold queued."""
        for name in ("send_buffer", "send_buffer_total"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.malloc_trim < 0:
            raise ValueError("malloc_trim must not be negative")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from MOOSE_<NAME> variables, then `overrides` (flags) on top."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f"MOOSE_{f.name.upper()}")
            if raw is not None and raw != "":
                values[f.name] = _parse(f, raw)
        if values.get("redis_url_file") and values.get("redis_url"):
            raise ValueError("give MOOSE_REDIS_URL or MOOSE_REDIS_URL_FILE, not both")
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values.get("redis_url_file") and not overrides.get("redis_url"):
            values["redis_url"] = _read_url(values["redis_url_file"])
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def _read_url(path: str) -> str:
    """The Redis URL kept in a file (its one line; blank lines and spaces around ignored)."""
    try:
        url = Path(path).expanduser().read_text().strip()
    except OSError as exc:
        raise ValueError(f"redis_url_file: cannot read {path!r}: {exc.strerror}") from None
    if not url or "\n" in url:
        raise ValueError(f"redis_url_file: {path!r} must hold one Redis URL on one line")
    return url


def _parse(f: dataclasses.Field[Any], raw: str) -> Any:
    """One environment value, converted to the field's type."""
    kind = str(f.type)
    if kind == "bool":
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"MOOSE_{f.name.upper()}={raw!r} is not 1/0, true/false, yes/no, on/off")
    try:
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except ValueError as exc:
        raise ValueError(f"MOOSE_{f.name.upper()}={raw!r} is not a number") from exc
    return raw
