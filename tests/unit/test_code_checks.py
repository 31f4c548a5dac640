"""The code passes its checkers: ruff (lint and format, line length 110) and mypy on harnez/.

They run inside the suite, so the README's test command (and CI, which runs it) checks them too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = ["harnez", "tests", "benchmarks", "scripts"]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    tool = Path(sys.executable).with_name(command[0])
    return subprocess.run([str(tool), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing_to_fix() -> None:
    lint = _run("ruff", "check", "--no-cache", *TREES)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_the_code_is_formatted() -> None:
    formatted = _run("ruff", "format", "--check", "--no-cache", *TREES)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


def test_mypy_finds_no_error() -> None:
    typed = _run("mypy", "--no-incremental")  # files and options: [tool.mypy] in pyproject.toml
    assert typed.returncode == 0, typed.stdout + typed.stderr
