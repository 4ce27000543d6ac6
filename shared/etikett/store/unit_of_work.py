"""The unit of work: the writes of one change, and its audit entry, in one DynamoDB transaction.

Repositories add their writes to it (`counters.add(uow, record)`); every conditional write carries
a name. When DynamoDB cancels the transaction, the name of the write whose condition failed picks
the error the caller gave for that name, so nobody reads failures by item position:

    with UnitOfWork(entry, errors={ConditionName.COUNTER_ABSENT: Conflict(...)}) as uow:
        counters.add(uow, record)

A failed condition without a named error, or a transaction that lost a race with another, is a
409 `resource.conflict`: nothing was written, and reading again and retrying is safe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pynamodb.exceptions import TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action
from pynamodb.models import Model

from etikett.store.base import connection, item_too_large, too_large
from etikett.store.conditions import ConditionName
from etikett_engine.errors import Conflict, EtikettError, ProblemCode

if TYPE_CHECKING:
    from etikett.store.audit_table import AuditRecord

# A write's request (pynamodb's operation kwargs: TableName, Item or Key, the condition), made
# when the transaction commits.
Write = Callable[[], dict[str, Any]]

# DynamoDB takes at most 100 items per transaction.
MAX_WRITES = 100
# A transaction's items are sent grouped by kind in this order (pynamodb's), whatever order they
# were added in; a cancellation reason's index counts in the order sent.
_SENT_ORDER = {"check": 0, "delete": 1, "put": 2, "update": 3}


class ConditionFailed(Conflict):
    """A named condition failed and the caller named no error for it."""

    def __init__(self, name: ConditionName | None) -> None:
        super().__init__(
            "Another change got there first; nothing was written. Read the resource again and "
            "retry.",
            ProblemCode.RESOURCE_CONFLICT,
        )
        self.name = name


class UnitOfWork:
    def __init__(
        self,
        audit: AuditRecord | None = None,
        *,
        errors: Mapping[ConditionName, EtikettError] | None = None,
    ) -> None:
        """`audit`: the change's audit entry, written in the same transaction."""
        self._writes: list[tuple[str, ConditionName | None, Write]] = []
        self._errors = dict(errors or {})
        self._after: list[Callable[[], None]] = []
        if audit is not None:
            self.add_audit(audit)

    # --- what repositories add ----------------------------------------------------------------

    def put(
        self, item: Model, condition: Condition | None = None, *, name: ConditionName | None = None
    ) -> None:
        self._add("put", name, lambda: item.get_save_kwargs_from_instance(condition=condition))

    def put_request(self, request: dict[str, Any], *, name: ConditionName | None = None) -> None:
        """A put whose request the repository built itself (`store.wire_items.put`: the same
        request as `put` of its model, without building the model)."""
        self._add("put", name, lambda: request)

    def update(
        self,
        item: Model,
        actions: list[Action],
        condition: Condition | None = None,
        *,
        name: ConditionName | None = None,
    ) -> None:
        self._add(
            "update",
            name,
            lambda: item.get_update_kwargs_from_instance(actions=actions, condition=condition),
        )

    def delete(
        self, item: Model, condition: Condition | None = None, *, name: ConditionName | None = None
    ) -> None:
        self._add("delete", name, lambda: item.get_delete_kwargs_from_instance(condition=condition))

    def check(
        self,
        model: type[Model],
        hash_key: str,
        range_key: str | None,
        condition: Condition,
        *,
        name: ConditionName,
    ) -> None:
        """A condition on an item this change does not write (it must hold when it commits)."""
        self._add(
            "check",
            name,
            lambda: model.get_operation_kwargs_from_class(
                hash_key, range_key=range_key, condition=condition
            ),
        )

    def add_audit(self, audit: AuditRecord) -> None:
        """One more audit entry, for a change that is several (labels created together)."""
        # Imported here: the queue consumers (webhook sender, events publisher) write no audit
        # and need not load its table.
        from etikett.store import audit_table

        self.put_request(audit_table.put(audit))

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run `action` once the transaction has committed (e.g. refresh a cached view)."""
        self._after.append(action)

    def fail_as(self, name: ConditionName, error: EtikettError) -> None:
        """The error to raise if the condition named `name` fails."""
        self._errors[name] = error

    # --- committing -----------------------------------------------------------------------------

    def commit(self) -> None:
        if not self._writes:
            return
        if len(self._writes) > MAX_WRITES:
            raise ValueError(f"{len(self._writes)} writes; a transaction takes {MAX_WRITES}")
        writes = sorted(self._writes, key=lambda write: _SENT_ORDER[write[0]])  # as sent
        requests: dict[str, list[dict[str, Any]]] = {kind: [] for kind in _SENT_ORDER}
        try:
            for kind, _, write in writes:
                requests[kind].append(write())
            # What pynamodb's TransactWrite sends (none of our items has a version attribute).
            connection().transact_write_items(
                condition_check_items=requests["check"],
                delete_items=requests["delete"],
                put_items=requests["put"],
                update_items=requests["update"],
            )
        except TransactWriteError as error:
            raise self._refusal(error, [name for _, name, _ in writes]) from None
        finally:
            self._writes.clear()
        for action in self._after:
            action()

    def _refusal(self, error: TransactWriteError, names: list[ConditionName | None]) -> Exception:
        """The error for a cancelled transaction; `names` are its writes' in the order sent."""
        reasons = getattr(error, "cancellation_reasons", None) or []
        codes = [reason.code if reason is not None else None for reason in reasons]
        for index, code in enumerate(codes):
            if code == "ConditionalCheckFailed":
                name = names[index] if index < len(names) else None
                if name is not None and name in self._errors:
                    return self._errors[name]
                return ConditionFailed(name)
        if "TransactionConflict" in codes or error.cause_response_code == "TransactionConflict":
            return ConditionFailed(None)
        if item_too_large(error):
            return too_large()
        return error

    def _add(self, kind: str, name: ConditionName | None, write: Write) -> None:
        self._writes.append((kind, name, write))

    def __enter__(self) -> UnitOfWork:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is None:
            self.commit()
