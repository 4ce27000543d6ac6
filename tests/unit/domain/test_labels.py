"""Labels and their versions: creation, patches into new versions, release under the approval
policy, archive, copies and deletion, called in the domain on moto's in-process backend."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from etikett.catalog.vorlagen import vorlagen
from etikett.domain.labels import label_versions, labels
from etikett.domain.labels.label_versions import DocumentPatch, StatusChange
from etikett.domain.users import policies
from etikett.store import labels as label_store
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain.callers import agent, human, operations, trail
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")

TEXT = {"id": "title", "type": "text", "x_mm": 5, "y_mm": 5, "size_pt": 10, "content": "Hello"}
CLIPPED_BARCODE = {  # runs far past the right edge of a 50 mm label: an error finding
    "id": "code",
    "type": "barcode",
    "symbology": "code128",
    "x_mm": 45,
    "y_mm": 5,
    "height_mm": 10,
    "content": "ABCDEFGHIJKLMNOP1234567890",
}


def _code(error: pytest.ExceptionInfo[EtikettError]) -> ProblemCode:
    return error.value.code


def _label(name: str = "Versand", objects: list[dict[str, Any]] | None = None) -> labels.Label:
    created = labels.create_blank(
        human("createLabel", "designer"),
        labels.NewLabel(name=name, size=labels.SizeIn(width_mm=50, height_mm=30)),
    )
    if objects:
        patch(created.id, [{"op": "add", "path": "/objects/-", "value": o} for o in objects])
    return created


def patch(
    label_id: str, operations_: list[dict[str, Any]], *, base: int | None = None, by: Any = None
) -> label_versions.DocumentAnswer:
    return label_versions.patch_document(
        by or human("patchLabelDocument", "designer"),
        label_id,
        DocumentPatch(operations=operations_, base_version=base),
    )


def approve(label_id: str, version: int, by: Any = None) -> label_versions.VersionEntry:
    return label_versions.set_status(
        by or human("postLabelStatus", "approver"),
        label_id,
        StatusChange(version=version, status="approved"),
    )


# --- creation -------------------------------------------------------------------------------


def test_a_new_label_is_a_draft_whose_version_1_is_audited_with_it() -> None:
    invocation = human("createLabel", "designer")
    created = labels.create_blank(invocation, labels.NewLabel(name="Palette"))
    assert created.status == "draft" and created.latest_version == 1
    assert created.released_version is None
    assert (created.size.width_mm, created.size.height_mm, created.size.dpi) == (101.6, 152.4, 203)
    (version,) = label_versions.list_versions(created.id, "label", 10, None).items
    assert version.status == "draft" and version.author.subject == invocation.caller.subject
    (entry,) = trail(created.id)
    assert entry.operation_id == "createLabel" and entry.outcome == "success"
    assert entry.details == {
        "name": "Palette",
        "version": 1,
        "vorlage_id": None,
        "copied_from": None,
    }
    assert entry.request_id == invocation.request_id


def test_a_label_from_a_vorlage_keeps_the_vorlage_s_document() -> None:
    from etikett.catalog.vorlagen import get_vorlage

    created = labels.create_from_vorlage(
        human("createLabelFromVorlage", "designer"),
        labels.NewLabelFromVorlage(vorlageId="shipping-label", name="Versand DE"),
    )
    vorlage = get_vorlage("shipping-label")
    assert vorlage is not None and created.vorlage_id == "shipping-label"
    document = label_versions.get_document(created.id).document
    assert [o["id"] for o in document["objects"]] == [o["id"] for o in vorlage.document["objects"]]


def test_a_vorlage_on_a_preset_or_a_size_with_the_findings_of_its_stock() -> None:
    kept = labels.create_from_vorlage(
        human("createLabelFromVorlage", "designer"),
        labels.NewLabelFromVorlage(
            vorlageId="shipping-label", name="Versand 4 x 4", preset_id="zebra-4x4-203"
        ),
    )
    assert (kept.size.width_mm, kept.size.height_mm, kept.size.dpi) == (101.6, 101.6, 203)
    assert {f.code for f in kept.findings} & {"label.object_outside", "label.barcode_clipped"}
    assert kept.findings == label_versions.get_document(kept.id, with_findings=True).findings
    (entry,) = label_versions.list_versions(kept.id, "label", 5, None).items
    assert entry.comment == "from Vorlage shipping-label on zebra-4x4-203"

    scaled = labels.create_from_vorlage(
        human("createLabelFromVorlage", "designer"),
        labels.NewLabelFromVorlage.model_validate(
            {
                "vorlageId": "shipping-label",
                "name": "Versand klein",
                "size": {"width_mm": 80, "height_mm": 80},
                "dpi": 203,
                "fit": "scale",
            }
        ),
    )
    assert (scaled.size.width_mm, scaled.size.height_mm) == (80, 80)
    assert [f for f in scaled.findings if f.severity == "error"] == []
    with pytest.raises(ValueError, match="not both"):
        labels.NewLabelFromVorlage.model_validate(
            {"vorlageId": "shipping-label", "name": "x", "preset_id": "zebra-4x4-203", "dpi": 300}
        )
    with pytest.raises(EtikettError) as unknown:
        labels.create_from_vorlage(
            human("createLabelFromVorlage"),
            labels.NewLabelFromVorlage(vorlageId="shipping-label", name="x", preset_id="nope"),
        )
    assert _code(unknown) == ProblemCode.PRESET_NOT_FOUND


def test_unknown_vorlagen_and_presets_are_refused_by_code() -> None:
    with pytest.raises(EtikettError) as vorlage:
        labels.create_from_vorlage(
            human("createLabelFromVorlage"),
            labels.NewLabelFromVorlage(vorlageId="no-such-vorlage", name="x"),
        )
    assert _code(vorlage) == ProblemCode.VORLAGE_NOT_FOUND
    with pytest.raises(EtikettError) as preset:
        labels.create_from_preset(
            human("createLabelFromPreset"),
            labels.NewLabelFromPreset(preset_id="no-such-preset", name="x"),
        )
    assert _code(preset) == ProblemCode.PRESET_NOT_FOUND


def test_a_label_from_a_preset_takes_its_size_and_density() -> None:
    created = labels.create_from_preset(
        human("createLabelFromPreset"),
        labels.NewLabelFromPreset(preset_id="zebra-4x6-300", name="x"),
    )
    assert (created.size.width_mm, created.size.height_mm, created.size.dpi) == (101.6, 152.4, 300)


def test_an_invalid_expression_is_refused_with_its_path_and_nothing_is_written() -> None:
    document = {
        "size": {"width_mm": 50, "height_mm": 30},
        "objects": [{**TEXT, "content": None, "expression": "undeclared_name +"}],
    }
    before = labels.list_labels(200, None, None).items
    with pytest.raises(EtikettError) as refused:
        labels.create(human("createLabel"), "broken", document)
    assert _code(refused) == ProblemCode.DOCUMENT_INVALID
    assert refused.value.params["errors"][0]["path"] == "/objects/0/expression"
    assert labels.list_labels(200, None, None).items == before


def test_a_document_too_large_to_store_is_refused() -> None:
    noise = [
        {**TEXT, "id": f"t{i}", "content": secrets.token_urlsafe(7500)} for i in range(50)
    ]  # ≈ 500 KB that does not compress
    document = {"size": {"width_mm": 50, "height_mm": 30}, "objects": noise}
    with pytest.raises(EtikettError) as refused:
        labels.create(human("createLabel"), "huge", document)
    assert _code(refused) == ProblemCode.DOCUMENT_TOO_LARGE
    assert refused.value.params["limit"] == label_store.MAX_DOCUMENT_BYTES


# --- patches and versions -------------------------------------------------------------------


def test_a_patch_saves_the_next_version_and_leaves_the_previous_one_as_it_was() -> None:
    label = _label()
    answer = patch(label.id, [{"op": "add", "path": "/objects/-", "value": TEXT}], base=1)
    assert answer.version == 2 and answer.status == "draft"
    assert [o["id"] for o in answer.document["objects"]] == ["title"]
    assert label_versions.get_document(label.id, 1).document["objects"] == []
    assert labels.get(label.id).latest_version == 2
    last = trail(label.id)[-1]
    assert last.operation_id == "patchLabelDocument"
    assert last.details == {"document": "label", "before_version": 1, "after_version": 2}


def test_a_patch_that_resizes_the_document_resizes_the_label() -> None:
    label = _label()
    patch(
        label.id,
        [
            {"op": "replace", "path": "/size/width_mm", "value": 75},
            {"op": "replace", "path": "/dpi", "value": 300},
        ],
    )
    size = labels.get(label.id).size
    assert (size.width_mm, size.height_mm, size.dpi) == (75, 30, 300)


def test_a_patch_against_an_older_version_is_a_version_conflict() -> None:
    label = _label(objects=[TEXT])  # now at version 2
    with pytest.raises(EtikettError) as refused:
        patch(label.id, [{"op": "remove", "path": "/objects/0"}], base=1)
    assert _code(refused) == ProblemCode.DOCUMENT_VERSION_CONFLICT
    assert refused.value.params["latest_version"] == 2
    assert labels.get(label.id).latest_version == 2


def test_object_ids_are_kept_but_an_object_may_be_removed_whole() -> None:
    label = _label(objects=[TEXT])
    for operations_ in (
        [{"op": "replace", "path": "/objects/0/id", "value": "renamed"}],
        [{"op": "replace", "path": "/objects", "value": [{**TEXT, "id": "other"}]}],
        [{"op": "replace", "path": "/objects/0", "value": {**TEXT, "id": "other"}}],
    ):
        with pytest.raises(EtikettError) as refused:
            patch(label.id, operations_)
        assert _code(refused) == ProblemCode.DOCUMENT_ID_CHANGED, operations_
    assert labels.get(label.id).latest_version == 2
    assert patch(label.id, [{"op": "remove", "path": "/objects/0"}]).document["objects"] == []


def test_a_patch_that_does_not_apply_names_the_failing_operation() -> None:
    label = _label(objects=[TEXT])
    with pytest.raises(EtikettError) as refused:
        patch(
            label.id,
            [
                {"op": "replace", "path": "/objects/0/content", "value": "Hi"},
                {"op": "test", "path": "/objects/0/content", "value": "Hello"},
            ],
        )
    assert _code(refused) == ProblemCode.DOCUMENT_PATCH_FAILED
    assert refused.value.params == {"index": 1, "reason": "test_failed"}
    with pytest.raises(EtikettError) as missing:
        patch(label.id, [{"op": "remove", "path": "/objects/7"}])
    assert _code(missing) == ProblemCode.DOCUMENT_PATCH_FAILED
    assert labels.get(label.id).latest_version == 2


def test_of_two_concurrent_patches_one_wins_and_the_other_writes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second patch read version 1 as the latest; the first saved version 2 meanwhile."""
    label = _label()
    read = label_store.get

    def read_then_lose_the_race(label_id: str) -> Any:
        stale = read(label_id)
        monkeypatch.setattr(label_store, "get", read)
        patch(label_id, [{"op": "add", "path": "/objects/-", "value": TEXT}], by=human("first"))
        return stale

    monkeypatch.setattr(label_store, "get", read_then_lose_the_race)
    with pytest.raises(EtikettError) as refused:
        patch(label.id, [{"op": "replace", "path": "/dpi", "value": 300}], by=human("second"))
    assert _code(refused) == ProblemCode.DOCUMENT_VERSION_CONFLICT
    versions = label_versions.list_versions(label.id, "label", 10, None).items
    assert [v.version for v in versions] == [2, 1]
    assert label_versions.get_document(label.id).document["dpi"] == 203
    assert operations(label.id) == ["createLabel", "first"]  # no entry for the loser


