"""GET /metrics is the operator's: through the real `moose serve`, a request a
trusted proxy forwards from a public address gets 404, one from loopback (the
default `MOOSE_METRICS_FROM`) or from a network the setting names gets the metrics.
"""

from __future__ import annotations

import urllib.error
import urllib.request

PROXY = {"MOOSE_TRUSTED_PROXIES": "127.0.0.1"}  # as behind a load balancer on loopback


def scrape(base: str, forwarded: str | None = None) -> tuple[int, str]:
    """The status and body of GET /metrics, as forwarded for `forwarded` when given."""
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    request = urllib.request.Request(f"{base}/metrics", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_metrics_answer_loopback_and_not_a_forwarded_public_address(moose_serve, redis_url):
    base = moose_serve("--redis", redis_url, env=PROXY).http
    status, body = scrape(base, "203.0.113.7")
    assert status == 404 and "moose_" not in body, (status, body[:200])
    status, body = scrape(base, "10.1.2.3")  # private, but not named by the setting
    assert status == 404 and "moose_" not in body, (status, body[:200])
    status, body = scrape(base)  # loopback, straight to the instance
    assert status == 200 and "moose_sockets" in body, (status, body[:200])
    status, body = scrape(base, "127.0.0.1")  # a scraper on the proxy's host
    assert status == 200 and "moose_sockets" in body, (status, body[:200])


def test_metrics_answer_the_networks_the_operator_names(moose_serve, redis_url):
    env = {**PROXY, "MOOSE_METRICS_FROM": "10.0.0.0/8"}
    base = moose_serve("--redis", redis_url, env=env).http
    assert scrape(base, "10.1.2.3")[0] == 200
    assert scrape(base, "203.0.113.7")[0] == 404
    assert scrape(base)[0] == 404  # loopback is no longer named
