"""docs/architecture.md's layer diagram is the import-linter layers contract of pyproject.toml, layer by
layer: a module added to a layer (pricing and records were) shows in the picture a reader trusts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _contract_layers() -> list[str]:
    """The layers contract's layers, top first, each as the diagram writes it ('agent | titles')."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [re.sub(r"\bharnez\.", "", layer) for layer in contract["layers"]]


def _diagram_layers() -> list[str]:
    """The diagram's layers, top first: each line's modules without the words after them."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    found = re.search(r"## Layers\n.*?```\n(.*?)```", text, re.S)
    assert found, "docs/architecture.md lost its layer diagram"
    lines = [line.strip() for line in found.group(1).splitlines() if line.strip() not in ("", "|")]
    return [re.split(r"\s{3,}", line)[0] for line in lines]


def test_the_diagram_shows_every_layer_and_module_of_the_contract() -> None:
    assert _diagram_layers() == _contract_layers()
