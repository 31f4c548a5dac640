"""A process killed mid-delegation: both sessions are interrupted, the delegation's end is recorded,
and each session takes a new task."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from harnez.agent.context import INTERRUPTED
from harnez.server import Server
from harnez.server.delegations import INTERRUPTED as DELEGATION_INTERRUPTED
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.agents_support import delegate, only_child, reviewer
from tests.agent.helpers import answer, events, kill_quietly, make_settings, tool_call, tool_outputs

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "echo $$ > shell.pid; exec sleep 30"


def committed_usages(db_path: Path) -> int:
    """How many `usage` events the task's process has committed (the parent's call and its child's).

    The child's shell can start before the group commit that holds its call's `usage` lands; a kill in
    that window loses the usage, as a crash may lose one group, and the test would count no call.
    """
    with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as db:
        (count,) = db.execute("SELECT count(*) FROM events WHERE kind = 'usage'").fetchone()
    return int(count)


async def kill_mid_delegation(db_path: Path, workspace: Path, settings_json: str) -> str:
    """Run a task in a process of its own, kill -9 it while its child's shell call runs; the parent's id."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "tests.agent.task_process",
        str(db_path),
        str(workspace),
        settings_json,
        "go",
    ]
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    pid_file = workspace / "shell.pid"
    try:
        parent = (await asyncio.to_thread(process.stdout.readline)).strip()  # type: ignore[union-attr]
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text().strip() or committed_usages(db_path) < 2:
            assert time.monotonic() < deadline, "the child's shell call never ran with both calls committed"
            await asyncio.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        process.kill()
        process.wait(10)
        if pid_file.exists() and pid_file.read_text().strip():
            kill_quietly(int(pid_file.read_text()))
    return parent


async def test_a_kill_mid_delegation_leaves_parent_and_child_interrupted_and_resumable(
    scripted_model: ScriptedModel, open_server, workspace: Path, db_path: Path
) -> None:
    reviewer(workspace, tools="shell")
    scripted_model.add(
        delegate("d1", "reviewer", "Wait for the build"),
        tool_call("shell", "s1", command=COMMAND),
        answer("The child carried on."),
        answer("The parent carried on."),
    )
    settings = make_settings(scripted_model, permissions={"tools": {"shell": "allow"}})
    parent = await kill_mid_delegation(db_path, workspace, settings.model_dump_json(exclude_defaults=True))

    server: Server = await open_server(settings)
    child = await only_child(server, parent)
    for session in (parent, child):
        (ended,) = await events(server, session, "finished")
        assert ended.body.stop == "interrupted"
        assert (await server.get_session(session)).status != "running"
    (finished,) = await events(server, parent, "delegate-finished")
    assert (finished.body.child, finished.body.stop, finished.body.error) == (
        child,
        "interrupted",
        DELEGATION_INTERRUPTED,
    )
    assert finished.body.calls == 1 and finished.body.input == 100
    assert (await server.delegation_of(child)).stop == "interrupted"  # type: ignore[union-attr]

    await server.submit(child, "carry on")
    await server.wait(child)
    assert tool_outputs(scripted_model.requests[-1].body)["s1"] == f"[error] {INTERRUPTED}"
    await server.submit(parent, "carry on")
    await server.wait(parent)
    assert tool_outputs(scripted_model.requests[-1].body)["d1"] == f"[error] {INTERRUPTED}"
    for session in (parent, child):
        assert [e.body.stop for e in await events(server, session, "finished")] == [
            "interrupted",
            "completed",
        ]
    # the parent's two calls and the one its child made for it (not the child's own later task)
    assert (await server.session_totals(parent)).calls == 3
