"""Passwords: the policy, scrypt at OWASP's parameters, and the threads that hash."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import sys
import threading
from importlib import resources
from pathlib import Path

import pytest

from moose_server.accounts.passwords import (
    Hashing,
    hash_password,
    outdated,
    verify_password,
    weakness,
)
from moose_server.settings import Settings

PASSWORD = "correct horse battery"
DATA = resources.files("moose_server.accounts") / "data"


def old_hash(password: str) -> str:
    """A hash as the server made them before OWASP's parameters (N=2^14)."""
    salt = b"s" * 16
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    b64 = base64.b64encode
    return f"scrypt$16384$8$1${b64(salt).decode()}${b64(digest).decode()}"


@pytest.mark.slow  # four hashes of 128 MiB, ~0.4 s each
def test_new_hashes_use_owasps_scrypt_parameters_with_a_salt_each():
    one, two = hash_password(PASSWORD), hash_password(PASSWORD)
    assert one != two and one.startswith("scrypt$131072$8$1$")
    assert verify_password(PASSWORD, one) and verify_password(PASSWORD, two)
    assert not verify_password(PASSWORD + "!", one)
    assert not verify_password(PASSWORD, "not a hash")
    assert not outdated(one)


def test_a_hash_of_the_old_parameters_still_verifies_and_is_outdated():
    stored = old_hash(PASSWORD)
    assert verify_password(PASSWORD, stored) and not verify_password("another one!", stored)
    assert outdated(stored)


@pytest.mark.parametrize(
    ("password", "rule"),
    [
        ("", "at least 10 characters"),
        ("moose1234", "at least 10 characters"),  # 9
        ("m" * 129, "at most 128 characters"),
        ("1234567890", "most common"),
        ("qwertyuiop", "most common"),
        (" PassWord123 ", "most common"),  # compared trimmed and lowercased
    ],
)
def test_a_weak_password_is_told_which_rule_it_breaks(password, rule):
    assert rule in (weakness(password) or "")


def test_a_long_uncommon_password_passes():
    assert weakness(PASSWORD) is None
    assert weakness("moose12345") is None  # 10 characters
    assert weakness("m" * 128) is None


def test_the_common_password_list_is_the_file_its_readme_names():
    readme = Path(str(DATA / "README.md")).read_text()
    digest = hashlib.sha256((DATA / "common-passwords.txt.gz").read_bytes()).hexdigest()
    assert digest in readme.replace("\n", "")


async def test_logins_keep_their_share_of_the_threads_while_registrations_queue():
    hashing = Hashing(Settings(hash_threads=2, hash_login_share=1))
    release = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def slow_registration(_: str) -> str:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        release.wait(30)
        with lock:
            running -= 1
        return "registered"

    try:
        flood = [
            asyncio.create_task(hashing.for_registration(slow_registration, str(i)))
            for i in range(6)
        ]
        await asyncio.sleep(0.1)  # the flood holds what it may
        # A login gets a thread though every registration is stuck.
        async with asyncio.timeout(20):
            assert await hashing.for_login(str.upper, "login") == "LOGIN"
        assert not any(task.done() for task in flood)
        release.set()
        assert await asyncio.gather(*flood) == ["registered"] * 6
        assert most == 1  # registrations never took the thread kept for logins
    finally:
        release.set()
        hashing.close()


def test_the_hash_threads_must_leave_registrations_one():
    with pytest.raises(ValueError, match="hash_login_share"):
        Settings(hash_threads=2, hash_login_share=2)


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own priority is Linux's")
async def test_new_accounts_hash_at_a_lower_cpu_priority_than_logins():
    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    hashing = Hashing(Settings())
    try:
        base = os.getpriority(os.PRIO_PROCESS, 0)
        assert await hashing.for_login(lambda: nice()) == base
        assert await hashing.for_registration(lambda: nice()) == min(19, base + 10)
    finally:
        hashing.close()
