"""The server's VAPID key (RFC 8292): given in the settings, or kept in the data folder.

A browser's push subscription is bound to the public key the page gave it
(`applicationServerKey`), so every instance must sign with the same private
key, and keep it: a new key orphans every subscription.
"""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid

__all__ = ["KEY_FILE", "load_vapid", "public_key"]

KEY_FILE = "vapid.pem"  # in the data folder, when MOOSE_VAPID_KEY is not given


def load_vapid(given: str, data_dir: str) -> Vapid:
    """The key given (PEM or base64url), else the data folder's, made there the first time."""
    if given:
        if "-----BEGIN" in given:
            return Vapid.from_pem(given.encode())
        return Vapid.from_string(given)
    path = Path(data_dir).expanduser() / KEY_FILE
    if path.exists():
        return Vapid.from_pem(path.read_bytes())
    vapid = Vapid()
    vapid.generate_keys()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Owner-only, written whole before it has its name (link), and never over a
    # key another instance made meanwhile.
    draft = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(vapid.private_pem())
    try:
        os.link(draft, path)
    except FileExistsError:
        return Vapid.from_pem(path.read_bytes())
    finally:
        draft.unlink()
    return vapid


def public_key(vapid: Vapid) -> str:
    """The public key as the page's `applicationServerKey` takes it: base64url, no padding."""
    raw = vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
