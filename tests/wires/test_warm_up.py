"""The wires' warm-up: what a process's first model request needs is imported before anyone waits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FIRST_REQUEST_MODULES = {"httpcore", "h11", "anyio._backends._asyncio", "certifi"}
"""What httpx imports only when a client is made and its first connection opens."""


def modules_imported_by(script: str) -> set[str]:
    """The modules `script` adds to a fresh interpreter that has imported harnez.wires.clients."""
    program = (
        "import json, sys\n"
        "import harnez.wires.clients\n"
        "before = set(sys.modules)\n"
        f"{script}\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_warming_up_imports_what_the_first_request_needs() -> None:
    assert modules_imported_by("harnez.wires.clients.warm_up()") >= FIRST_REQUEST_MODULES
