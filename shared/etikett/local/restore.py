"""`etikett restore-credentials`: re-creates the credentials of a backed-up credentials table in
another Etikett (another stack, another KMS key) with the store key exported by
`exportCredentialMasterKey` and its passphrase. The secrets are opened here, in memory, and sent
only to the target's `createCredential` over its API (HTTPS, or loopback)."""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

PASSPHRASE_ENV = "ETIKETT_RESTORE_PASSPHRASE"


def read_items(path: Path) -> list[dict[str, Any]]:
    """Items of `aws dynamodb scan --output json` (`{"Items": [...]}`) or of a DynamoDB export to
    S3 in DynamoDB JSON (one `{"Item": {...}}` per line)."""
    text = path.read_text()
    try:
        document = json.loads(text)
    except ValueError:
        return [json.loads(line)["Item"] for line in text.splitlines() if line.strip()]
    if isinstance(document, dict) and "Items" in document:
        return list(document["Items"])
    if isinstance(document, dict) and "Item" in document:
        return [document["Item"]]
    raise ValueError(f"{path}: neither a scan answer nor a DynamoDB JSON export")


def restore(export: Path, items: Path, target: str | None, token: str | None) -> int:
    # A restore only: the CLI's other commands start without the vault and the HTTP client.
    from etikett.domain.credentials import credential_vault
    from etikett_engine import outgoing

    passphrase = os.environ.get(PASSPHRASE_ENV) or getpass.getpass("Passphrase of the export: ")
    try:
        key = credential_vault.unwrap_export(json.loads(export.read_text()), passphrase)
    except ValueError as error:
        print(f"Cannot open the export: {error}", file=sys.stderr)
        return 1
    bodies = [b for b in (credential_vault.restore_body(i, key) for i in read_items(items)) if b]
    if target is None:
        for body in bodies:
            print(f"{body['ref']} ({body['kind']}): opens")
        print(f"{len(bodies)} credential(s) open with this key; give --to and --token to restore.")
        return 0
    outgoing.check_url(target, private_allowed=True)  # the operator names the target
    failed = 0
    with outgoing.client(timeout=30, private_allowed=True) as http:
        for body in bodies:
            answer = http.post(
                target.rstrip("/") + "/api/v1/credentials",
                json=body,
                headers={"authorization": f"Bearer {token}"},
            )
            ok = answer.status_code == 201
            failed += not ok
            detail = "" if ok else f": {answer.status_code} {answer.json().get('code')}"
            print(f"{body['ref']} ({body['kind']}): {'restored' if ok else 'refused'}{detail}")
    return 1 if failed else 0
