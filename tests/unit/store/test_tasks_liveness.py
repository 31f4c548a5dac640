"""Whether the process that ran a task is still alive: gone, running, or ended but not yet collected."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.store.tasks import pid_alive, process_start


def test_a_running_process_is_alive_and_a_collected_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not pid_alive(child.pid)
    assert pid_alive(os.getpid()) and not pid_alive(None) and not pid_alive(0)


def test_a_killed_process_its_parent_has_not_collected_counts_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        stat = Path(f"/proc/{child.pid}/stat")
        while time.monotonic() < deadline and "Z" not in stat.read_text().rpartition(")")[2][:3]:
            time.sleep(0.01)
        # The child is a zombie now (this process has not waited for it): its pid still exists.
        os.kill(child.pid, 0)
        assert not pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()


def test_a_recycled_pid_is_not_taken_for_the_runner() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = process_start(child.pid)
        assert started is not None
        assert pid_alive(child.pid, started)
        # The same pid with another start time: the runner died and an unrelated process got its pid.
        assert not pid_alive(child.pid, started - 1)
    finally:
        child.kill()
        child.wait()


async def test_recovery_closes_a_task_whose_pid_now_belongs_to_another_process(db_path, workspace) -> None:
    from harnez.events import Event
    from harnez.server import Server

    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        server = await Server.open(db_path)
        draft = server.create_session(workspace)
        await server.append(draft.id, Event(ev.UserMessage(text="hi", mode="prompt")))
        record = await server.get_session(draft.id)
        task = await server.store.tasks.create(record.num, "hi", None, state="running")
        await server.close()
        with sqlite3.connect(db_path) as db:  # as if a dead runner's pid had been reused by `stranger`
            db.execute(
                "UPDATE tasks SET runner_pid = ?, runner_start = ? WHERE id = ?",
                (stranger.pid, process_start(stranger.pid) - 1, task.id),
            )
        reopened = await Server.open(db_path)
        try:
            assert (await reopened.store.tasks.get(task.id)).state == "interrupted"
        finally:
            await reopened.close()
    finally:
        stranger.kill()
        stranger.wait()


async def test_beginning_a_task_marks_it_and_its_session_running_together(db_path: Path) -> None:
    from harnez.store import Store
    from harnez.store.tasks import InvalidTransition

    store = await Store.open(db_path)
    record = await store.sessions.insert("ef" * 16, "/w", None)
    first = await store.tasks.create(record.num, "first", None)
    await store.tasks.begin(first.id, record.num)
    started = await store.tasks.get(first.id)
    assert started is not None and started.state == "running" and started.started_at is not None
    assert (await store.sessions.get(record.id)).status == "running"

    await store.tasks.transition(first.id, "completed", stop_reason="completed")
    await store.sessions.set_fields(record.num, status="completed")
    cancelled = await store.tasks.create(record.num, "second", None)
    await store.tasks.transition(cancelled.id, "cancelled", stop_reason="cancelled")
    with pytest.raises(
        InvalidTransition, match=f"^Task {cancelled.id} is cancelled and cannot become running"
    ):
        await store.tasks.begin(cancelled.id, record.num)
    assert (await store.sessions.get(record.id)).status == "completed", "nothing of it was written"
    await store.close()


async def test_a_task_whose_runner_died_under_an_open_server_ends_once_before_the_next_prompt(
    db_path: Path, workspace: Path
) -> None:
    """A process killed mid-task after this one opened the database: its task was closed only at the
    next opening, so a prompt sent meanwhile ran first and the log said 'interrupted' after its answer;
    two processes noticing it at once would both have said so."""
    from harnez.events import Event
    from harnez.outcome import TaskOutcome
    from harnez.server import Server

    async def answer(run) -> TaskOutcome:
        return TaskOutcome("completed", 1)

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    server, other = await Server.open(db_path), await Server.open(db_path)
    try:
        server.set_work(answer)
        draft = server.create_session(workspace)
        await server.append(draft.id, Event(ev.UserMessage(text="hi", mode="prompt")))
        record = await server.get_session(draft.id)
        task = await server.store.tasks.create(record.num, "hi", None, state="running")
        with sqlite3.connect(db_path) as db:  # its runner is gone now
            db.execute("UPDATE tasks SET runner_pid = ? WHERE id = ?", (dead.pid, task.id))

        assert await other.close_abandoned(draft.id)
        assert not await server.close_abandoned(draft.id)  # closed already: said once
        assert (await server.store.tasks.get(task.id)).state == "interrupted"

        left = await server.store.tasks.create(record.num, "again", None, state="running")
        with sqlite3.connect(db_path) as db:  # another dead runner's task, and a prompt sent at once
            db.execute("UPDATE tasks SET runner_pid = ? WHERE id = ?", (dead.pid, left.id))
        next_task = await server.submit(draft.id, "next")
        await server.wait(draft.id)
        kinds = [(e.body.kind, e.task) for e in await server.events_after(draft.id)]
        assert [t for kind, t in kinds if kind == "finished"] == [task.id, left.id, next_task]
        assert kinds.index(("finished", left.id)) < kinds.index(("user-message", next_task))
    finally:
        await other.close()
        await server.close()
