"""The renderer's libraries and fonts are pinned alike wherever labels render: the engine's
`render` extra (the service's environment and every Runner) and the Lambda render layer. A
version that differs in one place would move dots between a preview and a site's print."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).parents[3]
NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")


def _pins(lines: list[str]) -> dict[str, str]:
    pins = {}
    for line in lines:
        requirement = line.split("#")[0].strip()
        if requirement and (name := NAME.match(requirement)):
            pins[name[1].lower()] = requirement[len(name[1]) :].strip()
    return pins


def test_the_render_extra_pins_what_the_render_layer_pins() -> None:
    engine = tomllib.loads((REPO / "engine" / "pyproject.toml").read_text())
    extra = _pins(engine["project"]["optional-dependencies"]["render"])
    layer = _pins((REPO / "layers" / "render" / "requirements.txt").read_text().splitlines())
    assert extra and {name: layer.get(name) for name in extra} == extra
    exact = {name for name, spec in extra.items() if spec.startswith("==")}
    assert {"pillow", "zint-bindings", "fontpkg-roboto", "fontpkg-noto-sans"} <= exact


def test_the_service_and_the_runner_install_the_engine_with_its_renderer() -> None:
    for project in (REPO / "pyproject.toml", REPO / "runner" / "pyproject.toml"):
        dependencies = tomllib.loads(project.read_text())["project"]["dependencies"]
        assert "etikett-engine[render]" in dependencies, project
