"""A Runner played by a test: a real key, CSR and client certificate over mutual TLS (the Runner
agent process has its own end-to-end tests)."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from support.client import Api
from support.server import DevServer


class FakeSite:
    """Key, CSR and certificate of one Runner, kept like the agent keeps them."""

    def __init__(self, tmp: Path, name: str) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.csr = (
            x509.CertificateSigningRequestBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .sign(self.key, hashes.SHA256())
            .public_bytes(serialization.Encoding.PEM)
            .decode()
        )
        self.folder = tmp / name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.enrollment: dict[str, Any] = {}

    def enroll(self, api: Api, token: str, **extra: Any) -> httpx.Response:
        response = api.post(
            "/runner-enrollments",
            token=token,
            json={"csr_pem": self.csr, "hostname": "site-pc", "version": "0.1", **extra},
        )
        if response.status_code == 201:
            self.enrollment = response.json()
        return response

    def agent(self, server: DevServer, certificate_pem: str | None = None) -> httpx.Client:
        pem = certificate_pem or self.enrollment["certificate_pem"]
        (self.folder / "cert.pem").write_text(pem)
        (self.folder / "key.pem").write_bytes(
            self.key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        context = ssl.create_default_context(cafile=str(server.ca_file))
        context.load_cert_chain(self.folder / "cert.pem", self.folder / "key.pem")
        return httpx.Client(
            base_url=f"{server.agent_url}/api/v1/runner-agent", verify=context, timeout=30
        )
