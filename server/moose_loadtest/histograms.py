"""The server's own histograms (/metrics) over a load test's window: scraped before and
after, and what their difference tells (count, and the buckets of p50, p99 and the largest)."""

from __future__ import annotations

import urllib.request
from typing import Any
from urllib.parse import urlsplit

__all__ = ["HISTOGRAMS", "Buckets", "histogram_delta", "metrics_url", "scrape"]

# The histograms of /metrics a load test reports over its window (see metrics.py).
HISTOGRAMS = ("moose_move_latency_seconds", "moose_loop_lag_seconds", "moose_gc_pause_seconds")


def metrics_url(ws_url: str) -> str:
    """The /metrics address of the server at a WebSocket URL."""
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    return f"{scheme}://{parts.netloc}/metrics"


Buckets = dict[str, list[tuple[float, float]]]  # series -> [(le, cumulative count)]


def scrape(url: str) -> Buckets:
    """The buckets of the histograms in HISTOGRAMS, as served now (empty if unreachable)."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            text = resp.read().decode()
    except OSError:
        return {}
    out: Buckets = {}
    for family in text_string_to_metric_families(text):
        if family.name not in HISTOGRAMS:
            continue
        for s in family.samples:
            if s.name.endswith("_bucket"):
                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()) if k != "le")
                series = f"{family.name}{{{labels}}}" if labels else family.name
                out.setdefault(series, []).append((float(s.labels["le"]), s.value))
    return out


def histogram_delta(before: Buckets, after: Buckets) -> dict[str, Any]:
    """Per series: observations in between, and the bucket bounds of p50, p99 and the
    largest (in ms; "inf" when over the last bound): what /metrics can tell of a window."""
    out: dict[str, Any] = {}
    for series, buckets in after.items():
        old = dict(before.get(series, []))
        counts = [(le, n - old.get(le, 0.0)) for le, n in sorted(buckets)]
        total = counts[-1][1] if counts else 0
        if total <= 0:
            continue

        bounds = [_le_ms(next(le for le, n in counts if n >= q * total)) for q in (0.5, 0.99, 1)]
        out[series] = {
            "count": int(total),
            "p50_le_ms": bounds[0],
            "p99_le_ms": bounds[1],
            "max_le_ms": bounds[2],
        }
    return out


def _le_ms(le: float) -> float | str:
    """A bucket's upper bound in ms ("inf" for the last bucket)."""
    return "inf" if le == float("inf") else round(le * 1000, 2)
