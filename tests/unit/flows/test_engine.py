"""The flow engine: every node type on records, side effects through `Effects`, and records that
fail alone."""

from __future__ import annotations

from typing import Any

import pytest

from etikett_engine.flows.effects import (
    DryRun,
    EffectFailed,
    FileIntent,
    HttpIntent,
    LogIntent,
    Outcome,
    PrintIntent,
)
from etikett_engine.flows.engine import MAX_FAN_OUT, MAX_NODE_EXECUTIONS, FlowProgram, RunEnv


class Recorder:
    """Effects that perform "for real" into lists, the way a Runner's would."""

    def __init__(self, fail_print_for: str | None = None) -> None:
        self.prints: list[PrintIntent] = []
        self.requests: list[HttpIntent] = []
        self.files: list[FileIntent] = []
        self.logs: list[LogIntent] = []
        self.fail_print_for = fail_print_for

    def print(self, intent: PrintIntent) -> Outcome:
        if intent.variables.get("name") == self.fail_print_for:
            raise EffectFailed("the printer is out of paper")
        self.prints.append(intent)
        job = f"job_{len(self.prints)}"
        return Outcome(True, {"job_id": job}, {"job_id": job})

    def http(self, intent: HttpIntent) -> Outcome:
        self.requests.append(intent)
        return Outcome(True, {"status": 201}, {"status": 201, "body": {"ok": True}})

    def file(self, intent: FileIntent) -> Outcome:
        self.files.append(intent)
        return Outcome(True, {"path": intent.path})

    def log(self, intent: LogIntent) -> Outcome:
        self.logs.append(intent)
        return Outcome(True, {"message": intent.message})


def _flow(*nodes: dict[str, Any]) -> FlowProgram:
    return FlowProgram.compile({"nodes": list(nodes)})


def _trigger(wires: list[str], kind: str = "trigger.http") -> dict[str, Any]:
    fields = {
        "trigger.http": {"path": "orders"},
        "trigger.folder": {"path": "/in", "format": "csv"},
        "trigger.schedule": {"every_s": 60},
    }[kind]
    return {"id": "in", "type": kind, "wires": wires, **fields}


@pytest.mark.parametrize("kind", ["trigger.http", "trigger.folder", "trigger.schedule"])
def test_triggers_pass_the_record_on(kind: str) -> None:
    program = _flow(_trigger(["log"], kind), {"id": "log", "type": "action.log", "message": "'x'"})
    effects = Recorder()
    result = program.run_record({"a": 1}, "in", effects)
    assert result.trace[0] == {
        "node_id": "in",
        "type": kind,
        "input": {"a": 1},
        "status": "executed",
        "output": {"a": 1},
    }
    assert [log.message for log in effects.logs] == ["x"]


def test_set_sees_record_context_and_runner() -> None:
    program = _flow(
        _trigger(["set"]),
        {
            "id": "set",
            "type": "logic.set",
            "values": {
                "total": "int(record.qty) * 2",
                "site": "context.site",
                "by": "runner.name",
                "qty": "'replaced'",
            },
        },
    )
    env = RunEnv(context={"site": "Hall 3"}, runner={"id": "run_1", "name": "dock-1"})
    result = program.run_record({"qty": "4"}, "in", Recorder(), env=env)
    assert result.trace[1]["output"] == {
        "qty": "replaced",
        "total": 8,
        "site": "Hall 3",
        "by": "dock-1",
    }
    assert result.trace[1]["input"] == {"qty": "4"}  # the record that came in is not changed


def test_filter_passes_only_true_and_refuses_non_bool() -> None:
    program = _flow(
        _trigger(["f"]),
        {"id": "f", "type": "logic.filter", "condition": "record.n > 1", "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": "string(record.n)"},
    )
    effects = Recorder()
    for n in (1, 2, 3):
        program.run_record({"n": n}, "in", effects)
    assert [log.message for log in effects.logs] == ["2", "3"]
    stopped = program.run_record({"n": 0}, "in", effects)
    assert [step["status"] for step in stopped.trace] == ["executed", "executed", "skipped"]
    odd = _flow(
        _trigger(["f"]), {"id": "f", "type": "logic.filter", "condition": "record.n", "wires": []}
    )
    failed = odd.run_record({"n": 5}, "in", effects)
    assert failed.errors == [{"node_id": "f", "message": "the condition gave int, not a bool"}]


def test_switch_takes_the_first_matching_case_else_otherwise() -> None:
    program = _flow(
        _trigger(["sw"]),
        {
            "id": "sw",
            "type": "logic.switch",
            "cases": [
                {"when": "record.kg > 30.0", "wires": ["heavy"]},
                {"when": "record.kg > 10.0", "wires": ["medium", "audit"]},
            ],
            "otherwise": ["light"],
        },
        {"id": "heavy", "type": "action.log", "message": "'heavy'"},
        {"id": "medium", "type": "action.log", "message": "'medium'"},
        {"id": "audit", "type": "action.log", "message": "'audit'"},
        {"id": "light", "type": "action.log", "message": "'light'"},
    )
    seen = []
    for kg in (50.0, 20.0, 1.0):
        effects = Recorder()
        program.run_record({"kg": kg}, "in", effects)
        seen.append([log.message for log in effects.logs])
    assert seen == [["heavy"], ["medium", "audit"], ["light"]]


