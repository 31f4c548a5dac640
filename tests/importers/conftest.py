"""Where the importer fixtures are: `../shared/fixtures/importers` beside the repository (as in CI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "importers"


def expected() -> dict[str, dict]:
    """EXPECTED.dev.json: the facts counted from each raw fixture file ({} when the folder is absent)."""
    path = FIXTURES / "EXPECTED.dev.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def is_real(name: str) -> bool:
    """A copied (or derived) session file, not one of the hand-written NOT-REAL folders."""
    return "NOT-REAL" not in name


@pytest.fixture
def fixtures() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(
            f"the importer fixtures are not at {FIXTURES} (../shared/fixtures/importers of the repo root)"
        )
    return FIXTURES


def harnez_in(folder: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`harnez ARGS…` as a process run in `folder`, with its database in `folder/db`."""
    env = {**os.environ, "HARNEZ_DATABASE_PATH": str(folder / "db" / "harnez.sqlite")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "harnez", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=folder,
        )

    return run
