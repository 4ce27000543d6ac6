"""Creates the template's tables, queues, buckets and keys on the local endpoint, and resolves the
template's references (`!Ref`, `!GetAtt …Arn`, `!Sub`) to their local values."""

from __future__ import annotations

import contextlib
import json
import re
from typing import TYPE_CHECKING, Any, cast

import boto3

if TYPE_CHECKING:  # the stubs are a development dependency
    from mypy_boto3_s3.literals import BucketLocationConstraintType

from etikett.local.template import LOCAL_ACCOUNT, Template

PREFIX = "etikett-local"


class Resolver:
    """Resolves intrinsic functions against provisioned resources and parameter values."""

    def __init__(self, region: str, parameters: dict[str, Any]) -> None:
        self.region = region
        self.refs: dict[str, Any] = {
            "AWS::Region": region,
            "AWS::AccountId": LOCAL_ACCOUNT,
            "AWS::StackName": PREFIX,
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::Partition": "aws",
            **parameters,
        }
        self.attributes: dict[tuple[str, str], Any] = {}

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return self.refs[arg]
            if key == "Fn::GetAtt":
                return self.attributes[(arg[0], arg[1])]
            if key == "Fn::Sub":
                text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1])
                names = {name: self.resolve(v) for name, v in variables.items()}

                def substitute(match: re.Match[str]) -> str:
                    name = match.group(1)
                    if name in names:
                        return str(names[name])
                    if "." in name:
                        resource, attribute = name.split(".", 1)
                        return str(self.attributes[(resource, attribute)])
                    return str(self.refs[name])

                # `${!name}` is CloudFormation's escape for a literal `${name}` (IoT policy
                # variables).
                return re.sub(r"\$\{([^}!]+)\}", substitute, text).replace("${!", "${")
            if key == "Fn::Join":
                separator, parts = arg
                return separator.join(str(self.resolve(part)) for part in parts)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value


def _physical(logical_id: str) -> str:
    return f"{PREFIX}-{logical_id}"


