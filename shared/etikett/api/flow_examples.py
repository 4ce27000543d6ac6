"""Examples of the Flows and Deployments operations' requests and answers, as the OpenAPI
document shows them (each fits its schema: tests/unit/test_openapi_examples.py).

Request examples go on the routes (`body(...)`); answers are set by `publish` once the document
is built, because FastAPI drops every null from what routes declare, and an answer's required
nulls (`next_cursor`, a stage's `approved_by`) belong in its example."""

from __future__ import annotations

from typing import Any

from fastapi import Body
from fastapi.openapi.models import Example

from etikett.api.answer_examples import answer_media

FLOW_ID = "flw_01J8Z7Q4X9V3M2N5P6R7S8T9U0"
LABEL_ID = "lbl_01J8Z7Q4X9V3M2N5P6R7S8T9V1"
DEPLOYMENT_ID = "dep_01J8Z9A1B2C3D4E5F6G7H8J9K0"
OLDER_DEPLOYMENT_ID = "dep_01J8Z8M3N4P5Q6R7S8T9V0W1X2"
GROUP_ID = "rgp_01J8Z7Q4X9V3M2N5P6R7S8T9U0"
RUNNER_ID = "run_01J8Z7R2S3T4V5W6X7Y8Z9A0B1"
PRINTER_ID = "prn_01J8Z7S5T6V7W8X9Y0Z1A2B3C4"
AT = "2026-05-04T10:00:00.000Z"
LATER = "2026-05-04T10:02:13.512Z"


def body(summary: str, example: Any, **more: tuple[str, Any]) -> Any:
    """A request body's `Body(...)` with one named example (and more by name: (summary,
    value))."""
    examples: dict[str, Example] = {"default": {"summary": summary, "value": example}}
    for name, (text, value) in more.items():
        examples[name] = {"summary": text, "value": value}
    return Body(openapi_examples=examples)


def page(*items: Any) -> dict[str, Any]:
    return {"items": list(items), "next_cursor": None}


# --- flows ---------------------------------------------------------------------------------------

