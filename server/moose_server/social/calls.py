"""The typed calls of chat's, of the bounded hashes' (blocks, follows) and of the
followed players' scripts.

Each call's `build` returns (KEYS, ARGV) in the order its script reads them (see
storage/scripts.py); tests/test_scripts.py checks them against the Lua.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from moose_server.storage.keys import player_games_key, presence_key, profile_key
from moose_server.storage.scripts import Argv

__all__ = ["BoundedAddCall", "ChatCall", "FollowedCall"]


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


@dataclass(frozen=True)
class FollowedCall:
    """Whether some followed players are online, their unfinished games and, with
    `names`, their profiles' names (lua/followed.lua): {online, games, name or ""}
    each. Its keys are in the players' slots (and profiles' in {pl}): a cluster
    is sent one player's, without `names`, a call."""

    SCRIPT: ClassVar[str] = "followed"

    players: tuple[str, ...]
    names: bool = False

    def build(self) -> tuple[list[str], Argv]:
        """KEYS and ARGV as followed.lua reads them."""
        keys = [k for p in self.players for k in (presence_key(p), player_games_key(p))]
        if self.names:
            keys += [profile_key(p) for p in self.players]
        return keys, [len(self.players)]


CALLS: tuple[type[Any], ...] = (
    BoundedAddCall,
    ChatCall,
    FollowedCall,
)
