"""The checks of an offline print against what the service knows, each item read once per
upload: a print that fails one is refused with a reason and a detail; one that passes may still
be flagged."""

from etikett.domain.agent import runner_flows
from etikett.domain.offline_sync.models import Flag, OfflinePrintIn
from etikett.domain.printing.print_targets import parse_reference
from etikett.store import counters, jobs, labels, printers
from etikett.store import deployments as deployment_store
from etikett.store.counters import BlockRecord
from etikett.store.jobs import JobRecord
from etikett.store.labels import VersionRecord
from etikett.store.printers import PrinterRecord
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import EtikettError


class Refusal(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class Reads:
    """What the prints of one upload are checked against, each item read once: an upload is
    mostly prints of one deployment, label and printer."""

    def __init__(self, runner: RunnerRecord, job_ids: set[str]) -> None:
        self.runner = runner
        self.jobs: dict[str, JobRecord] = jobs.get_many(job_ids)  # archived before: one read
        self._deployments: dict[str, deployment_store.DeploymentRecord | None] = {}
        self._running: dict[str, bool] = {}
        self._versions: dict[tuple[str, int], VersionRecord | None] = {}
        self._printers: dict[str, PrinterRecord | None] = {}
        self._blocks: dict[str, list[BlockRecord]] = {}

    def deployment(self, deployment_id: str) -> deployment_store.DeploymentRecord | None:
        if deployment_id not in self._deployments:
            self._deployments[deployment_id] = deployment_store.get(deployment_id)
        return self._deployments[deployment_id]

    def running(self, record: deployment_store.DeploymentRecord) -> bool:
        if record.id not in self._running:
            self._running[record.id] = runner_flows.runs_in_group(self.runner, record)
        return self._running[record.id]

    def version(self, label_id: str, version: int) -> VersionRecord | None:
        if (label_id, version) not in self._versions:
            self._versions[label_id, version] = labels.get_version(label_id, "label", version)
        return self._versions[label_id, version]

    def printer(self, printer_id: str) -> PrinterRecord | None:
        if printer_id not in self._printers:
            self._printers[printer_id] = printers.get(printer_id)
        return self._printers[printer_id]

    def reserved(self, counter: str, value: int) -> bool:
        """Whether `value` lies in a block of `counter` that this Runner reserved."""
        if counter not in self._blocks:
            self._blocks[counter] = counters.blocks_of(self.runner.id, counter)
        return any(
            block.first <= value <= block.first + block.step * (block.size - 1)
            and (value - block.first) % block.step == 0
            for block in self._blocks[counter]
        )


def check(reads: Reads, taken: OfflinePrintIn) -> tuple[Flag | None, str]:
    """The print's flag (None: nothing to flag) and its printer's name; a Refusal if it cannot
    be archived at all."""
    record = reads.deployment(taken.deployment_id)
    groups = {g for stage in record.stages for g in stage["group_ids"]} if record else set()
    if record is None or reads.runner.group_id not in groups:
        raise Refusal(
            "deployment_not_in_group",
            f"{taken.deployment_id} is not a deployment to this Runner's group.",
        )
    if (taken.flow_id, taken.flow_version) != (record.flow_id, int(record.version)):
        raise Refusal(
            "flow_not_deployed",
            f"{record.id} deploys version {record.version} of {record.flow_id}, not version "
            f"{taken.flow_version} of {taken.flow_id}.",
        )
    _check_label(reads, taken, record)
    printer_name = _check_printer(reads, taken)
    for index, item in enumerate(taken.records):
        for counter, value in item.counter_values.items():
            if not reads.reserved(counter, value):
                raise Refusal(
                    "counter_value_not_reserved",
                    f"Record {index}: {value} of counters.{counter} is in no block this Runner "
                    "reserved.",
                )
    flag: Flag | None = None
    if not reads.running(record):
        flag = "deployment_not_approved"
    elif not (record.offline or {}).get("allowed", False):
        flag = "offline_not_allowed"
    return flag, printer_name


def _check_label(
    reads: Reads, taken: OfflinePrintIn, record: deployment_store.DeploymentRecord
) -> None:
    named = set()
    for reference, alias in runner_flows.print_targets(record.flow_id, int(record.version)):
        try:
            label_id, version = parse_reference(reference)
        except EtikettError:
            continue
        if alias == taken.printer and label_id == taken.label_id:
            named.add(version)
    if not named or (None not in named and taken.label_version not in named):
        raise Refusal(
            "label_not_in_flow",
            f"Version {record.version} of {record.flow_id} prints no version "
            f"{taken.label_version} of {taken.label_id} to the alias {taken.printer!r}.",
        )
    stored = reads.version(taken.label_id, taken.label_version)
    if stored is None:
        raise Refusal(
            "label_version_not_found",
            f"{taken.label_id} has no version {taken.label_version}.",
        )
    if stored.status == "draft":  # no bundle carries a draft; retired since is fine
        raise Refusal(
            "label_version_not_approved",
            f"Version {taken.label_version} of {taken.label_id} was never approved.",
        )


def _check_printer(reads: Reads, taken: OfflinePrintIn) -> str:
    """The printer's name; a printer deleted since it printed is named by its alias."""
    printer = reads.printer(taken.printer_id)
    if printer is None:
        return taken.printer
    if printer.runner_id != reads.runner.id:
        raise Refusal("printer_not_this_runners", f"{taken.printer_id} is not this Runner's.")
    return str(printer.name)