DOCUMENT: dict[str, Any] = {
    "nodes": [
        {
            "id": "inbox",
            "type": "trigger.folder",
            "path": "/srv/labels/inbox",
            "format": "csv",
            "wires": ["shape"],
        },
        {
            "id": "shape",
            "type": "logic.set",
            "values": {"qty": "int(record.qty)"},
            "wires": ["some"],
        },
        {"id": "some", "type": "logic.filter", "condition": "record.qty > 0", "wires": ["ship"]},
        {
            "id": "ship",
            "type": "action.print",
            "label": LABEL_ID,
            "printer": "shipping",
            "copies": "record.qty",
            "variables": {"sscc": "record.sscc"},
        },
    ],
    "samples": [{"sscc": "00340123450000000017", "qty": "2"}],
}
FLOW = {
    "id": FLOW_ID,
    "name": "Shipping labels from the ERP",
    "description": "CSV exports of the ERP become SSCC labels at the dock.",
    "latest_version": 3,
    "created_at": AT,
    "updated_at": LATER,
}
NEW_FLOW = {
    "name": "Shipping labels from the ERP",
    "description": "CSV exports of the ERP become SSCC labels at the dock.",
    "document": DOCUMENT,
    "comment": "First draft",
}
CREATED_FLOW = {**FLOW, "latest_version": 1, "updated_at": AT, "version": 1, "findings": []}
FLOW_CHANGE = {"name": "Shipping labels (dock 2)", "description": "Dock 2 only."}
AUTHOR = {"actor": "human", "subject": "anna"}
VERSION_ENTRY = {
    "version": 3,
    "status": "deployed",
    "author": AUTHOR,
    "comment": "Only positive quantities",
    "created_at": LATER,
}
FINDING = {
    "code": "flow.unreachable_node",
    "severity": "warning",
    "path": "/nodes/4",
    "node_id": "audit",
    "message": "No trigger's wires reach 'audit'; it never runs.",
    "params": {},
}
DOCUMENT_ANSWER = {
    "flow_id": FLOW_ID,
    "version": 3,
    "status": "draft",
    "document": DOCUMENT,
    "findings": [],
}
DOCUMENT_PATCH = {
    "operations": [{"op": "replace", "path": "/nodes/2/condition", "value": "record.qty > 1"}],
    "base_version": 3,
    "comment": "Only pairs",
}
LINT_REQUEST = {"version": 3}
UNSAVED_DOCUMENT: dict[str, Any] = {
    **DOCUMENT,
    "nodes": [
        {**node, "ui": {"x": 40 + 220 * index, "y": 80}}
        for index, node in enumerate(DOCUMENT["nodes"])
    ],
}
UNSAVED_DOCUMENT["nodes"][2] = {**UNSAVED_DOCUMENT["nodes"][2], "condition": "record.qtty > 0"}
LINT_UNSAVED_REQUEST = {
    "document": UNSAVED_DOCUMENT,
    "scope": {"record": ["sscc", "qty"], "context": ["hall"]},
}
UNSAVED_FINDING = {
    "code": "flow.cel_name_unknown",
    "severity": "warning",
    "path": "/nodes/2/condition",
    "node_id": "some",
    "message": "record.qtty: no record that reaches this node has the field 'qtty' (it may "
    "have: qty, sscc)",
    "params": {
        "expression": "record.qtty > 0",
        "name": "record.qtty",
        "root": "record",
        "field": "qtty",
        "known": ["qty", "sscc"],
        "line": 1,
        "column": 8,
    },
}
LINT_UNSAVED_ANSWER = {
    "version": None,
    "findings": [UNSAVED_FINDING],
    "record_fields": {
        "inbox": ["qty", "sscc"],
        "shape": ["qty", "sscc"],
        "some": ["qty", "sscc"],
        "ship": ["qty", "sscc"],
    },
}
DRY_RUN_REQUEST = {
    "version": 3,
    "samples": [{"sscc": "00340123450000000017", "qty": "2"}],
    "runner_id": RUNNER_ID,
}
DRY_RUN_UNSAVED_REQUEST = {
    "document": UNSAVED_DOCUMENT,
    "samples": [{"sscc": "00340123450000000017", "qty": "2"}, {"sscc": "", "qty": "0"}],
    "context": {"hall": "3"},
}
RUNNER = {"id": RUNNER_ID, "name": "Halle 3 PC", "group_id": GROUP_ID}
DRY_RUN_ANSWER = {
    "version": 3,
    "trigger": "inbox",
    "runner": RUNNER,
    "runs": [
        {
            "sample_index": 0,
            "source": {"sscc": "00340123450000000017", "qty": "2"},
            "trace": [
                {
                    "node_id": "inbox",
                    "type": "trigger.folder",
                    "status": "executed",
                    "input": {"sscc": "00340123450000000017", "qty": "2"},
                    "output": {"sscc": "00340123450000000017", "qty": "2"},
                },
                {
                    "node_id": "shape",
                    "type": "logic.set",
                    "status": "executed",
                    "input": {"sscc": "00340123450000000017", "qty": "2"},
                    "output": {"sscc": "00340123450000000017", "qty": 2},
                },
                {
                    "node_id": "some",
                    "type": "logic.filter",
                    "status": "executed",
                    "input": {"sscc": "00340123450000000017", "qty": 2},
                    "output": {"sscc": "00340123450000000017", "qty": 2},
                },
                {
                    "node_id": "ship",
                    "type": "action.print",
                    "status": "executed",
                    "input": {"sscc": "00340123450000000017", "qty": 2},
                    "output": {"sscc": "00340123450000000017", "qty": 2, "print": {}},
                },
            ],
            "side_effects": [
                {
                    "node_id": "ship",
                    "kind": "print",
                    "performed": False,
                    "detail": {
                        "label": LABEL_ID,
                        "version": 2,
                        "printer": "shipping",
                        "copies": 2,
                        "variables": {"sscc": "00340123450000000017"},
                        "resolved_variables": {"sscc": "00340123450000000017"},
                        "counter_values": {},
                    },
                }
            ],
            "errors": [],
        }
    ],
}
FLOW_RUN = {
    "id": "frn_01J8ZB2C3D4E5F6G7H8J9K0M1N",
    "flow_id": FLOW_ID,
    "version": 3,
    "deployment_id": DEPLOYMENT_ID,
    "runner_id": RUNNER_ID,
    "trigger": {"node_id": "inbox", "source": "orders-0504.csv"},
    "started_at": AT,
    "finished_at": "2026-05-04T10:00:01.204Z",
    "outcome": "succeeded",
    "records": 120,
    "job_ids": ["job_01J8ZB2D4E5F6G7H8J9K0M1N2P"],
    "trace": {"records": [], "errors": [], "log": []},
}
REGISTRY = {
    "items": [
        {
            "type": "logic.filter",
            "category": "logic",
            "description": "Passes the record on only when `condition` is true; otherwise its "
            "path ends here.",
            "fields": {
                "type": "object",
                "additionalProperties": False,
                "required": ["condition"],
                "properties": {
                    "condition": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 2000,
                        "description": "CEL; the record passes on only when it is true.",
                        "examples": ['record.country == "DE"'],
                    }
                },
            },
            "outputs": "Its `wires`, with the record. Nothing when the condition is false.",
        }
    ]
}

# --- deployments ---------------------------------------------------------------------------------