def test_print_resolves_variables_and_copies_with_an_idempotency_key() -> None:
    program = _flow(
        _trigger(["p"]),
        {
            "id": "p",
            "type": "action.print",
            "label": "lbl_01ABC@3",
            "printer": "dock",
            "copies": "int(record.qty)",
            "variables": {"name": "record.name", "weight": "double(record.kg)"},
            "wires": ["log"],
        },
        {"id": "log", "type": "action.log", "message": "record.print.job_id"},
    )
    effects = Recorder()
    result = program.run(
        [{"name": "A", "qty": "2", "kg": "1.5"}, {"name": "B", "qty": "1", "kg": "2"}],
        "in",
        effects,
        env=RunEnv(run_id="run_7"),
    )
    assert result.outcome == "succeeded" and result.records == 2
    assert [(p.label, p.printer, p.copies, p.variables) for p in effects.prints] == [
        ("lbl_01ABC@3", "dock", 2, {"name": "A", "weight": 1.5}),
        ("lbl_01ABC@3", "dock", 1, {"name": "B", "weight": 2.0}),
    ]
    assert [p.idempotency_key for p in effects.prints] == ["run_7:p:0", "run_7:p:1"]
    assert [log.message for log in effects.logs] == ["job_1", "job_2"]


@pytest.mark.parametrize("copies", ["0", "1001", "'two'"])
def test_print_copies_out_of_range_fail_the_record(copies: str) -> None:
    program = _flow(
        _trigger(["p"]),
        {"id": "p", "type": "action.print", "label": "lbl_01A", "printer": "x", "copies": copies},
    )
    effects = Recorder()
    result = program.run_record({}, "in", effects)
    assert result.failed and "copies" in result.errors[0]["message"]
    assert effects.prints == []


def test_http_adds_status_and_answer_to_the_record() -> None:
    program = _flow(
        _trigger(["h"]),
        {
            "id": "h",
            "type": "action.http",
            "url": "https://erp.example.com/done",
            "body": '{"order": record.id}',
            "credential": "erp",
            "wires": ["log"],
        },
        {"id": "log", "type": "action.log", "message": "string(record.http.status)"},
    )
    effects = Recorder()
    program.run_record({"id": "o-1"}, "in", effects)
    (request,) = effects.requests
    assert (request.method, request.body, request.credential) == ("POST", {"order": "o-1"}, "erp")
    assert [log.message for log in effects.logs] == ["201"]


def test_file_writes_text_and_json() -> None:
    program = _flow(
        _trigger(["f"]),
        {
            "id": "f",
            "type": "action.file",
            "path": '"out/" + record.id + ".json"',
            "content": "record",
        },
    )
    effects = Recorder()
    program.run_record({"id": "a1"}, "in", effects)
    assert effects.files == [FileIntent("f", "out/a1.json", '{"id": "a1"}')]


def test_log_level_and_message() -> None:
    program = _flow(
        _trigger(["l"]),
        {"id": "l", "type": "action.log", "message": "record.n * 2", "level": "warning"},
    )
    effects = Recorder()
    program.run_record({"n": 21}, "in", effects)
    assert effects.logs == [LogIntent("l", "warning", "42")]


def test_a_failing_record_fails_alone_and_the_run_is_partial() -> None:
    program = _flow(
        _trigger(["p"]),
        {
            "id": "p",
            "type": "action.print",
            "label": "lbl_01A",
            "printer": "x",
            "variables": {"name": "record.name"},
        },
    )
    effects = Recorder(fail_print_for="B")
    result = program.run([{"name": "A"}, {"name": "B"}, {}, {"name": "C"}], "in", effects)
    assert result.outcome == "partial" and result.failed_records == 2
    assert [p.variables["name"] for p in effects.prints] == ["A", "C"]
    assert [(e["record"], e["node_id"]) for e in result.errors] == [(1, "p"), (2, "p")]
    assert "out of paper" in result.errors[0]["message"]
    assert "no such key" in result.errors[1]["message"] or "name" in result.errors[1]["message"]
    all_failed = program.run([{}], "in", Recorder())
    assert all_failed.outcome == "failed"


def test_dry_run_effects_perform_nothing_and_say_what_they_would_do() -> None:
    program = _flow(
        _trigger(["p"]),
        {
            "id": "p",
            "type": "action.print",
            "label": "lbl_01A",
            "printer": "dock",
            "variables": {"n": "record.n"},
            "wires": ["h"],
        },
        {"id": "h", "type": "action.http", "url": "https://x.example/y", "wires": ["f"]},
        {"id": "f", "type": "action.file", "path": "'a.txt'", "content": "'hello'", "wires": []},
    )
    result = program.run_record({"n": 1}, "in", DryRun())
    assert [(e["kind"], e["performed"]) for e in result.side_effects] == [
        ("print", False),
        ("http", False),
        ("file", False),
    ]
    assert result.side_effects[0]["detail"]["variables"] == {"n": 1}
    assert result.side_effects[2]["detail"] == {"path": "a.txt", "bytes": 5}


