"""The local gateway's mutual-TLS port, as API Gateway offers it on a custom domain: a server
certificate from the service CA, client certificates verified against that CA, and the verified
certificate handed to the functions in `requestContext.authentication.clientCert`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

CLIENT_CERT_SCOPE_KEY = "etikett.client_cert_der"


def prepare(home: Path) -> tuple[Path, Path, Path]:
    """(server certificate, server key, CA bundle) files under `home/tls`, issued by the CA."""
    # The CA (and cryptography) load when TLS is set up, not with the CLI.
    from etikett.domain.runners import certificates

    folder = home / "tls"
    folder.mkdir(parents=True, exist_ok=True)
    certificate_pem, key_pem = certificates.issue_server_certificate(
        ["127.0.0.1", "localhost", "::1"]
    )
    paths = folder / "server.pem", folder / "server-key.pem", folder / "ca.pem"
    paths[0].write_text(certificate_pem)
    write_key(paths[1], key_pem)
    paths[2].write_text(certificates.ca_pem())
    return paths


def write_key(path: Path, key_pem: str) -> None:
    """A private key's file, readable by its owner alone from its first byte."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key_pem)


class ClientCertificateProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, passing the TLS peer's certificate into the ASGI scope."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if der:
            inner = self.app

            async def with_certificate(scope: Any, receive: Any, send: Any) -> None:
                await inner({**scope, CLIENT_CERT_SCOPE_KEY: der}, receive, send)

            self.app = with_certificate


def client_cert_context(der: bytes) -> dict[str, Any]:
    """The shape API Gateway gives a verified client certificate in the event."""
    # cryptography loads with the first client certificate, not with the gateway.
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    certificate = x509.load_der_x509_certificate(der)
    return {
        "clientCertPem": certificate.public_bytes(serialization.Encoding.PEM).decode(),
        "subjectDN": certificate.subject.rfc4514_string(),
        "issuerDN": certificate.issuer.rfc4514_string(),
        "serialNumber": format(certificate.serial_number, "x"),
        "validity": {
            "notBefore": certificate.not_valid_before_utc.strftime("%b %d %H:%M:%S %Y GMT"),
            "notAfter": certificate.not_valid_after_utc.strftime("%b %d %H:%M:%S %Y GMT"),
        },
    }
