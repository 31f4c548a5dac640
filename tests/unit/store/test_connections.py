"""A database connection left open by mistake never keeps the process from exiting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LEAVES_IT_OPEN = """
import asyncio, sys
from pathlib import Path
from harnez.store.db import Database

LEFT_OPEN = asyncio.run(Database.open(Path(sys.argv[1])))  # never closed, still referenced at exit
print("opened", flush=True)
"""


def test_a_process_that_never_closes_its_database_still_exits(tmp_path: Path) -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", LEAVES_IT_OPEN, str(tmp_path / "h.sqlite")],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("the process hung at exit: a database worker thread is not a daemon") from exc
    assert done.returncode == 0 and "opened" in done.stdout, done.stderr
