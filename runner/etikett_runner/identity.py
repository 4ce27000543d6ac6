"""The Runner's identity: an EC P-256 key made and kept in the state directory, the certificate
signing request sent at enrollment, and the TLS contexts for the service (the agent channel
presents the client certificate)."""

from __future__ import annotations

import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from etikett_runner.files import write_private


def create_key(path: Path) -> None:
    """A new private key, written with mode 0600 (never readable by others, not even briefly)."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    write_private(path, pem)


def load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path} does not hold an EC private key")
    return key


def certificate_request(key_path: Path, name: str) -> str:
    """A PEM CSR for the key; the service replaces the subject with the Runner's id."""
    key = load_key(key_path)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name[:64] or "etikett-runner")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM).decode("ascii")


def certificate_matches_key(certificate_path: Path, key_path: Path) -> bool:
    certificate = x509.load_pem_x509_certificate(certificate_path.read_bytes())
    public = certificate.public_key()
    mine = load_key(key_path).public_key()
    return bool(
        public.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        == mine.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def server_context(ca_files: list[Path]) -> ssl.SSLContext:
    """Verify the server against the system's CAs plus our own (the service CA in local mode)."""
    context = ssl.create_default_context()
    for path in ca_files:
        if path.exists():
            context.load_verify_locations(cafile=str(path))
    return context


def client_context(certificate: Path, key: Path, ca_files: list[Path]) -> ssl.SSLContext:
    """As `server_context`, presenting the Runner's certificate (mutual TLS)."""
    context = server_context(ca_files)
    context.load_cert_chain(certfile=str(certificate), keyfile=str(key))
    return context
