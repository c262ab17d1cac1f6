"""The server's VAPID key: given as PEM or raw, else made once in the data folder."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid

from moose_server.notify import load_vapid, public_key
from moose_server.notify.vapid import KEY_FILE


def test_without_a_key_one_is_made_owner_only_and_kept(tmp_path: Path) -> None:
    first = load_vapid("", str(tmp_path))
    kept = tmp_path / KEY_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert public_key(load_vapid("", str(tmp_path))) == public_key(first)
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]  # no draft left


def test_a_given_key_is_used_as_pem_or_raw(tmp_path: Path) -> None:
    vapid = Vapid()
    vapid.generate_keys()
    pem = vapid.private_pem().decode()
    number = vapid.private_key.private_numbers().private_value.to_bytes(32, "big")
    raw = base64.urlsafe_b64encode(number).rstrip(b"=").decode()
    assert public_key(load_vapid(pem, str(tmp_path))) == public_key(vapid)
    assert public_key(load_vapid(raw, str(tmp_path))) == public_key(vapid)
    assert not (tmp_path / KEY_FILE).exists()  # nothing made when one is given
    point = vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    assert base64.urlsafe_b64decode(public_key(vapid) + "=") == point
