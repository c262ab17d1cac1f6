"""URLs as logs may show them: credentials out.

`redact_url` is the one way the server, `moose loadtest` and the client write a
URL where people read it (logs, reports, messages): a Redis URL carries its
password (``redis://:pw@host``, an ACL user's ``redis://user:pw@host``,
``rediss://...``) or a secret in its query (``?password=...``). It lives here,
in the package every other one imports, so that there is one of it.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "redact_url"]

MASK = "***"
# Query parameters whose value is a secret (redis-py takes `password` from the query too).
_SECRET = re.compile(r"pass|secret|token|auth|cred|key", re.IGNORECASE)


def redact_url(url: str) -> str:
    """`url` with its password (or a bare userinfo) and secret query values masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK  # not a URL we can take apart: show none of it
    creds, at, hosts = parts.netloc.rpartition("@")
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret = any(_SECRET.search(k) for k, _ in pairs)
    if not at and not secret:
        return url  # nothing to hide: the URL exactly as given
    if at:
        user, colon, _ = creds.partition(":")
        # user:password keeps the user (an ACL user's name helps); a lone userinfo may
        # be a password itself (redis://secret@host), so all of it goes.
        creds = f"{user}:{MASK}" if colon and user else MASK
    query = parts.query
    if secret:
        query = urlencode([(k, MASK if _SECRET.search(k) else v) for k, v in pairs], safe="/*")
    return urlunsplit(parts._replace(netloc=f"{creds}{at}{hosts}", query=query))
