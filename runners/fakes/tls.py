"""A throwaway self-signed certificate for the fakes that speak TLS (Gemini Live's)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class TlsPair(BaseModel):
    """A throwaway self-signed certificate for 127.0.0.1 and the contexts that use it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    cert_pem: Path
    key_pem: Path
    server: ssl.SSLContext
    client: ssl.SSLContext


def self_signed_tls(directory: Path | None = None) -> TlsPair:
    """Generate a certificate for 127.0.0.1/localhost; the client context trusts only it."""
    from cryptography import x509  # deferred: cryptography (a test extra) is needed only for the TLS fakes
    from cryptography.hazmat.primitives import (  # deferred: cryptography (a test extra) is needed only for the TLS fakes
        hashes,
        serialization,
    )
    from cryptography.hazmat.primitives.asymmetric import ec  # deferred: cryptography (a test extra) is needed only for the TLS fakes
    from cryptography.x509.oid import NameOID  # deferred: cryptography (a test extra) is needed only for the TLS fakes

    directory = Path(directory or tempfile.mkdtemp(prefix="arena-fake-tls-"))
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
    cert_pem = directory / "cert.pem"
    key_pem = directory / "key.pem"
    cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_pem, key_pem)
    client = ssl.create_default_context(cafile=str(cert_pem))
    return TlsPair(cert_pem=cert_pem, key_pem=key_pem, server=server, client=client)
