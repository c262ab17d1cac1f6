"""Session tokens: one answer to every token that does not verify, and a secret worth
keeping (no placeholder of this repository, 32 bytes or more)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moose_server.accounts.tokens import TokenError, Tokens
from moose_server.settings import PLACEHOLDERS, Settings
from moose_server.storage.embedded import free_port

ROOT = Path(__file__).resolve().parent.parent
SECRET = "a" * 16 + "b" * 16
K8S_PLACEHOLDER = "REPLACE-ME-moose-serve-refuses-this-placeholder-use-openssl-rand-base64-32"
# How the deploy files and docs set a token secret: env, flag, a Kubernetes Secret.
SETTERS = (
    re.compile(r"MOOSE_TOKEN_SECRET\s*[=:]\s*[\"']?([^\"'\s]+)"),
    re.compile(r"--token-secret[= ]+[\"']?([^\"'\s`|]+)"),
    re.compile(r"^\s*token-secret\s*:\s*[\"']?([^\"'\s]+)", re.MULTILINE),
)


def code_and_message(tokens: Tokens, token: str) -> tuple[str, str]:
    with pytest.raises(TokenError) as refused:
        tokens.check(token, time.time())
    return refused.value.code, refused.value.message


def test_every_token_that_does_not_verify_gets_one_answer():
    tokens = Tokens(SECRET, 3600)
    good = tokens.issue("p_1", "ada", time.time(), generation=3)
    forged = Tokens("another secret of more than 32 bytes", 3600).issue("p_1", "ada", time.time())
    bad = {
        code_and_message(tokens, token)
        for token in (
            "garbage",
            forged,
            good[:-1] + ("0" if good[-1] != "0" else "1"),  # tampered signature
            good.replace(".a3.", ".a4."),  # tampered generation
            good[:-1] + "\u00e9",  # not ASCII: compare_digest would raise TypeError
            good + ".x",  # one part too many
            "a.b.\u00b2.sig",  # a digit int() refuses, in a part the signature covers
        )
    }
    assert bad == {("bad_token", TokenError.bad().message)}
    expired = tokens.issue("p_1", "ada", time.time() - 7200)
    assert code_and_message(tokens, expired)[0] == "token_expired"  # signed here: may say so
    assert tokens.check(good, time.time()).generation == 3


def placeholders_in_the_repository() -> set[str]:
    """Every token secret the deploy files and docs set, but shell substitutions."""
    files = [
        *ROOT.glob("*.md"),
        *ROOT.glob("docs/**/*.md"),
        *(p for p in ROOT.glob("deploy/**/*") if p.is_file()),
    ]
    found = set()
    for path in files:
        for setter in SETTERS:
            found |= {v for v in setter.findall(path.read_text()) if not v.startswith("$")}
    return found


def test_every_placeholder_secret_of_the_repository_is_refused():
    found = placeholders_in_the_repository()
    assert K8S_PLACEHOLDER in found  # the scan sees it
    for secret in found | set(PLACEHOLDERS):
        with pytest.raises(ValueError, match="token secret"):
            Settings(token_secret=secret)


def test_a_secret_of_fewer_than_32_bytes_is_refused_and_a_random_one_taken():
    with pytest.raises(ValueError, match="fewer than 32 bytes"):
        Settings(token_secret="x" * 31)
    with pytest.raises(ValueError, match="fewer than 32 bytes"):
        Settings(token_secret="\u00e9" * 15)  # 30 bytes in UTF-8
    assert Settings(token_secret="kq3NwX0sT8f+Yb2lRr9Vh6Zc1Jm4Ue7Dp5Ga0Ow2Ls8=").token_secret


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "why"),
    [
        ({"MOOSE_TOKEN_SECRET": K8S_PLACEHOLDER}, "placeholder"),
        ({"MOOSE_TOKEN_SECRET": "only-28-bytes-Xk29fQ8wLm3Zp"}, "fewer than 32 bytes"),
    ],
)
def test_moose_serve_refuses_to_start_with_a_placeholder_or_short_secret(how, why, tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "moose",
        "serve",
        "--port",
        str(free_port()),
        "--data-dir",
        str(tmp_path / "data"),
    ]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, env={**os.environ, **how}
    )
    assert done.returncode == 2
    assert why in done.stderr and "openssl rand -base64 32" in done.stderr
    assert not (tmp_path / "data").exists()  # refused before anything started