NEW_DEPLOYMENT = {
    "flow_id": FLOW_ID,
    "version": 3,
    "stages": [{"group_ids": [GROUP_ID]}, {"group_ids": ["rgp_01J8Z7T9V0W1X2Y3Z4A5B6C7D8"]}],
    "printers": {"shipping": PRINTER_ID},
    "context": {"site": "Halle 3", "line": 2},
}
OFFLINE = {"allowed": True, "max_hours": 8, "max_labels": 2000, "counter_block_size": 200}
DEPLOYMENT: dict[str, Any] = {
    "id": DEPLOYMENT_ID,
    "flow_id": FLOW_ID,
    "version": 3,
    "status": "awaiting_approval",
    "stages": [
        {
            "index": 0,
            "group_ids": [GROUP_ID],
            "status": "active",
            "approved_by": "bernd",
            "approved_at": AT,
            "runners": [{"runner_id": RUNNER_ID, "status": "active", "detail": None}],
        },
        {
            "index": 1,
            "group_ids": ["rgp_01J8Z7T9V0W1X2Y3Z4A5B6C7D8"],
            "status": "awaiting_approval",
            "approved_by": None,
            "approved_at": None,
            "runners": [],
        },
    ],
    "offline": OFFLINE,
    "author": AUTHOR,
    "created_at": AT,
    "updated_at": LATER,
}
CREATED_DEPLOYMENT = {
    **DEPLOYMENT,
    "stages": [
        {
            **DEPLOYMENT["stages"][0],
            "status": "awaiting_approval",
            "approved_by": None,
            "approved_at": None,
            "runners": [],
        },
        {**DEPLOYMENT["stages"][1], "status": "pending"},
    ],
    "updated_at": AT,
}
APPROVAL = {"stage": 1, "comment": "Hall 3 ran a full shift without trouble."}
APPROVED = {
    **DEPLOYMENT,
    "status": "rolling_out",
    "stages": [
        DEPLOYMENT["stages"][0],
        {
            **DEPLOYMENT["stages"][1],
            "status": "rolling_out",
            "approved_by": "bernd",
            "approved_at": LATER,
            "runners": [
                {
                    "runner_id": "run_01J8Z7V3W4X5Y6Z7A8B9C0D1E2",
                    "status": "applying",
                    "detail": None,
                }
            ],
        },
    ],
}
ROLLBACK = {"comment": "Wrong label size on dock 2."}
ROLLED_BACK = {
    **DEPLOYMENT,
    "status": "rolled_back",
    "stages": [
        {**DEPLOYMENT["stages"][0], "status": "rolled_back"},
        {**DEPLOYMENT["stages"][1], "status": "pending"},
    ],
}
CONTEXT_VALUE = {"value": {"line": 2, "shift": "early"}}
CONTEXT_PARAMETER = {
    "name": "site",
    "value": "Halle 3",
    "updated_at": AT,
    "updated_by": "anna",
}
PRINTER_ASSIGNMENT = {
    "printer_id": PRINTER_ID,
    "by_runner": {RUNNER_ID: "prn_01J8Z7W6X7Y8Z9A0B1C2D3E4F5"},
}
ASSIGNED_PRINTER = {"alias": "shipping", **PRINTER_ASSIGNMENT}


# --- the answers, by operation ------------------------------------------------------------------

ANSWERS: dict[str, tuple[int, Any]] = {
    "listFlows": (200, page(FLOW)),
    "createFlow": (201, CREATED_FLOW),
    "getFlowRegistry": (200, REGISTRY),
    "getFlow": (200, FLOW),
    "patchFlow": (200, FLOW),
    "getFlowDocument": (200, DOCUMENT_ANSWER),
    "patchFlowDocument": (200, DOCUMENT_ANSWER),
    "listFlowVersions": (200, page(VERSION_ENTRY)),
    "getFlowVersion": (200, {**VERSION_ENTRY, "document": DOCUMENT}),
    "postFlowLint": (200, LINT_UNSAVED_ANSWER),
    "postFlowDryRun": (200, DRY_RUN_ANSWER),
    "listFlowRuns": (200, page(FLOW_RUN)),
    "listDeployments": (200, page(DEPLOYMENT)),
    "createDeployment": (201, CREATED_DEPLOYMENT),
    "getDeployment": (200, DEPLOYMENT),
    "postDeploymentApproval": (200, APPROVED),
    "postDeploymentRollback": (200, ROLLED_BACK),
    "getDeploymentContext": (200, page(CONTEXT_PARAMETER)),
    "putDeploymentContextParameter": (
        200,
        {**CONTEXT_PARAMETER, "name": "line", "value": CONTEXT_VALUE["value"]},
    ),
    "getDeploymentPrinters": (200, page(ASSIGNED_PRINTER)),
    "putDeploymentPrinter": (200, ASSIGNED_PRINTER),
    "putDeploymentOfflinePolicy": (200, OFFLINE),
    "listRunnerGroupDeployments": (200, page(DEPLOYMENT)),
}


def publish(spec: dict[str, Any]) -> None:
    """Set each answer's example in the built OpenAPI document."""
    for media, example in answer_media(spec, ANSWERS):
        media["example"] = example
