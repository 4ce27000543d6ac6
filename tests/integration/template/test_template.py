"""template.yaml is the single source of truth: its routes must be exactly the routers' routes,
and SAM's own tools must accept it."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from etikett.api.groups import GROUPS, routes_of
from etikett.local.template import load

BIN = Path(sys.executable).parent


def _router_routes(group: str) -> set[tuple[str, str]]:
    return {(method, route.path) for route in routes_of(group).routes for method in route.methods}


def test_every_group_is_a_function_whose_events_are_its_routes(repo: Path) -> None:
    template = load(repo / "template.yaml")
    by_group = {f.code_uri.name: f for f in template.functions.values()}
    assert set(GROUPS) <= set(by_group)
    for group in GROUPS:
        function = by_group[group]
        assert function.code_uri == repo / "functions" / group
        declared = {
            (r.method, r.path)
            for r in template.routes
            if r.function == function.logical_id and r.path != "$default"
        }
        assert declared == _router_routes(group), group


def test_no_route_is_declared_twice_and_default_goes_to_misc(repo: Path) -> None:
    template = load(repo / "template.yaml")
    keys = [(r.method, r.path) for r in template.routes]
    assert len(keys) == len(set(keys))
    defaults = [r for r in template.routes if r.path == "$default"]
    assert [template.functions[r.function].code_uri.name for r in defaults] == ["misc"]


# The one grant on `*`: registering a Runner's certificate with IoT Core (where idle Runners
# wait for wakes) names no resource, since the certificate is not there yet; the policy it may
# be given is named (iot:AttachPolicy on the wake policy only).
REGISTER_AT_IOT = "iot:RegisterCertificateWithoutCA"


def test_functions_get_least_privilege_policies(repo: Path) -> None:
    """Every policy names its resource; nothing is granted on `*`."""
    import yaml

    from etikett.local.template import _CfnLoader

    document = yaml.load((repo / "template.yaml").read_text(), Loader=_CfnLoader)
    resource_key = {"DynamoDB": "TableName", "S3": "BucketName", "KMS": "KeyId"}
    for name, resource in document["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        if "Role" in resource["Properties"]:  # an explicit role: see the next test
            continue
        for policy in resource["Properties"]["Policies"]:
            ((kind, spec),) = policy.items()
            if kind == "Statement":
                for statement in spec:
                    if statement["Action"] == REGISTER_AT_IOT:
                        continue  # see REGISTER_AT_IOT
                    assert statement["Resource"] != "*", name
                    actions = statement["Action"]
                    if isinstance(actions, str) and actions.startswith("iot:"):
                        # Wakes for idle Runners (issue 29): this stack's topics, the wake
                        # policy and the certificates registered with it, by name.
                        resources = statement["Resource"]
                        for each in resources if isinstance(resources, list) else [resources]:
                            assert ":iot:" in each["Fn::Sub"], (name, statement)
                        continue
                    if statement["Action"] == ["sts:AssumeRole"]:
                        # Runners' queue credentials (issue 29): one role, of this template.
                        resource = statement["Resource"].get("Fn::GetAtt", [])
                        assert resource == ["RunnerQueueRole", "Arn"], (name, statement)
                        continue
                    if all(a.startswith("kms:") for a in statement["Action"]):
                        # A key action no SAM policy template has (GenerateDataKey): one key.
                        resource = statement["Resource"].get("Fn::GetAtt", [])
                        assert resource[1:] == ["Arn"], (name, statement)
                        assert document["Resources"][resource[0]]["Type"] == "AWS::KMS::Key"
                        continue
                    assert "Fn::Sub" in statement["Resource"], (name, statement)
                    assert all(a.startswith("sqs:") for a in statement["Action"]), name
                continue
            if kind.startswith("SQS"):
                assert "Fn::GetAtt" in spec["QueueName"], (name, kind, spec)
                continue
            prefix = next(p for p in resource_key if kind.startswith(p))
            assert "Ref" in spec[resource_key[prefix]], (name, kind, spec)


def test_no_role_grants_anything_on_every_resource(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The template as CloudFormation receives it (SAM's transform, which adds the roles and,
    for event sources, managed policies): every role has only the managed policies SAM gives
    every function (logs, X-Ray), and every statement of its own names its resources."""
    import yaml
    from samtranslator.translator.transform import transform

    from etikett.local.template import _CfnLoader

    document = yaml.load((repo / "template.yaml").read_text(), Loader=_CfnLoader)
    for resource in document["Resources"].values():
        for key in ("CodeUri", "ContentUri"):  # as `sam package` leaves them
            if key in resource.get("Properties", {}):
                resource["Properties"][key] = "s3://bucket/key"

    class NoManagedPolicyNames:  # the template names no managed policy by name
        def load(self) -> dict[str, str]:
            return {}

    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    transformed = transform(document, {}, NoManagedPolicyNames())
    roles = {
        name: resource["Properties"]
        for name, resource in transformed["Resources"].items()
        if resource["Type"] == "AWS::IAM::Role"
    }
    functions = [
        r for r in transformed["Resources"].values() if r["Type"] == "AWS::Lambda::Function"
    ]
    # One role per function, and the one Runners' queue credentials come from (issue 29).
    assert len(roles) == len(functions) + 1 and "RunnerQueueRole" in roles
    allowed = {"service-role/AWSLambdaBasicExecutionRole", "AWSXrayWriteOnlyAccess"}
    for name, role in roles.items():
        for arn in role.get("ManagedPolicyArns", []):
            text = arn["Fn::Sub"] if isinstance(arn, dict) else arn
            assert text.partition(":policy/")[2] in allowed, (name, text)
        for policy in role.get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                resources = statement["Resource"]
                resources = resources if isinstance(resources, list) else [resources]
                if statement["Action"] == REGISTER_AT_IOT:
                    assert name == "RunnerAgentFunctionRole", name  # see REGISTER_AT_IOT
                    continue
                assert "*" not in resources, (name, statement)


