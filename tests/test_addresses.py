"""Who a client is: its peer address, or what trusted proxies say in X-Forwarded-For."""

from __future__ import annotations

import pytest

from moose_server.addresses import client_address, limit_subject, networks

LB = networks("10.0.0.0/8, 127.0.0.1")


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("203.0.113.7", None, "203.0.113.7"),
        ("203.0.113.7", "198.51.100.1", "203.0.113.7"),  # an untrusted peer cannot say who
        ("10.1.2.3", "198.51.100.1", "198.51.100.1"),  # the balancer says who
        ("10.1.2.3", "1.1.1.1, 198.51.100.1", "198.51.100.1"),  # the client wrote the left
        ("10.1.2.3", "198.51.100.1, 10.9.9.9", "198.51.100.1"),  # two proxies of ours
        ("10.1.2.3", "10.9.9.9, 10.8.8.8", "10.9.9.9"),  # only our own: the first
        ("10.1.2.3", "junk, 198.51.100.1", "198.51.100.1"),
        ("10.1.2.3", "198.51.100.1, junk", "10.1.2.3"),  # garbage nearest us: the peer
        ("10.1.2.3", "", "10.1.2.3"),
        ("127.0.0.1", "[2001:db8::1]", "2001:db8::1"),
        ("::ffff:10.1.2.3", "198.51.100.1", "198.51.100.1"),  # a dual-stack socket's form
        (None, None, "unknown"),
    ],
)
def test_client_address_trusts_forwarded_for_from_trusted_proxies_only(peer, forwarded, client):
    assert client_address(peer, forwarded, LB) == client


def test_no_trusted_proxies_means_the_peer_is_the_client():
    assert client_address("127.0.0.1", "198.51.100.1", networks("")) == "127.0.0.1"


def test_a_bad_network_is_an_error():
    with pytest.raises(ValueError, match="not an address"):
        networks("10.0.0.0/8, lb.example")


def test_an_ipv6_client_is_counted_by_its_64():
    assert limit_subject("2001:db8:1:2:aaaa::1") == limit_subject("2001:db8:1:2:bbbb::2")
    assert limit_subject("2001:db8:1:2::1") != limit_subject("2001:db8:1:3::1")
    assert limit_subject("203.0.113.7") == "203.0.113.7"
