"""The layer contracts of DESIGN.md hold: checked by import-linter, and only the TUI imports textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_linter_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), str(ROOT / "pyproject.toml"), "--no-cache"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout and "KEPT" in result.stdout


def test_starting_the_cli_imports_neither_textual_nor_yake_nor_httpx() -> None:
    probe = "import sys, harnez.cli; print(sorted(m for m in ('textual', 'yake', 'httpx') if m in sys.modules))"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "[]"
