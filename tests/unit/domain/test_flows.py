"""Flows and their versions: kept and patched like label documents (ids kept, `base_version`
conflicts, authors), linted on every save, and not deleted while a deployment uses them."""

from __future__ import annotations

from typing import Any

import pytest

from etikett.domain import deployments
from etikett.domain.flows import flows
from etikett.domain.labels.label_versions import DocumentPatch
from etikett.store import flows as flow_store
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import build
from unit.domain.callers import agent, human, operations, trail

pytestmark = pytest.mark.usefixtures("aws")


def _patch(
    flow_id: str, operations_: list[dict[str, Any]], *, base: int | None = None, by: Any = None
) -> flows.FlowDocumentAnswer:
    return flows.patch_document(
        by or human("patchFlowDocument", "designer"),
        flow_id,
        DocumentPatch(operations=operations_, base_version=base),
    )


def _codes(answer: flows.FlowDocumentAnswer) -> set[str]:
    return {finding.code for finding in answer.findings if finding.severity == "error"}


def test_a_new_flow_is_version_1_written_with_its_audit_entry() -> None:
    invocation = human("createFlow", "designer")
    created = flows.create(invocation, flows.NewFlow(name="Versand", description="Kartons"))
    assert created.latest_version == 1 and created.description == "Kartons"
    (entry,) = trail(created.id)
    assert entry.operation_id == "createFlow"
    assert entry.details == {"name": "Versand", "after_version": 1}
    (version,) = flows.list_versions(created.id, 10, None).items
    assert version.author.subject == invocation.caller.subject


def test_an_empty_flow_is_saved_and_its_lint_says_it_has_no_trigger() -> None:
    created = flows.create(human("createFlow"), flows.NewFlow(name="leer"))
    assert _codes(flows.get_document(created.id)) == {"flow.no_trigger"}
    assert _codes(flows.get_document(build.flow().id)) == set()


def test_a_malformed_document_is_refused_with_its_paths_and_nothing_is_written() -> None:
    document = {"nodes": [{**build.TICKING["nodes"][0], "wires": ["nowhere"]}]}
    before = {f.id for f in flows.list_flows(200, None).items}
    with pytest.raises(EtikettError) as refused:
        flows.create(human("createFlow"), flows.NewFlow(name="kaputt", document=document))
    assert refused.value.code == ProblemCode.DOCUMENT_INVALID
    assert [e["path"] for e in refused.value.params["errors"]] == ["/nodes/0/wires/0"]
    assert {f.id for f in flows.list_flows(200, None).items} == before


def test_a_node_id_used_twice_is_refused() -> None:
    tick = build.TICKING["nodes"][0]
    with pytest.raises(EtikettError) as refused:
        flows.create(
            human("createFlow"),
            flows.NewFlow(
                name="x", document={"nodes": [{**tick, "wires": []}, {**tick, "wires": []}]}
            ),
        )
    assert refused.value.code == ProblemCode.DOCUMENT_INVALID
    assert refused.value.params["errors"][0]["path"] == "/nodes/1/id"


def test_a_patch_saves_the_next_version_with_its_lint() -> None:
    flow = build.flow()
    label_id = build.labels.create_blank(
        human("createLabel"), build.labels.NewLabel(name="unreleased")
    ).id
    printing = {"id": "print", "type": "action.print", "label": label_id, "printer": "shipping"}
    answer = _patch(
        flow.id,
        [
            {"op": "add", "path": "/nodes/-", "value": printing},
            {"op": "add", "path": "/nodes/0/wires/-", "value": "print"},
        ],
        base=1,
    )
    assert answer.version == 2 and "flow.label_not_released" in _codes(answer)
    assert flows.get(flow.id).latest_version == 2
    assert [n["id"] for n in flows.get_document(flow.id, 1).document["nodes"]] == ["tick", "note"]
    assert trail(flow.id)[-1].details == {
        "document": "flow",
        "before_version": 1,
        "after_version": 2,
    }


def test_a_patch_against_an_older_version_is_a_version_conflict() -> None:
    flow = build.flow()
    _patch(flow.id, [{"op": "replace", "path": "/nodes/0/every_s", "value": 30}])
    with pytest.raises(EtikettError) as refused:
        _patch(flow.id, [{"op": "replace", "path": "/nodes/0/every_s", "value": 90}], base=1)
    assert refused.value.code == ProblemCode.DOCUMENT_VERSION_CONFLICT
    assert refused.value.params["latest_version"] == 2
    assert flows.get_document(flow.id).document["nodes"][0]["every_s"] == 30


def test_node_ids_are_kept() -> None:
    flow = build.flow()
    with pytest.raises(EtikettError) as refused:
        _patch(flow.id, [{"op": "replace", "path": "/nodes/1/id", "value": "other"}])
    assert refused.value.code == ProblemCode.DOCUMENT_ID_CHANGED
    answer = _patch(
        flow.id,
        [{"op": "remove", "path": "/nodes/0/wires/0"}, {"op": "remove", "path": "/nodes/1"}],
    )
    assert [n["id"] for n in answer.document["nodes"]] == ["tick"]


