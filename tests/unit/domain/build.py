"""What many domain tests need around the rule they test, made through the domain itself: Runner
groups, Runners enrolled with a real CSR (and online by their heartbeat), adopted printers,
released labels and flows."""

from __future__ import annotations

from typing import Any

from etikett.domain.agent import runner_agent, runner_messages
from etikett.domain.flows import flows
from etikett.domain.labels import label_versions, labels
from etikett.domain.labels.label_versions import StatusChange
from etikett.domain.printers import printers
from etikett.domain.runners import runner_enrollment, runners
from etikett.store import runners as runner_store
from etikett.store.runners import RunnerRecord
from unit.domain.callers import human

_KEY: Any = None


def csr(common_name: str = "runner") -> str:
    """A CSR of an EC P-256 key, as a Runner makes one (the key is made once per process)."""
    global _KEY
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    if _KEY is None:
        _KEY = ec.generate_private_key(ec.SECP256R1())
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .sign(_KEY, hashes.SHA256())
    )
    return request.public_bytes(serialization.Encoding.PEM).decode()


def group(name: str = "Lager") -> runners.RunnerGroup:
    return runners.create_group(
        human("createRunnerGroup", "operator"), runners.NewRunnerGroup(name=name)
    )


def enrolled(
    group_id: str, *, online: bool = True, needs_approval: bool = False, name: str = "host"
) -> runner_enrollment.EnrollmentCreated:
    token = runner_enrollment.issue_token(
        human("postRunnerEnrollmentToken", "admin"),
        group_id,
        runner_enrollment.NewEnrollmentToken(needs_approval=needs_approval),
    )
    created = runner_enrollment.enroll(
        human("postRunnerEnrollment"),
        token.token,
        runner_enrollment.EnrollmentRequest(csr_pem=csr(), hostname=name, version="1.0"),
    )
    if online and not needs_approval:
        heartbeat(created.runner_id)
    return created


def runner(group_id: str | None = None, *, online: bool = True) -> RunnerRecord:
    """An admitted Runner (online by a heartbeat, unless not)."""
    created = enrolled(group_id or group().id, online=online)
    record = runner_store.get_runner(created.runner_id)
    assert record is not None
    return record


def heartbeat(runner_id: str) -> None:
    record = runner_store.get_runner(runner_id)
    assert record is not None
    runner_agent.heartbeat(record, runner_messages.Heartbeat())


def printer(runner_id: str, name: str, *, dpi: int = 203) -> printers.Printer:
    return printers.create(
        human("createPrinter", "operator"),
        printers.NewPrinter(
            name=name, runner_id=runner_id, uri="tcp://192.168.1.50:9100", language="zpl", dpi=dpi
        ),
    )


def released_label(document: dict[str, Any], *, name: str = "Versand") -> str:
    """A label whose version 1 is `document`, approved by a person."""
    created = labels.create(human("createLabel", "designer"), name, document)
    label_versions.set_status(
        human("postLabelStatus", "approver"),
        created.id,
        StatusChange(version=1, status="approved"),
    )
    return created.id


def release_taller(label_id: str) -> int:
    """A second version of a released label (30 mm tall), approved: now the released one."""
    label_versions.patch_document(
        human("patch"),
        label_id,
        label_versions.DocumentPatch(
            operations=[{"op": "replace", "path": "/size/height_mm", "value": 30}]
        ),
    )
    label_versions.set_status(
        human("postLabelStatus", "approver"), label_id, StatusChange(version=2, status="approved")
    )
    return 2


TICKING: dict[str, Any] = {  # a flow without lint errors: a schedule that logs
    "nodes": [
        {"id": "tick", "type": "trigger.schedule", "every_s": 60, "wires": ["note"]},
        {"id": "note", "type": "action.log", "message": '"tick"'},
    ]
}


def flow(document: dict[str, Any] | None = None, *, name: str = "Versand") -> flows.Flow:
    return flows.create(
        human("createFlow", "designer"),
        flows.NewFlow(name=name, document=document if document is not None else TICKING),
    )
