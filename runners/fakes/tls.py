"""A throwaway self-signed certificate for the fakes that speak TLS (Gemini Live's).

Nothing of it outlives its use: the private key is on disk only for the moment the server's
context loads it (Python's `ssl` reads keys from files only), in a folder only we can read,
removed before `self_signed_tls` returns; the client's context trusts the certificate from
memory. The certificate itself is written to a file only when something asks for one
(`TlsPair.cert_pem`: a process told to trust it through SSL_CERT_FILE), and `close` (the
fake's `stop`) removes it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import os
import shutil
import ssl
import tempfile
from pathlib import Path

PREFIX = "arena-fake-tls-"


class TlsPair:
    """A throwaway self-signed certificate for 127.0.0.1 and the contexts that use it."""

    def __init__(self, cert: bytes, server: ssl.SSLContext, client: ssl.SSLContext, directory: Path | None) -> None:
        self.cert = cert  # PEM: public, as any server's certificate
        self.server = server
        self.client = client
        self._directory = directory  # where `cert_pem` writes (None: a folder of its own, removed by `close`)
        self._made: Path | None = None

    @property
    def cert_pem(self) -> Path:
        """The certificate as a PEM file (written on first use), for a client that reads one."""
        if self._made is None:
            folder = self._directory or Path(tempfile.mkdtemp(prefix=PREFIX))
            path = folder / "cert.pem"
            path.write_bytes(self.cert)
            self._made = path
        return self._made

    def close(self) -> None:
        """Remove what `cert_pem` wrote (a folder it made, or the file in the one it was given)."""
        made, self._made = self._made, None
        if made is None:
            return
        if self._directory is None:
            shutil.rmtree(made.parent, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                made.unlink()


def self_signed_tls(directory: Path | None = None) -> TlsPair:
    """Generate a certificate for 127.0.0.1/localhost; the client context trusts only it.
    `directory`: where `cert_pem` writes the certificate if asked (else a temporary folder)."""
    from cryptography import x509  # deferred: cryptography (a test extra) is needed only for the TLS fakes
    from cryptography.hazmat.primitives import (  # deferred: cryptography (a test extra) is needed only for the TLS fakes
        hashes,
        serialization,
    )
    from cryptography.hazmat.primitives.asymmetric import ec  # deferred: cryptography (a test extra) is needed only for the TLS fakes
    from cryptography.x509.oid import NameOID  # deferred: cryptography (a test extra) is needed only for the TLS fakes

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    _load_chain(server, cert_pem + key_pem)
    client = ssl.create_default_context(cadata=cert_pem.decode())
    return TlsPair(cert_pem, server, client, Path(directory) if directory is not None else None)


def _load_chain(context: ssl.SSLContext, pem: bytes) -> None:
    """Load a certificate and its key into `context` through a file that exists only meanwhile
    (mode 0600, in a folder of mode 0700), removed whatever happens."""
    folder = tempfile.mkdtemp(prefix=PREFIX)
    try:
        path = os.path.join(folder, "chain.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        context.load_cert_chain(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