def test_of_two_concurrent_patches_one_wins_and_the_other_writes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flow = build.flow()
    read = flow_store.get

    def read_then_lose_the_race(flow_id: str) -> Any:
        stale = read(flow_id)
        monkeypatch.setattr(flow_store, "get", read)
        _patch(
            flow_id, [{"op": "replace", "path": "/nodes/0/every_s", "value": 5}], by=human("first")
        )
        return stale

    monkeypatch.setattr(flow_store, "get", read_then_lose_the_race)
    with pytest.raises(EtikettError) as refused:
        _patch(
            flow.id, [{"op": "replace", "path": "/nodes/0/every_s", "value": 7}], by=human("second")
        )
    assert refused.value.code == ProblemCode.DOCUMENT_VERSION_CONFLICT
    assert [v.version for v in flows.list_versions(flow.id, 10, None).items] == [2, 1]
    assert flows.get_document(flow.id).document["nodes"][0]["every_s"] == 5
    assert operations(flow.id) == ["createFlow", "first"]


def test_a_patch_of_a_flow_deleted_meanwhile_is_flow_not_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Deleted after the patch read the latest version, before it saved the next one."""
    flow = build.flow()
    read = flow_store.get_version

    def read_then_see_it_deleted(flow_id: str, version: int) -> Any:
        stale = read(flow_id, version)
        monkeypatch.setattr(flow_store, "get_version", read)
        flows.delete(human("deleteFlow"), flow_id)
        return stale

    monkeypatch.setattr(flow_store, "get_version", read_then_see_it_deleted)
    with pytest.raises(EtikettError) as refused:
        _patch(flow.id, [{"op": "replace", "path": "/nodes/0/every_s", "value": 7}])
    assert refused.value.code == ProblemCode.FLOW_NOT_FOUND
    assert flow_store.get_version(flow.id, 2) is None


def test_versions_record_their_authors_and_page_newest_first() -> None:
    flow = build.flow()
    robot = agent("patchFlowDocument", "designer")
    for seconds in (10, 20, 30, 40):
        _patch(flow.id, [{"op": "replace", "path": "/nodes/0/every_s", "value": seconds}], by=robot)
    first = flows.list_versions(flow.id, 3, None)
    rest = flows.list_versions(flow.id, 3, first.next_cursor)
    assert [v.version for v in first.items + rest.items] == [5, 4, 3, 2, 1]
    assert rest.next_cursor is None
    assert first.items[0].author.actor == "service"
    assert first.items[0].author.subject == robot.caller.subject
    assert flows.get_version(flow.id, 3).document["nodes"][0]["every_s"] == 20
    with pytest.raises(EtikettError) as missing:
        flows.get_version(flow.id, 9)
    assert missing.value.code == ProblemCode.FLOW_VERSION_NOT_FOUND


def test_renaming_and_clearing_the_description_are_audited() -> None:
    flow = flows.create(human("createFlow"), flows.NewFlow(name="Alt", description="weg damit"))
    changed = flows.change(
        human("patchFlow"), flow.id, flows.FlowChange(name="Neu", description="")
    )
    assert changed.name == "Neu" and changed.description is None
    assert changed.latest_version == 1
    assert trail(flow.id)[-1].details == {
        "before": {"name": "Alt", "description": "weg damit"},
        "after": {"name": "Neu", "description": ""},
    }
    kept = flows.change(human("patchFlow"), flow.id, flows.FlowChange(name="Neuer"))
    assert kept.description is None and kept.name == "Neuer"


def test_a_flow_in_use_by_a_deployment_is_not_deleted_until_that_ends() -> None:
    flow = build.flow()
    group = build.group()
    deployment = deployments.create(
        human("createDeployment", "operator"),
        deployments.NewDeployment(
            flow_id=flow.id, version=1, stages=[deployments.StageIn(group_ids=[group.id])]
        ),
    )
    with pytest.raises(EtikettError) as refused:
        flows.delete(human("deleteFlow"), flow.id)
    assert refused.value.code == ProblemCode.FLOW_IN_USE
    assert refused.value.params["deployment_ids"] == [deployment.id]
    assert flows.get(flow.id).latest_version == 1
    deployments.rollback(human("postDeploymentRollback"), deployment.id, deployments.Rollback())
    flows.delete(human("deleteFlow"), flow.id)
    with pytest.raises(EtikettError) as gone:
        flows.get(flow.id)
    assert gone.value.code == ProblemCode.FLOW_NOT_FOUND
    assert flow_store.get_version(flow.id, 1) is None
    assert operations(flow.id)[-1] == "deleteFlow"


def test_changes_to_a_missing_flow_are_flow_not_found() -> None:
    for change in (
        lambda: flows.change(human("patchFlow"), "flw_missing", flows.FlowChange(name="x")),
        lambda: flows.delete(human("deleteFlow"), "flw_missing"),
        lambda: _patch("flw_missing", []),
        lambda: flows.list_versions("flw_missing", 10, None),
    ):
        with pytest.raises(EtikettError) as refused:
            change()
        assert refused.value.code == ProblemCode.FLOW_NOT_FOUND
