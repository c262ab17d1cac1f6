"""Bans: what an address ban holds, when a ban ends, and the copy each instance keeps."""

from __future__ import annotations

import pytest

from moose_server.moderation.bans import Ban, Banned, Bans, ban_network
from moose_server.moderation.moderator import ModerationError, parse_duration
from moose_server.moderation.store import ModerationStore

from helpers import open_store


@pytest.mark.parametrize(
    ("given", "held"),
    [
        ("203.0.113.7", "203.0.113.7/32"),
        ("203.0.113.0/24", "203.0.113.0/24"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),  # an IPv6 address: its /64
        ("[2001:db8::1]", "2001:db8::/64"),
        ("2001:db8::/48", "2001:db8::/48"),
    ],
)
def test_an_address_ban_holds_a_network_as_limits_count_clients(given, held):
    assert ban_network(given) == held


@pytest.mark.parametrize("bad", ["", "mallory", "300.1.2.3", "10.0.0.0/33"])
def test_what_is_not_an_address_is_refused(bad):
    with pytest.raises(ValueError):
        ban_network(bad)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("90s", 90_000),
        ("30m", 1_800_000),
        ("1h", 3_600_000),
        ("7d", 604_800_000),
        ("2w", 1_209_600_000),
        ("1.5h", 5_400_000),
        (None, 0),
        ("permanent", 0),
    ],
)
def test_durations(text, ms):
    assert parse_duration(text) == ms


@pytest.mark.parametrize("bad", ["1", "h", "-1h", "0h", "1y", "soon"])
def test_a_wrong_duration_is_refused(bad):
    with pytest.raises(ModerationError):
        parse_duration(bad)


async def test_the_copy_checks_accounts_addresses_and_networks_without_redis(redis_url):
    async with open_store(redis_url) as store:
        records = ModerationStore(store.redis)
        now = await store.now_ms()
        bans = [
            Ban("account", "p_1", "spam", now + 60_000, "mod", now, "mallory"),
            Ban("address", ban_network("2001:db8:1:2::9"), "flood", 0, "mod", now),
            Ban("address", ban_network("198.51.100.0/24"), "bots", 0, "mod", now),
            Ban("account", "p_2", "over", now - 1, "mod", now - 10),  # ended
        ]
        for ban in bans:
            await records.set_ban(ban.field, ban.record())
        copy = Bans(records, store.now_ms)
        assert {b.field for b in await copy.load()} == {b.field for b in bans}
        assert await copy.load() == []  # nothing new the second time

        assert copy.of_player("p_1") == bans[0] and copy.of_player("p_2") is None
        assert copy.of_address("2001:db8:1:2:ffff::1") == bans[1]  # the same /64
        assert copy.of_address("2001:db8:1:3::1") is None
        assert copy.of_address("198.51.100.200") == bans[2]
        assert copy.of_address("198.51.101.1") is None
        with pytest.raises(Banned) as refused:
            copy.check("192.0.2.1", "p_1")
        assert refused.value.code == "banned"
        assert refused.value.fields["reason"] == "spam"
        assert 0 < refused.value.fields["retry_after"] <= 61_000
        with pytest.raises(Banned) as forever:
            copy.check("198.51.100.1")
        assert "until" not in forever.value.fields and "retry_after" not in forever.value.fields

        copy.remove(bans[2].field)
        assert copy.of_address("198.51.100.200") is None
