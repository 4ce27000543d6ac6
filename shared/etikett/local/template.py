"""Reads template.yaml: functions, their HTTP routes, SQS and DynamoDB stream sources, and the AWS
resources.

Local mode derives everything from the template, so what runs locally is what deploys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

LOCAL_ACCOUNT = "123456789012"


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short-form intrinsic functions (`!Ref X` → `{"Ref": "X"}`)."""


def _intrinsic(loader: _CfnLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:  # YAML has no fourth kind of node
        raise yaml.constructor.ConstructorError(None, None, f"unexpected {node!r}", node.start_mark)
    return {name: value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


@dataclass(frozen=True)
class HttpRoute:
    method: str  # "GET", …, or "ANY"
    path: str  # "/api/v1/users/{userId}" or "$default"
    function: str  # logical id


@dataclass(frozen=True)
class SqsSource:
    function: str
    queue: str  # logical id of the queue
    batch_size: int
    report_item_failures: bool


@dataclass(frozen=True)
class DynamoDBSource:
    """A function's `DynamoDB` event: the stream of a table of the template."""

    function: str
    table: str  # logical id of the table whose stream it reads
    batch_size: int
    starting_position: str  # TRIM_HORIZON | LATEST
    report_item_failures: bool
    maximum_retry_attempts: int  # -1: until the batch succeeds


@dataclass
class Function:
    logical_id: str
    code_uri: Path
    handler: str
    environment: dict[str, Any]
    timeout: int
    memory: int


@dataclass
class Template:
    path: Path
    resources: dict[str, dict[str, Any]]
    parameters: dict[str, Any]
    global_environment: dict[str, Any]
    functions: dict[str, Function] = field(default_factory=dict)
    routes: list[HttpRoute] = field(default_factory=list)
    sqs_sources: list[SqsSource] = field(default_factory=list)
    stream_sources: list[DynamoDBSource] = field(default_factory=list)

    def resources_of(self, kind: str) -> dict[str, dict[str, Any]]:
        return {name: res for name, res in self.resources.items() if res.get("Type") == kind}


def load(path: Path) -> Template:
    document = yaml.load(path.read_text(), Loader=_CfnLoader)
    resources: dict[str, dict[str, Any]] = document.get("Resources", {})
    function_globals = document.get("Globals", {}).get("Function", {})
    template = Template(
        path=path,
        resources=resources,
        parameters={
            name: spec.get("Default") for name, spec in document.get("Parameters", {}).items()
        },
        global_environment=dict(function_globals.get("Environment", {}).get("Variables", {})),
    )
    for name, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource.get("Properties", {})
        template.functions[name] = Function(
            logical_id=name,
            code_uri=(path.parent / props["CodeUri"]).resolve(),
            handler=props.get("Handler", "app.handler"),
            environment=dict(props.get("Environment", {}).get("Variables", {})),
            timeout=int(props.get("Timeout", function_globals.get("Timeout", 3))),
            memory=int(props.get("MemorySize", function_globals.get("MemorySize", 128))),
        )
        for event in props.get("Events", {}).values():
            event_props = event.get("Properties", {})
            if event["Type"] == "HttpApi":
                template.routes.append(
                    HttpRoute(
                        method=str(event_props.get("Method", "ANY")).upper(),
                        path=event_props.get("Path", "$default"),
                        function=name,
                    )
                )
            elif event["Type"] == "SQS":
                queue = event_props["Queue"]
                queue_id = queue["Fn::GetAtt"][0] if isinstance(queue, dict) else queue
                template.sqs_sources.append(
                    SqsSource(
                        function=name,
                        queue=queue_id,
                        batch_size=int(event_props.get("BatchSize", 10)),
                        report_item_failures="ReportBatchItemFailures"
                        in event_props.get("FunctionResponseTypes", []),
                    )
                )
            elif event["Type"] == "DynamoDB":
                template.stream_sources.append(_stream_source(name, event_props))
    return template


def _stream_source(function: str, props: dict[str, Any]) -> DynamoDBSource:
    stream = props.get("Stream")
    target = stream.get("Fn::GetAtt") if isinstance(stream, dict) else None
    if not (isinstance(target, list) and len(target) == 2 and target[1] == "StreamArn"):
        raise ValueError(
            f"{function}: a DynamoDB event's Stream must be !GetAtt <Table>.StreamArn, "
            f"not {stream!r}"
        )
    return DynamoDBSource(
        function=function,
        table=target[0],
        batch_size=int(props.get("BatchSize", 100)),
        starting_position=str(props.get("StartingPosition", "TRIM_HORIZON")),
        report_item_failures="ReportBatchItemFailures" in props.get("FunctionResponseTypes", []),
        maximum_retry_attempts=int(props.get("MaximumRetryAttempts", -1)),
    )


def find(start: Path | None = None) -> Path:
    """The template.yaml of the project that holds `start` (default: the working directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "template.yaml"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("no template.yaml here or in a parent folder")
