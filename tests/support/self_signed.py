"""Certificates for TLS servers and clients in tests: a self-signed one (a model server on
loopback, a gateway that must load one before it binds), or a small CA of its own that issues
server and client certificates (a broker that asks its clients for theirs)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path
from typing import Any


def certificate(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """`cert.pem` and `key.pem` in `tmp_path`: a self-signed certificate for the DNS name `name`
    (valid for an hour) and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    subject = _name(name)
    built = (
        _builder(subject, subject, key.public_key())
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return _write(tmp_path / "cert.pem", tmp_path / "key.pem", built, key)


class Authority:
    """A CA (`ca.pem` in `folder`) that issues certificates valid for an hour."""

    def __init__(self, folder: Path) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        self.folder = folder
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._subject = _name("test CA")
        ca = (
            _builder(self._subject, self._subject, self._key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.pem = folder / "ca.pem"
        self.pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))

    def issue(self, name: str, *, server: bool = False) -> tuple[Path, Path]:
        """`<name>.pem` and `<name>-key.pem`: for a server on 127.0.0.1, or a client named
        `name` (its common name)."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID

        key = ec.generate_private_key(ec.SECP256R1())
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = _builder(_name(name), self._subject, key.public_key()).add_extension(
            x509.ExtendedKeyUsage([usage]), critical=False
        )
        if server:
            address = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
            builder = builder.add_extension(x509.SubjectAlternativeName([address]), critical=False)
        built = builder.sign(self._key, hashes.SHA256())
        return _write(self.folder / f"{name}.pem", self.folder / f"{name}-key.pem", built, key)

    def client_context(self, name: str) -> ssl.SSLContext:
        """A client's TLS context: it trusts this CA and presents a certificate named `name`."""
        context = ssl.create_default_context(cafile=str(self.pem))
        context.load_cert_chain(*self.issue(name))
        return context


def _name(common_name: str) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: Any, issuer: Any, public_key: Any) -> Any:
    from cryptography import x509

    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(hours=1))
    )


def _write(cert_file: Path, key_file: Path, built: Any, key: Any) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization

    cert_file.write_bytes(built.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file
