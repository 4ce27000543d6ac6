"""The service CA that identifies Runners: created on first use, its private key encrypted with
KMS (moto's KMS in local mode), CSRs signed into client certificates, certificates checked.

Runner certificates carry the Runner id as their common name; the Runner's record keeps the
serial of the one certificate it may use, so a removed Runner's certificate is refused.
"""

from __future__ import annotations

import datetime as dt
import secrets
from functools import lru_cache
from typing import Any, NamedTuple

from etikett import clock
from etikett.settings import get_settings
from etikett.store import assets, ca, keys
from etikett.store.ca import CaRecord
from etikett_engine.errors import CertificateRefused, InvalidRequest, ProblemCode

# `cryptography` (about 50 modules) is imported in the functions that sign and verify: on
# Lambda, where the layer has no OpenSSL binding loaded otherwise, no cold start pays for it.

CA_NAME = "Etikett Runner CA"
CLIENT_VALIDITY = dt.timedelta(days=365)
CA_VALIDITY = dt.timedelta(days=3650)
KMS_CONTEXT = {"purpose": "etikett-runner-ca"}


class Authority(NamedTuple):
    certificate_pem: str
    certificate: Any  # cryptography.x509.Certificate
    private_key: Any


def _generate(kms_key_id: str) -> CaRecord:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Etikett"),
        ]
    )
    now = clock.now()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    der = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    encrypted = keys.encrypt(kms_key_id, der, KMS_CONTEXT)
    return CaRecord(
        certificate_pem=certificate.public_bytes(serialization.Encoding.PEM).decode(),
        encrypted_key=encrypted,
        kms_key_id=kms_key_id,
        created_at=now,
    )


@lru_cache(maxsize=1)
def _record() -> CaRecord:
    """The CA's record, created (once, whoever is first) when a Runner first needs it."""
    existing = ca.get()
    if existing is not None:
        return existing
    record = _generate(get_settings().required("ca_kms_key"))
    if not ca.add_once(record):
        stored = ca.get()  # another instance won the race: use its CA
        assert stored is not None
        return stored
    _publish_truststore(record.certificate_pem)
    return record


@lru_cache(maxsize=1)
def ca_certificate() -> Any:
    """The CA certificate only: checking a Runner's certificate needs no private key (nor KMS)."""
    from cryptography import x509

    record = ca.get()
    if record is None:
        raise CertificateRefused("No Runner has been enrolled yet.")
    return x509.load_pem_x509_certificate(record.certificate_pem.encode())


@lru_cache(maxsize=1)
def authority() -> Authority:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    record = _record()
    der = keys.decrypt(record.kms_key_id, record.encrypted_key, KMS_CONTEXT)
    return Authority(
        certificate_pem=record.certificate_pem,
        certificate=x509.load_pem_x509_certificate(record.certificate_pem.encode()),
        private_key=serialization.load_der_private_key(der, password=None),
    )


def _publish_truststore(pem: str) -> None:
    """API Gateway's mutual TLS reads its truststore from S3."""
    if assets.configured():
        assets.put("truststore/ca.pem", pem.encode(), "application/x-pem-file")


def ca_pem() -> str:
    return str(_record().certificate_pem)


