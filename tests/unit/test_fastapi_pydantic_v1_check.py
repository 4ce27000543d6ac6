"""FastAPI's check for pydantic 1 models does not load `pydantic.v1` in a cold start, and still
recognises such models once `pydantic.v1` is loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_function_loads_without_pydantic_v1() -> None:
    entry = REPO / "functions" / "misc" / "app.py"
    script = "\n".join(
        [
            "import importlib.util, json, sys",
            f"spec = importlib.util.spec_from_file_location('entry', {str(entry)!r})",
            "module = importlib.util.module_from_spec(spec)",
            "spec.loader.exec_module(module)",
            "loaded = {'v1': 'pydantic.v1' in sys.modules, 'handler': callable(module.handler)}",
            "print(json.dumps(loaded))",
        ]
    )
    env = {
        "AWS_REGION": "eu-central-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"v1": False, "handler": True}


def test_pydantic_v1_models_are_still_recognised() -> None:
    from fastapi._compat import shared
    from pydantic import BaseModel, v1

    import etikett.api.routing  # noqa: F401  (installs the check)

    class Old(v1.BaseModel):
        name: str

    class New(BaseModel):
        name: str

    assert shared.is_pydantic_v1_model_class(Old)
    assert not shared.is_pydantic_v1_model_class(New)
    assert shared.annotation_is_pydantic_v1(list[Old])
