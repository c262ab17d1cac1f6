"""Redis URLs: the Redis Cluster form ``redis+cluster://h1:p1,h2:p2,...`` and its nodes."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["CLUSTER_SCHEMES", "is_cluster", "node_urls"]

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}  # deploy/README.md


def is_cluster(url: str) -> bool:
    """Whether `url` is the Redis Cluster form ``redis+cluster://h1:p1,h2:p2,...``."""
    return urlsplit(url).scheme in CLUSTER_SCHEMES


def node_urls(url: str) -> list[str]:
    """Each node of a cluster URL as a plain URL of its own (a plain URL: itself)."""
    parts = urlsplit(url)
    if parts.scheme not in CLUSTER_SCHEMES:
        return [url]
    auth, _, hosts = parts.netloc.rpartition("@")
    scheme = CLUSTER_SCHEMES[parts.scheme]
    return [f"{scheme}://{auth + '@' if auth else ''}{h}/0" for h in hosts.split(",") if h]