def sign_csr(csr_pem: str, runner_id: str) -> tuple[str, str, dt.datetime]:
    """A client certificate for `runner_id` from the Runner's CSR: (PEM, serial hex, not after).
    Only the CSR's public key is used; its subject is replaced by ours."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    try:
        csr = x509.load_pem_x509_csr(csr_pem.encode())
    except ValueError:
        raise InvalidRequest.field(
            "body.csr_pem", "not a PEM certificate signing request"
        ) from None
    if not csr.is_signature_valid:
        raise InvalidRequest.field("body.csr_pem", "the CSR's signature does not verify")
    public_key = csr.public_key()
    check_runner_key(public_key)
    ca = authority()
    now = clock.now()
    not_after = now + CLIENT_VALIDITY
    serial = int.from_bytes(secrets.token_bytes(16), "big") >> 1
    certificate = (
        x509.CertificateBuilder()
        .subject_name(
            x509.Name(
                [
                    x509.NameAttribute(NameOID.COMMON_NAME, runner_id),
                    x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Etikett Runner"),
                ]
            )
        )
        .issuer_name(ca.certificate.subject)
        .public_key(public_key)
        .serial_number(serial)
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.private_key.public_key()),
            critical=False,
        )
        .sign(ca.private_key, hashes.SHA256())
    )
    pem = certificate.public_bytes(serialization.Encoding.PEM).decode()
    return pem, format(serial, "x"), not_after


RUNNER_CURVES = ("secp256r1", "secp384r1")  # P-256 (what Runners make) and P-384
RSA_BITS = (2048, 8192)


def check_runner_key(public_key: Any) -> None:
    """Refuse a Runner key not worth a client certificate: EC on P-256 or P-384, or RSA of
    2048 to 8192 bits (a larger one only costs every handshake); nothing else."""
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    if isinstance(public_key, ec.EllipticCurvePublicKey):
        if public_key.curve.name not in RUNNER_CURVES:
            raise InvalidRequest.field(
                "body.csr_pem",
                f"EC keys must be on P-256 or P-384, not {public_key.curve.name}",
            )
        return
    if isinstance(public_key, rsa.RSAPublicKey):
        low, high = RSA_BITS
        if not low <= public_key.key_size <= high:
            raise InvalidRequest.field(
                "body.csr_pem",
                f"RSA keys need {low} to {high} bits, not {public_key.key_size}",
            )
        return
    raise InvalidRequest.field(
        "body.csr_pem", "use an EC key on P-256 or P-384, or an RSA key of at least 2048 bits"
    )


def issue_server_certificate(hostnames: list[str]) -> tuple[str, str]:
    """(certificate PEM, key PEM) for an HTTPS endpoint, e.g. the local gateway's mTLS port."""
    return _issue(hostnames[0], hostnames, server=True)


def issue_client_certificate(name: str) -> tuple[str, str]:
    """(certificate PEM, key PEM) for one of the service's own clients with common name `name`,
    e.g. local AWS publishing wakes to local mode's MQTT broker."""
    return _issue(name, [], server=False)


def _issue(common_name: str, hostnames: list[str], *, server: bool) -> tuple[str, str]:
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca = authority()
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hostnames:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    now = clock.now()
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + CLIENT_VALIDITY)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    certificate = builder.sign(ca.private_key, hashes.SHA256())
    return (
        certificate.public_bytes(serialization.Encoding.PEM).decode(),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode(),
    )


class PresentedCertificate(NamedTuple):
    runner_id: str
    serial: str


def verify_client_certificate(pem: str) -> PresentedCertificate:
    """Check a client certificate as API Gateway passed it (it has verified the chain already;
    we check again: issuer signature, validity, key usage) and read the Runner id from it."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    try:
        certificate = x509.load_pem_x509_certificate(pem.encode())
    except ValueError:
        raise CertificateRefused("The client certificate is not readable.") from None
    ca = ca_certificate()
    if certificate.issuer != ca.subject:
        raise CertificateRefused("The client certificate was not issued by this service.")
    algorithm = certificate.signature_hash_algorithm
    if algorithm is None:
        raise CertificateRefused("The client certificate was not issued by this service.")
    try:
        ca.public_key().verify(
            certificate.signature, certificate.tbs_certificate_bytes, ec.ECDSA(algorithm)
        )
    except Exception:
        raise CertificateRefused("The client certificate was not issued by this service.") from None
    now = clock.now()
    if not (certificate.not_valid_before_utc <= now <= certificate.not_valid_after_utc):
        raise CertificateRefused(
            "The client certificate has expired.", ProblemCode.RUNNER_CERTIFICATE_EXPIRED
        )
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    runner_id = str(names[0].value) if names else ""
    if not runner_id.startswith("run_"):
        raise CertificateRefused("The client certificate does not name a Runner.")
    return PresentedCertificate(runner_id=runner_id, serial=format(certificate.serial_number, "x"))