def test_the_events_publisher_fans_out_with_only_what_that_needs(repo: Path) -> None:
    """It reads the subscription items (nothing else of the receivers' table) and sends to the
    deliveries queue; no queue stands between it and the webhook sender, which only delivers."""
    import yaml

    from etikett.local.template import _CfnLoader

    document = yaml.load((repo / "template.yaml").read_text(), Loader=_CfnLoader)
    resources = document["Resources"]
    publisher = resources["EventsPublisherFunction"]["Properties"]
    assert publisher["Environment"]["Variables"]["ETIKETT_WEBHOOK_DELIVERIES_QUEUE"] == {
        "Ref": "WebhookDeliveriesQueue"
    }
    role = resources["EventsPublisherRole"]["Properties"]["Policies"][0]["PolicyDocument"]
    grants = {
        (tuple(statement["Action"]), str(statement["Resource"])): statement.get("Condition")
        for statement in role["Statement"]
    }
    subscriptions = (("dynamodb:Query",), str({"Fn::GetAtt": ["WebhooksTable", "Arn"]}))
    assert grants[subscriptions] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["sub#*"]}}
    deliveries = str({"Fn::GetAtt": ["WebhookDeliveriesQueue", "Arn"]})
    assert grants[(("sqs:SendMessage",), deliveries)] is None
    assert len(grants) == 4  # and the stream's two
    sender = resources["WebhookSenderFunction"]["Properties"]["Events"]
    assert [source["Properties"]["Queue"] for source in sender.values()] == [
        {"Fn::GetAtt": ["WebhookDeliveriesQueue", "Arn"]}
    ]
    queues = {name for name, r in resources.items() if r["Type"] == "AWS::SQS::Queue"}
    assert not {"EventsQueue", "EventsDlq"} & queues
    # The store fans out by this key (`store.webhooks`): the condition above must match it.
    from etikett.store import webhooks

    assert webhooks._subscription_key("print.sent").startswith("sub#")


def test_cfn_lint_accepts_the_template(repo: Path) -> None:
    result = subprocess.run(
        [str(BIN / "cfn-lint"), "template.yaml"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_sam_validate_lint_accepts_the_template(repo: Path) -> None:
    result = subprocess.run(
        [str(BIN / "sam"), "validate", "--lint", "--region", "eu-central-1"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is a valid SAM Template" in result.stdout + result.stderr


@pytest.mark.slow
def unchecked_bytecode(source: Path) -> bool:
    """Whether `source` has a CPython 3.11 .pyc that is used without looking at the source."""
    cached = source.parent / "__pycache__" / f"{source.stem}.cpython-311.pyc"
    if not cached.is_file():
        return False
    header = cached.read_bytes()[:8]
    flags = int.from_bytes(header[4:8], "little")
    return header[:4] == importlib.util.MAGIC_NUMBER and flags == 0b01  # hash-based, unchecked


def test_sam_build_succeeds(repo: Path, tmp_path: Path) -> None:
    build_dir = tmp_path / "build"
    env = {
        "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SAM_CLI_TELEMETRY": "0",
    }
    result = subprocess.run(
        [
            str(BIN / "sam"),
            "build",
            "--build-dir",
            str(build_dir),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--region",
            "eu-central-1",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    shared = build_dir / "SharedLayer" / "python"
    assert (shared / "etikett" / "api" / "app.py").is_file()
    assert not (shared / "etikett" / "local").exists()  # local mode is not for Lambda
    assert (shared / "etikett" / "api" / "openapi.built.json").is_file()  # read at cold start
    # The engine as its wheel installs it, the same package the Runner's installer ships
    assert (shared / "etikett_engine" / "flows" / "engine.py").is_file()
    assert list(shared.glob("etikett_engine-*.dist-info"))
    assert (build_dir / "DepsLayer" / "python" / "fastapi").is_dir()
    render = build_dir / "RenderLayer" / "python"
    # /opt is read-only on Lambda: every module comes with bytecode that needs no source check.
    for layer in ("SharedLayer", "DepsLayer", "RenderLayer"):
        sources = list((build_dir / layer / "python").rglob("*.py"))
        assert sources, layer
        missing = [s for s in sources if not unchecked_bytecode(s)]
        assert not missing, f"{layer}: {len(missing)} of {len(sources)}, e.g. {missing[:3]}"
    for module in (
        "celpy",
        "PIL",
        "zint.cpython-311-x86_64-linux-gnu.so",
        "lark",
        "fontpkg_roboto",
        "numpy",
    ):
        assert (render / module).exists(), module
    # celpy's parser tables, made for the celpy and lark of the layer (a cold start cannot write)
    assert (render / "celpy" / "etikett-parser.lark-cache").stat().st_size > 10_000
    assert list(render.glob("google_re2-1.1*.dist-info")), "google-re2 1.1 for glibc 2.26"
    package = build_dir / "RunnerPackageLayer" / "runner-package"
    assert (package / "pyproject.toml").is_file() and (package / "etikett_runner").is_dir()
    wheels = list((package / "packages").glob("etikett_engine-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    assert "etikett_engine/flows/engine.py" in zipfile.ZipFile(wheels[0]).namelist()
    for group in GROUPS:
        folder = f"{group.replace('_', '')}function"
        function = next(p for p in build_dir.iterdir() if p.name.lower() == folder)
        assert (function / "app.py").is_file()
    shutil.rmtree(build_dir, ignore_errors=True)