def _table(client: Any, name: str, props: dict[str, Any]) -> None:
    existing = set(client.list_tables().get("TableNames", []))
    if name in existing:
        return
    request: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    if props.get("GlobalSecondaryIndexes"):
        request["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    if props.get("LocalSecondaryIndexes"):
        request["LocalSecondaryIndexes"] = props["LocalSecondaryIndexes"]
    if props.get("StreamSpecification"):
        request["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
    client.create_table(**request)
    ttl = props.get("TimeToLiveSpecification")
    if ttl and ttl.get("Enabled"):
        client.update_time_to_live(TableName=name, TimeToLiveSpecification=ttl)


def _role(iam: Any, name: str, resource: dict[str, Any], resolver: Resolver) -> None:
    """An IAM role of the template with its inline policies: local AWS checks requests signed
    with its session credentials against them (local/aws/sessions.py)."""
    props = resolver.resolve(resource.get("Properties", {}))
    role = props.get("RoleName") or _physical(name)
    try:
        arn = iam.get_role(RoleName=role)["Role"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        arn = iam.create_role(
            RoleName=role,
            AssumeRolePolicyDocument=json.dumps(props["AssumeRolePolicyDocument"]),
            MaxSessionDuration=int(props.get("MaxSessionDuration", 3600)),
        )["Role"]["Arn"]
    for policy in props.get("Policies", []):  # put again: the template may have changed
        iam.put_role_policy(
            RoleName=role,
            PolicyName=policy["PolicyName"],
            PolicyDocument=json.dumps(policy["PolicyDocument"]),
        )
    resolver.refs[name] = role
    resolver.attributes[(name, "Arn")] = arn


def provision(
    template: Template, endpoint_url: str, region: str, parameters: dict[str, Any] | None = None
) -> Resolver:
    """Create (or find, after a restart) every resource, in an order that satisfies references."""
    resolver = Resolver(region, {**template.parameters, **(parameters or {})})
    session = boto3.session.Session(region_name=region)

    dynamodb = session.client("dynamodb", endpoint_url=endpoint_url)
    sqs = session.client("sqs", endpoint_url=endpoint_url)
    s3 = session.client("s3", endpoint_url=endpoint_url)
    kms = session.client("kms", endpoint_url=endpoint_url)
    for name, resource in template.resources_of("AWS::DynamoDB::Table").items():
        props = resolver.resolve(resource.get("Properties", {}))
        table = props.get("TableName") or _physical(name)
        _table(dynamodb, table, props)
        resolver.refs[name] = table
        resolver.attributes[(name, "Arn")] = (
            f"arn:aws:dynamodb:{region}:{LOCAL_ACCOUNT}:table/{table}"
        )

    for name, resource in template.resources_of("AWS::S3::Bucket").items():
        props = resolver.resolve(resource.get("Properties", {}))
        bucket = props.get("BucketName") or _physical(name).lower()
        if bucket not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
            if region == "us-east-1":  # S3 refuses a location constraint naming its home
                s3.create_bucket(Bucket=bucket)
            else:
                s3.create_bucket(
                    Bucket=bucket,
                    CreateBucketConfiguration={
                        "LocationConstraint": cast("BucketLocationConstraintType", region)
                    },
                )
        resolver.refs[name] = bucket
        resolver.attributes[(name, "Arn")] = f"arn:aws:s3:::{bucket}"

    for name, resource in template.resources_of("AWS::KMS::Key").items():
        alias = f"alias/{_physical(name)}"
        aliases = {a["AliasName"]: a.get("TargetKeyId") for a in kms.list_aliases()["Aliases"]}
        key_id = aliases.get(alias)
        if key_id is None:
            props = resource.get("Properties", {})
            key_id = kms.create_key(
                Description=props.get("Description", name),
                KeySpec=props.get("KeySpec", "SYMMETRIC_DEFAULT"),
                KeyUsage=props.get("KeyUsage", "ENCRYPT_DECRYPT"),
            )["KeyMetadata"]["KeyId"]
            kms.create_alias(AliasName=alias, TargetKeyId=key_id)
        resolver.refs[name] = key_id
        resolver.attributes[(name, "Arn")] = f"arn:aws:kms:{region}:{LOCAL_ACCOUNT}:key/{key_id}"

    iot = session.client("iot", endpoint_url=endpoint_url)
    for name, resource in template.resources_of("AWS::IoT::Policy").items():
        props = resolver.resolve(resource.get("Properties", {}))
        policy = props.get("PolicyName") or _physical(name)
        # Made by an earlier start already, perhaps (its document changes rarely).
        with contextlib.suppress(iot.exceptions.ResourceAlreadyExistsException):
            iot.create_policy(policyName=policy, policyDocument=json.dumps(props["PolicyDocument"]))
        resolver.refs[name] = policy

    # Queues last among themselves in dependency order: a queue's redrive names its DLQ's ARN.
    pending = dict(template.resources_of("AWS::SQS::Queue"))
    while pending:
        progressed = False
        for name, resource in list(pending.items()):
            try:
                props = resolver.resolve(resource.get("Properties", {}))
            except KeyError:
                continue
            queue = props.get("QueueName") or _physical(name) + (
                ".fifo" if props.get("FifoQueue") else ""
            )
            attributes = {
                key: (
                    json.dumps(value)
                    if isinstance(value, dict)
                    else str(value).lower()
                    if isinstance(value, bool)
                    else str(value)
                )
                for key, value in props.items()
                if key
                in {
                    "VisibilityTimeout",
                    "MessageRetentionPeriod",
                    "DelaySeconds",
                    "ReceiveMessageWaitTimeSeconds",
                    "RedrivePolicy",
                    "FifoQueue",
                    "ContentBasedDeduplication",
                    "MaximumMessageSize",
                }
            }
            url = sqs.create_queue(QueueName=queue, Attributes=attributes)["QueueUrl"]
            resolver.refs[name] = url
            resolver.attributes[(name, "Arn")] = f"arn:aws:sqs:{region}:{LOCAL_ACCOUNT}:{queue}"
            resolver.attributes[(name, "QueueName")] = queue
            resolver.attributes[(name, "QueueUrl")] = url
            del pending[name]
            progressed = True
        if not progressed:
            raise ValueError(f"queues with unresolvable references: {sorted(pending)}")

    iam = session.client("iam", endpoint_url=endpoint_url)
    # Roles Runners get session credentials of (those whose ARN the functions' environment
    # names); the functions' own execution roles mean nothing locally.
    environment = json.dumps(template.global_environment)
    for name, resource in template.resources_of("AWS::IAM::Role").items():
        if f'"{name}"' in environment:
            _role(iam, name, resource, resolver)

    for name in template.resources_of("AWS::Serverless::LayerVersion"):
        resolver.refs[name] = f"arn:aws:lambda:{region}:{LOCAL_ACCOUNT}:layer:{name}:1"
    for name in template.resources_of("AWS::Serverless::HttpApi"):
        resolver.refs[name] = "local"
    for name in template.functions:
        resolver.refs[name] = _physical(name)
        resolver.attributes[(name, "Arn")] = (
            f"arn:aws:lambda:{region}:{LOCAL_ACCOUNT}:function:{_physical(name)}"
        )
    return resolver


def function_environment(template: Template, resolver: Resolver) -> dict[str, str]:
    """The environment every function sees: the Globals variables plus each function's own.

    All functions share one process locally, so a variable that two functions set differently
    (only descriptive ones such as the service name) is left out; their handlers name it themselves.
    """
    # A parameter given no value (and without a default) sets no variable, never "None".
    environment = {
        k: str(v)
        for k, v in ((k, resolver.resolve(v)) for k, v in template.global_environment.items())
        if v is not None
    }
    seen: dict[str, str | None] = {}
    for function in template.functions.values():
        for key, value in function.environment.items():
            raw = resolver.resolve(value)
            if raw is None:
                continue
            resolved = str(raw)
            seen[key] = resolved if seen.get(key, resolved) == resolved else None
    environment.update({k: v for k, v in seen.items() if v is not None})
    return environment
