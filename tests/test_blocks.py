"""social/blocks.py: who blocked whom, bounded, on a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from moose_server.errors import Refusal
from moose_server.social.blocks import Blocks
from moose_server.storage.connection import open_redis


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Any]:
    """The gateway to the test's emptied Redis."""
    client = await open_redis(redis_url, 4)
    yield client
    await client.aclose()


async def test_a_block_is_seen_by_blocked_and_undone_by_unblock(redis):
    blocks = Blocks(redis)
    assert not await blocks.blocked("p_ann", "p_bob")
    assert await blocks.block("p_ann", "p_bob", "bob")
    assert not await blocks.block("p_ann", "p_bob", "bob")  # once is enough
    assert await blocks.of("p_ann") == {"p_bob": "bob"}
    assert await blocks.blocked("p_ann", "p_bob")
    assert not await blocks.blocked("p_bob", "p_ann")  # one way only
    assert await blocks.blockers(["p_ann", "p_cat"], "p_bob") == {"p_ann"}
    assert await blocks.unblock("p_ann", "p_bob")
    assert not await blocks.blocked("p_ann", "p_bob")


async def test_a_full_block_list_refuses_one_more_and_keeps_its_own(redis):
    blocks = Blocks(redis, most=2)
    await blocks.block("p_ann", "p_1")
    await blocks.block("p_ann", "p_2")
    with pytest.raises(Refusal) as caught:
        await blocks.block("p_ann", "p_3")
    assert caught.value.code == "too_many_blocks"
    assert await blocks.of("p_ann") == {"p_1": "p_1", "p_2": "p_2"}


async def test_blocking_yourself_is_refused(redis):
    with pytest.raises(Refusal) as caught:
        await Blocks(redis).block("p_ann", "p_ann")
    assert caught.value.code == "bad_message"
