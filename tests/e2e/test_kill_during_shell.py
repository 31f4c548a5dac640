"""kill -9 of Harnez during a shell tool call: the command dies with it, or at the latest at the next open."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import time
from pathlib import Path

from tests.agent.helpers import answer, process_alive, tool_call
from tests.e2e.helpers import HeadlessWorkspace

LOOP = (
    "echo $$ > bash.pid; (while true; do echo tick >> ticks.txt; sleep 0.05; done) & echo $! > loop.pid; wait"
)


def _wait_for(check, what: str, seconds: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"never happened: {what}")


def _recorded(database: Path) -> bool:
    with contextlib.closing(sqlite3.connect(database)) as conn:
        return conn.execute("SELECT COUNT(*) FROM running_commands").fetchone()[0] == 1


def _pid(path: Path) -> int | None:
    text = path.read_text().strip() if path.exists() else ""
    return int(text) if text else None


def test_a_command_does_not_outlive_a_killed_harnez(headless: HeadlessWorkspace) -> None:
    headless.model.add(tool_call("shell", "c1", command=LOOP), answer("done"))
    proc = headless.popen("run", "--approve", "allow", "--input", "start the loop")
    ws = headless.path
    _wait_for(lambda: _pid(ws / "loop.pid") and (ws / "ticks.txt").exists(), "the loop started")
    bash, loop = _pid(ws / "bash.pid"), _pid(ws / "loop.pid")
    assert bash and loop
    _wait_for(lambda: _recorded(headless.database), "the command's process group was recorded")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)

    _wait_for(lambda: not process_alive(bash), "bash died with Harnez (parent-death signal)", 5)
    opened = headless.harnez("sessions", "--json")  # the next open stops what is left of the group
    assert opened.returncode == 0, opened.stderr
    _wait_for(lambda: not process_alive(loop), "the background loop was stopped at the next open", 5)
    ticks = (ws / "ticks.txt").read_text()
    time.sleep(0.3)
    assert (ws / "ticks.txt").read_text() == ticks  # nothing changes the workspace any more
    assert json.loads(opened.stdout.splitlines()[0])["status"] == "interrupted"


def test_a_second_process_cannot_run_a_task_in_a_busy_session(headless: HeadlessWorkspace) -> None:
    headless.model.add(
        {"reply": [{"text": "thinking very slowly"}], "hold_after_chunks": 1, "hold": "gate"}, answer("later")
    )
    first = headless.popen("run", "--json", "--input", "a long task")
    assert first.stdout is not None
    session = json.loads(first.stdout.readline())["session"]
    _wait_for(lambda: len(headless.model.requests) == 1, "the first task reached the model")

    second = headless.harnez("run", "--resume", session, "--input", "me too")
    headless.model.release("gate")
    first.communicate(timeout=20)

    assert second.returncode == 2 and "Another Harnez process" in second.stderr
    assert len(headless.model.requests) == 1  # the refused prompt never reached the model
    stored = [
        json.loads(line)
        for line in headless.harnez("sessions", "show", session, "--json").stdout.splitlines()
    ]
    assert [e["text"] for e in stored if e["kind"] == "user-message"] == ["a long task"]
