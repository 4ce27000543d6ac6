"""A Runner's certificate signing request is signed only for a key worth trusting: EC on P-256 or
P-384, or RSA of 2048 to 8192 bits. Everything else is refused before the CA is even loaded."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import NameOID

from etikett.domain.runners import certificates
from etikett_engine.errors import InvalidRequest


def _csr(key: Any) -> str:
    algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "runner")]))
        .sign(key, algorithm)
    )
    return request.public_bytes(serialization.Encoding.PEM).decode()


@pytest.mark.parametrize(
    ("key", "why"),
    [
        (ec.generate_private_key(ec.SECP192R1()), "P-256 or P-384"),
        (ec.generate_private_key(ec.SECP224R1()), "P-256 or P-384"),
        (ec.generate_private_key(ec.SECP256K1()), "P-256 or P-384"),
        (ec.generate_private_key(ec.SECP521R1()), "P-256 or P-384"),
        (rsa.generate_private_key(public_exponent=65537, key_size=1024), "2048"),
        (ed25519.Ed25519PrivateKey.generate(), "P-256"),
    ],
    ids=["secp192r1", "secp224r1", "secp256k1", "secp521r1", "rsa-1024", "ed25519"],
)
def test_weak_or_unexpected_keys_are_refused(key: Any, why: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        certificates.sign_csr(_csr(key), "run_probe")
    field = refused.value.params["fields"][0]
    assert field["field"] == "body.csr_pem"
    assert why in field["message"]


def test_a_huge_rsa_key_is_refused() -> None:
    """Checked by size alone (made from its numbers: generating one would take minutes)."""
    huge = rsa.RSAPublicNumbers(65537, (1 << 8199) | 1).public_key()
    with pytest.raises(InvalidRequest) as refused:
        certificates.check_runner_key(huge)
    assert "8192" in refused.value.params["fields"][0]["message"]


@pytest.mark.parametrize(
    "key",
    [
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP384R1()),
        rsa.generate_private_key(public_exponent=65537, key_size=2048),
    ],
    ids=["p-256", "p-384", "rsa-2048"],
)
def test_good_keys_pass(key: Any) -> None:
    certificates.check_runner_key(key.public_key())