def test_invalid_nodes_fail_the_records_that_reach_them() -> None:
    program = _flow(
        _trigger(["bad", "typo"]),
        {"id": "bad", "type": "logic.filter", "condition": "record.n >"},
        {"id": "typo", "type": "logic.nothing"},
    )
    result = program.run_record({"n": 1}, "in", Recorder())
    assert {e["node_id"] for e in result.errors} == {"bad", "typo"}
    assert "not a node type" in {e["node_id"]: e["message"] for e in result.errors}["typo"]


def test_oversized_values_fail_the_record() -> None:
    program = _flow(
        _trigger(["s"]),
        {"id": "s", "type": "logic.set", "values": {"big": "record.text + record.text"}},
    )
    result = program.run_record({"text": "x" * 40_000}, "in", Recorder())
    assert result.failed and "at most" in result.errors[0]["message"]
    assert program.run_record({"text": "x" * 70_000}, "in", Recorder()).failed


def test_malformed_documents_do_not_compile() -> None:
    with pytest.raises(ValueError, match="names no node"):
        _flow(_trigger(["ghost"]))


class Fused(Recorder):
    """A Recorder that stops the test (not the engine) when a record has run away: without a
    budget the engine would log forever."""

    FUSE = 20_000

    def log(self, intent: LogIntent) -> Outcome:
        if len(self.logs) >= self.FUSE:
            raise AssertionError("the engine ran away: no budget stopped the record")
        return super().log(intent)


def test_a_cycle_fails_its_record_within_the_budget_and_the_others_go_on() -> None:
    program = _flow(
        _trigger(["gate"]),
        {"id": "gate", "type": "logic.filter", "condition": "record.loop", "wires": ["a"]},
        {"id": "a", "type": "action.log", "message": "'a'", "wires": ["b"]},
        {"id": "b", "type": "logic.set", "values": {"seen": "true"}, "wires": ["a"]},
    )
    effects = Fused()
    result = program.run([{"loop": False}, {"loop": True}, {"loop": False}], "in", effects)
    assert result.outcome == "partial" and result.failed_records == 1
    (error,) = result.errors
    assert error["record"] == 1
    assert f"{MAX_NODE_EXECUTIONS} node executions" in error["message"]
    assert "flow.cycle" in error["message"]
    assert len(effects.logs) <= MAX_NODE_EXECUTIONS


def test_exponential_fan_out_fails_its_record_promptly() -> None:
    """30 levels of two nodes, each wired to both of the next level: 2**31 paths."""
    nodes: list[dict[str, Any]] = [_trigger(["l0a", "l0b"])]
    for level in range(30):
        following = [f"l{level + 1}a", f"l{level + 1}b"] if level < 29 else []
        for side in "ab":
            nodes.append(
                {
                    "id": f"l{level}{side}",
                    "type": "action.log",
                    "message": "'x'",
                    "wires": following,
                }
            )
    program = _flow(*nodes)
    effects = Fused()
    result = program.run_record({}, "in", effects)
    assert result.failed
    (error,) = result.errors
    assert "budget" in error["message"]
    assert len(effects.logs) <= MAX_NODE_EXECUTIONS


def test_fan_out_copies_are_bounded_per_record() -> None:
    """Records copied to more branches than one record may have fail before the copies run."""

    def spread(second: int) -> tuple[FlowProgram, int]:
        first = [f"a{i}" for i in range(60)]
        more = [f"b{i}" for i in range(second)]
        program = _flow(
            _trigger(["sa", "sb"]),
            {"id": "sa", "type": "logic.set", "values": {"x": "1"}, "wires": first},
            {"id": "sb", "type": "logic.set", "values": {"x": "2"}, "wires": more},
            *({"id": t, "type": "action.log", "message": "'x'"} for t in first + more),
        )
        return program, len(first) + len(more)

    # 2 branches from the trigger, then 60 and 40: exactly MAX_FAN_OUT copies of the record.
    fine, logs = spread(MAX_FAN_OUT - 60)
    effects = Recorder()
    assert not fine.run_record({}, "in", effects).failed
    assert len(effects.logs) == logs == MAX_FAN_OUT
    # One more, and the node that would make it fails the record before any copy runs.
    over, _ = spread(MAX_FAN_OUT - 60 + 1)
    effects = Recorder()
    result = over.run_record({}, "in", effects)
    assert result.failed and "copies" in result.errors[0]["message"]
    assert result.errors[0]["node_id"] == "sb"
    assert effects.logs == []


def test_a_record_that_exhausts_the_budget_is_marked_so() -> None:
    program = _flow(
        _trigger(["a"]),
        {"id": "a", "type": "action.log", "message": "'a'", "wires": ["b"]},
        {"id": "b", "type": "action.log", "message": "'b'", "wires": ["a"]},
    )
    result = program.run_record({}, "in", Fused())
    assert result.exhausted and result.failed
    fine = _flow(_trigger(["a"]), {"id": "a", "type": "action.log", "message": "'a'"})
    assert not fine.run_record({}, "in", Recorder()).exhausted
