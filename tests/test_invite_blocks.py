"""A challenge to someone who blocked you is answered as one to someone who does not.

`Invites` is given the block list as `blocked(by, whom)` (the chat part's
`Blocks.blocked`); here a stand-in list on a real Redis, with real presence.
"""

from __future__ import annotations

from typing import Any

import pytest

from moose_server.errors import Refusal
from moose_server.limits.limiter import Limiter
from moose_server.settings import Settings
from moose_server.social.consent import Consent
from moose_server.social.presence import Presence
from moose_server.tables.invites import Invites

from helpers import open_store

NAMES = {"bob": ("p_bob", "bob"), "carol": ("p_carol", "carol"), "dave": ("p_dave", "dave")}


async def _find(target: str) -> tuple[str, str]:
    return NAMES[target]


async def _blocked(by: str, whom: str) -> bool:
    return (by, whom) == ("p_bob", "p_alice")  # bob blocks alice


async def _room(player: str, days: int | None) -> None:
    pass  # no challenge here is accepted: nobody is at their cap


async def _is_account(player: str) -> bool:
    return True


async def _challenged(player: str, challenge: str, text: str) -> None:
    pass  # no challenge here is to a correspondence game


async def test_a_blocked_challenger_gets_the_answer_of_any_challenger(redis_url):
    async with open_store(redis_url) as store:
        presence = Presence(store.redis, "i_test", 60, lambda: [])
        await presence.here([("p_bob", "bob"), ("p_dave", "dave")])  # carol is offline
        none: Any = None  # the parts that deal games: no game starts here
        settings = Settings(redis_url=redis_url)
        invites = Invites(
            store.redis,
            store,
            none,
            none,
            none,
            none,
            presence,
            settings,
            find=_find,
            limiter=Limiter(store, settings),
            blocked=_blocked,
            room=_room,
            consent=Consent(store.redis, 60),
            is_account=_is_account,
            challenged=_challenged,
        )
        with pytest.raises(Refusal) as refused:
            await invites.challenge("p_alice", "alice", "192.0.2.7", "carol", 2, False, False)
        assert refused.value.code == "player_offline"  # carol is not connected
        # bob blocks alice: her challenge is answered as dave's, who blocks nobody.
        to_bob = await invites.challenge("p_alice", "alice", "192.0.2.7", "bob", 2, False, False)
        to_dave = await invites.challenge("p_alice", "alice", "192.0.2.7", "dave", 2, False, False)
        assert to_bob["status"] == to_dave["status"] == "open"
        assert set(to_bob) == set(to_dave) and to_bob["to"] == "bob"
        await invites.close()
