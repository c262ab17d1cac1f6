"""A certificate authority of a test's own, and a server certificate it signed (openssl)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Certs:
    """PEM files: the CA's certificate, and the server's certificate and key for 127.0.0.1."""

    ca: Path
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        """A TLS server context that presents the server certificate."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context

    def client_context(self) -> ssl.SSLContext:
        """A TLS client context that trusts this CA only (and checks the host name)."""
        return ssl.create_default_context(cafile=str(self.ca))


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def make_certs(folder: Path) -> Certs:
    """A CA and a server certificate for 127.0.0.1 signed by it, in `folder` (skip: no openssl)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make certificates")
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key = folder / "ca.pem", folder / "ca.key"
    cert, key, csr = folder / "server.pem", folder / "server.key", folder / "server.csr"
    ext = folder / "server.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req",
        "-x509",
        *ec,
        "-days",
        "2",
        "-subj",
        "/CN=moose test CA",
        "-keyout",
        str(ca_key),
        "-out",
        str(ca),
    )
    _openssl("req", *ec, "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    _openssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        str(ext),
        "-out",
        str(cert),
    )
    return Certs(ca, cert, key)