def test_versions_page_newest_first_without_gaps_or_repeats() -> None:
    label = _label()
    for n in range(6):
        patch(label.id, [{"op": "replace", "path": "/size/height_mm", "value": 20 + n}])
    seen: list[int] = []
    cursor = None
    while True:
        page = label_versions.list_versions(label.id, "label", 3, cursor)
        seen += [v.version for v in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [7, 6, 5, 4, 3, 2, 1]


def test_a_cursor_from_another_list_is_refused() -> None:
    label = _label()
    cursor = labels.list_labels(1, None, None).next_cursor
    assert cursor is not None
    with pytest.raises(EtikettError) as refused:
        label_versions.list_versions(label.id, "label", 3, cursor)
    assert _code(refused) == ProblemCode.REQUEST_INVALID_CURSOR


# --- release and the approval policy ---------------------------------------------------------


def test_approving_releases_the_version_and_retires_the_previous_release() -> None:
    label = _label(objects=[TEXT])
    approve(label.id, 2)
    patch(label.id, [{"op": "replace", "path": "/objects/0/content", "value": "Hi"}])
    approver = human("postLabelStatus", "approver")
    entry = approve(label.id, 3, by=approver)
    assert entry.status == "approved" and entry.status_changed_by == approver.caller.subject
    statuses = {
        v.version: v.status for v in label_versions.list_versions(label.id, "label", 9, None).items
    }
    assert statuses == {3: "approved", 2: "retired", 1: "draft"}
    current = labels.get(label.id)
    assert current.status == "released" and current.released_version == 3


def test_an_approval_records_its_event_and_audit_entry_with_it(aws: Aws) -> None:
    label = _label(objects=[TEXT])
    approve(label.id, 2)
    approved = aws.events_about(label.id)
    assert [e.kind for e in approved] == ["label.approved"]
    assert approved[0].data["version"] == 2 and approved[0].data["previous_version"] is None
    last = trail(label.id)[-1]
    assert last.operation_id == "postLabelStatus"
    assert (last.details or {})["before"] == "draft" and (last.details or {})["after"] == "approved"


def test_setting_the_status_a_version_has_changes_and_records_nothing() -> None:
    label = _label(objects=[TEXT])
    approve(label.id, 2)
    count = len(trail(label.id))
    assert approve(label.id, 2).status == "approved"
    assert len(trail(label.id)) == count


def test_withdrawing_the_released_version_leaves_the_label_unreleased() -> None:
    label = _label(objects=[TEXT])
    approve(label.id, 2)
    label_versions.set_status(
        human("postLabelStatus", "approver"), label.id, StatusChange(version=2, status="retired")
    )
    current = labels.get(label.id)
    assert current.released_version is None and current.status == "draft"


def test_an_agent_s_version_needs_a_person_to_approve_it_while_the_policy_is_on() -> None:
    label = _label()
    patch(label.id, [{"op": "add", "path": "/objects/-", "value": TEXT}], by=agent("patch"))
    with pytest.raises(EtikettError) as refused:
        approve(label.id, 2, by=agent("postLabelStatus", "approver", "admin"))
    assert _code(refused) == ProblemCode.POLICY_HUMAN_REQUIRED
    assert refused.value.status == 403
    assert labels.get(label.id).released_version is None
    assert label_versions.get_document(label.id, 2).status == "draft"
    assert approve(label.id, 2, by=human("postLabelStatus", "approver")).status == "approved"


def test_an_agent_may_approve_a_person_s_version() -> None:
    label = _label(objects=[TEXT])  # version 2 is a person's
    assert approve(label.id, 2, by=agent("postLabelStatus", "approver")).status == "approved"


def test_with_the_policy_off_an_agent_may_approve_an_agent_s_version() -> None:
    label = _label()
    patch(label.id, [{"op": "add", "path": "/objects/-", "value": TEXT}], by=agent("patch"))
    admin = human("putPolicy", "admin")
    policies.put(admin, policies.AI_APPROVAL, policies.PolicyChange(enabled=False))
    try:
        assert approve(label.id, 2, by=agent("postLabelStatus")).status == "approved"
    finally:
        policies.put(admin, policies.AI_APPROVAL, policies.PolicyChange(enabled=True))
    assert policies.enabled(policies.AI_APPROVAL)


def test_no_agent_may_switch_the_policy_off() -> None:
    with pytest.raises(EtikettError) as refused:
        policies.put(
            agent("putPolicy", "admin"), policies.AI_APPROVAL, policies.PolicyChange(enabled=False)
        )
    assert _code(refused) == ProblemCode.AUTH_HUMAN_REQUIRED
    assert policies.enabled(policies.AI_APPROVAL)
    assert operations(policies.AI_APPROVAL).count("agentPutPolicy") == 0


def test_a_version_with_error_findings_cannot_be_approved() -> None:
    label = _label(objects=[CLIPPED_BARCODE])
    answer = label_versions.get_document(label.id, 2, with_findings=True)
    assert "label.barcode_clipped" in {f.code for f in answer.findings if f.severity == "error"}
    count = len(trail(label.id))
    with pytest.raises(EtikettError) as refused:
        approve(label.id, 2)
    assert _code(refused) == ProblemCode.LABEL_HAS_ERRORS
    assert refused.value.params["findings"][0]["object_id"] == "code"
    assert label_versions.get_document(label.id, 2).status == "draft"
    assert len(trail(label.id)) == count


# --- forms ------------------------------------------------------------------------------------


def test_a_label_without_an_authored_form_has_one_derived_from_its_variables() -> None:
    label = _label()
    patch(
        label.id,
        [{"op": "add", "path": "/variables/-", "value": {"name": "lot", "required": True}}],
    )
    form = label_versions.get_form(label.id)
    assert form.version == 0 and form.status == "derived"
    assert [(f["variable"], f["required"]) for f in form.document["fields"]] == [("lot", True)]


def test_a_form_patch_saves_form_version_1_and_fields_must_name_entered_variables() -> None:
    label = _label()
    patch(label.id, [{"op": "add", "path": "/variables/-", "value": {"name": "lot"}}])
    saved = label_versions.patch_form(
        human("patchLabelForm"),
        label.id,
        DocumentPatch(operations=[{"op": "replace", "path": "/fields/0/label", "value": "Charge"}]),
    )
    assert saved.version == 1 and saved.document["fields"][0]["label"] == "Charge"
    assert labels.get(label.id).latest_version == 2  # the label's own versions are untouched
    with pytest.raises(EtikettError) as refused:
        label_versions.patch_form(
            human("patchLabelForm"),
            label.id,
            DocumentPatch(
                operations=[{"op": "replace", "path": "/fields/0/variable", "value": "nope"}]
            ),
        )
    assert _code(refused) == ProblemCode.DOCUMENT_INVALID


# --- archive, rename, list, copy, delete -----------------------------------------------------


def test_archived_labels_are_listed_only_when_asked_for_and_come_back() -> None:
    label = _label()
    archived = labels.archive(human("postLabelArchive"), label.id, labels.ArchiveChange())
    assert archived.archived
    ids = lambda flag: {found.id for found in labels.list_labels(200, None, flag).items}  # noqa: E731
    assert label.id in ids(True) and label.id not in ids(False)
    labels.archive(human("postLabelArchive"), label.id, labels.ArchiveChange(archived=False))
    assert label.id in ids(False) and label.id not in ids(True)
    assert [e.details for e in trail(label.id)[-2:]] == [{"archived": True}, {"archived": False}]


def test_labels_list_by_name_regardless_of_case_across_pages() -> None:
    tag = secrets.token_hex(3)
    made = {_label(name=f"{letter}-{tag}").id for letter in ("b", "A", "c", "D", "a")}
    seen: list[labels.Label] = []
    cursor = None
    while True:
        page = labels.list_labels(2, cursor, None)
        seen += page.items
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    ours = [found.name for found in seen if found.id in made]
    assert ours == sorted(ours, key=str.casefold) and len(ours) == 5
    assert len({found.id for found in seen}) == len(seen)


def test_a_filtered_list_pages_past_labels_the_filter_drops() -> None:
    tag = secrets.token_hex(3)
    names = [f"{tag}-{n}" for n in range(6)]
    made = [_label(name=name) for name in names]
    for label in made[::2]:
        labels.archive(human("postLabelArchive"), label.id, labels.ArchiveChange())
    kept: list[str] = []
    cursor = None
    while True:
        page = labels.list_labels(2, cursor, False)
        kept += [found.name for found in page.items if found.name.startswith(tag)]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert kept == names[1::2]


def test_a_rename_is_audited_with_the_names_before_and_after() -> None:
    label = _label(name="Alt")
    renamed = labels.rename(human("patchLabel"), label.id, labels.Rename(name="Neu"))
    assert renamed.name == "Neu" and renamed.latest_version == 1
    assert trail(label.id)[-1].details == {"before": "Alt", "after": "Neu"}


def test_a_copy_is_a_new_label_from_the_chosen_version() -> None:
    label = _label(name="Quelle", objects=[TEXT])
    copy = labels.copy(human("postLabelSaveCopy"), label.id, labels.CopyRequest(version=1))
    assert copy.id != label.id and copy.name == "Quelle (copy)"
    assert copy.copied_from == f"{label.id}@1" and copy.latest_version == 1
    assert label_versions.get_document(copy.id).document["objects"] == []
    latest = labels.copy(human("postLabelDuplicate"), label.id, labels.CopyRequest(name="Zwei"))
    assert latest.copied_from == f"{label.id}@2"
    assert [o["id"] for o in label_versions.get_document(latest.id).document["objects"]] == [
        "title"
    ]
    with pytest.raises(EtikettError) as refused:
        labels.copy(human("postLabelSaveCopy"), label.id, labels.CopyRequest(version=9))
    assert _code(refused) == ProblemCode.LABEL_VERSION_NOT_FOUND


def test_a_deleted_label_is_gone_with_its_versions_and_its_trail_remains() -> None:
    label = _label(objects=[TEXT])
    labels.delete(human("deleteLabel", "designer"), label.id)
    with pytest.raises(EtikettError) as gone:
        labels.get(label.id)
    assert _code(gone) == ProblemCode.LABEL_NOT_FOUND
    assert label_store.get_version(label.id, "label", 1) is None
    assert label_store.get_version(label.id, "label", 2) is None
    assert operations(label.id) == ["createLabel", "patchLabelDocument", "deleteLabel"]
    with pytest.raises(EtikettError) as again:
        labels.delete(human("deleteLabel"), label.id)
    assert _code(again) == ProblemCode.LABEL_NOT_FOUND


def test_changes_to_a_missing_label_are_label_not_found() -> None:
    for change in (
        lambda: labels.rename(human("patchLabel"), "lbl_missing", labels.Rename(name="x")),
        lambda: patch("lbl_missing", []),
        lambda: approve("lbl_missing", 1),
    ):
        with pytest.raises(EtikettError) as refused:
            change()
        assert _code(refused) == ProblemCode.LABEL_NOT_FOUND


def test_a_version_is_parsed_once_and_its_label_still_checked_every_time() -> None:
    label = _label(objects=[TEXT])
    number, first = label_versions.label_document(label.id)
    again = label_versions.label_document(label.id, 2)
    assert number == 2 and again[0] == 2 and again[1] is first  # kept, not read again
    assert first.objects[0].id == "title"
    patch(label.id, [{"op": "replace", "path": "/objects/0/content", "value": "Changed"}])
    newest_number, newest = label_versions.label_document(label.id)
    assert newest_number == 3 and newest is not first and newest.objects[0].content == "Changed"
    assert label_versions.label_document(label.id, 2)[1] is first
    labels.delete(human("deleteLabel", "designer"), label.id)
    with pytest.raises(EtikettError) as gone:  # kept in memory, yet gone with its label
        label_versions.label_document(label.id, 2)
    assert _code(gone) == ProblemCode.LABEL_NOT_FOUND


@pytest.mark.parametrize("vorlage", [v.id for v in vorlagen()])
def test_a_kept_version_dumps_to_the_stored_document(vorlage: str) -> None:
    """Copilots show the model the kept parsed version, dumped: exactly what is stored."""
    created = labels.create_from_vorlage(
        human("createLabel", "designer"),
        labels.NewLabelFromVorlage(vorlageId=vorlage, name=vorlage),
    )
    stored = label_versions.get_document(created.id).document
    _, kept = label_versions.label_document(created.id)
    assert kept.model_dump(mode="json", exclude_none=True) == stored
