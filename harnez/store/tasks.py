"""Task rows and their state machine; recovery of tasks left running by a dead process."""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnez.errors import SessionBusyError
from harnez.redaction import redact
from harnez.store.db import Database, inserted_id
from harnez.store.payloads import loads

STATES = ("queued", "running", "completed", "failed", "cancelled", "interrupted", "incomplete")
FINAL = frozenset({"completed", "failed", "cancelled", "interrupted", "incomplete"})
TRANSITIONS: dict[str, frozenset[str]] = {
    "queued": frozenset({"running", "cancelled", "interrupted"}),
    "running": FINAL,
}


class InvalidTransition(ValueError):
    """A task cannot move from its state to the one asked."""


def _why_not_started(conn: sqlite3.Connection, task_id: int, session_num: int) -> str:
    """Why `TaskTable.begin` found no queued task to start."""
    row = conn.execute("SELECT state, session FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        return f"No task {task_id}."
    if row[1] != session_num:
        return f"Task {task_id} belongs to another session."
    return f"Task {task_id} is {row[0]} and cannot become running."


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A stored task."""

    id: int
    session_num: int
    state: str
    input: str
    model: str | None
    stop_reason: str | None
    error: str | None
    created_at: float
    started_at: float | None
    finished_at: float | None

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "id": self.id,
            "state": self.state,
            "input": self.input,
            "model": self.model,
            "stop_reason": self.stop_reason,
            "error": self.error,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


_COLUMNS = (
    "id, session, state, input, input_seq, model, stop_reason, error, created_at, started_at, finished_at"
)


def _task(row: sqlite3.Row, prompts: dict[tuple[int, int], str]) -> TaskRecord:
    """A task row (selected as `_COLUMNS`) read by column name; `prompts` by (session, seq)."""
    return TaskRecord(
        id=row["id"],
        session_num=row["session"],
        state=row["state"],
        input=prompts.get((row["session"], row["input_seq"]), row["input"]),
        model=row["model"],
        stop_reason=row["stop_reason"],
        error=row["error"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
    )


def pid_alive(pid: int | None, started: int | None = None) -> bool:
    """Whether the process with this pid (that started at `started`, when known) still runs here.

    A zombie (ended, not yet collected by its parent) is not alive; a process with the same pid but
    another start time is a different process that reused the pid (Linux /proc only).
    """
    if not pid:
        return False
    if pid == os.getpid():
        return started is None or started == OWN_START
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat_fields(pid)
    if fields is None:
        return True
    if fields[0] in ("Z", "X"):
        return False
    return started is None or int(fields[19]) == started


def process_start(pid: int) -> int | None:
    """When a process started, in clock ticks since boot (None where /proc is not available)."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None else None


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat from the state on (field 3 of proc(5) is index 0)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name before them is in parentheses and may itself hold spaces or parentheses.
    fields = stat.rpartition(")")[2].split()
    return fields if len(fields) > 19 else None


OWN_START = process_start(os.getpid())
"""This process's start time, recorded with the tasks it runs."""


_RUNNERS_ELSEWHERE = (
    "SELECT runner_pid, runner_start FROM tasks WHERE session = ? AND state IN ('queued', 'running') "
    "AND runner_pid != ?"
)
"""The runners of a session's unfinished tasks other than this process (alive or not: `_live_pid`)."""


def _live_pid(rows: list[sqlite3.Row] | list[tuple]) -> int | None:
    """The first pid of (runner_pid, runner_start) rows whose process still runs."""
    return next((pid for pid, started in rows if pid_alive(pid, started)), None)


def _refuse_if_busy_elsewhere(conn: sqlite3.Connection, session_num: int) -> None:
    pid = _live_pid(conn.execute(_RUNNERS_ELSEWHERE, (session_num, os.getpid())).fetchall())
    if pid is not None:
        raise SessionBusyError(
            f"Another Harnez process (pid {pid}) is running a task in this session; its turns and "
            "yours would mix. Wait for it to finish (or stop it there), then send the prompt again.",
            pid=pid,
        )


def _transition(conn: sqlite3.Connection, task_id: int, state: str, values: tuple) -> None:
    """`TaskTable.transition`'s check and update (in the write thread); `values` are the UPDATE's."""
    row = conn.execute("SELECT state FROM tasks WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        raise InvalidTransition(f"No task {task_id}.")
    if state not in TRANSITIONS.get(row[0], frozenset()):
        raise InvalidTransition(f"Task {task_id} is {row[0]} and cannot become {state}.")
    conn.execute(
        "UPDATE tasks SET state = ?, stop_reason = COALESCE(?, stop_reason), error = COALESCE(?, error), "
        "started_at = COALESCE(started_at, ?), finished_at = COALESCE(?, finished_at), runner_pid = ?, "
        "runner_start = ?, turns = COALESCE(?, turns) WHERE id = ?",
        values,
    )


def keep_prompts_in_events(conn: sqlite3.Connection, prompts: list[tuple[int, int, str]]) -> None:
    """Keep each task's prompt in its user-message event only: (seq, task, text) of each such event.

    A task's row holds its prompt until that event is stored (a queued prompt has no event yet),
    then points at it (`input_seq`); a row whose input differs from the event keeps it.
    """
    if prompts:
        conn.executemany("UPDATE tasks SET input = '', input_seq = ? WHERE id = ? AND input = ?", prompts)


class TaskTable:
    """Reads and writes of the tasks table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(
        self, session_num: int, text: str, model: str | None, state: str = "queued"
    ) -> TaskRecord:
        """A new task for a session; refused while another live process runs one in the same session.

        The check and the insert share one write transaction, so two processes can never both start
        a task in a session (their turns would interleave in its conversation).
        """
        now = time.time()
        text = redact(text)

        def insert(conn: sqlite3.Connection) -> int:
            _refuse_if_busy_elsewhere(conn, session_num)
            return inserted_id(
                conn.execute(
                    "INSERT INTO tasks (session, state, input, model, runner_pid, runner_start, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (session_num, state, text, model, os.getpid(), OWN_START, now),
                )
            )

        task_id = await self._db.write(insert)
        return TaskRecord(
            id=task_id,
            session_num=session_num,
            state=state,
            input=text,
            model=model,
            stop_reason=None,
            error=None,
            created_at=now,
            started_at=None,
            finished_at=None,
        )

    async def get(self, task_id: int) -> TaskRecord | None:
        """A task by id."""
        row = await self._db.fetchone(f"SELECT {_COLUMNS} FROM tasks WHERE id = ?", (task_id,))
        return _task(row, await self._prompts([row])) if row else None

    async def of_session(self, session_num: int) -> list[TaskRecord]:
        """Every task of a session, oldest first."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM tasks WHERE session = ? ORDER BY id", (session_num,)
        )
        prompts = await self._prompts(rows)
        return [_task(row, prompts) for row in rows]

    async def _prompts(self, rows: list[sqlite3.Row]) -> dict[tuple[int, int], str]:
        """The prompts of tasks whose input is kept in their user-message event, by (session, seq)."""
        found: dict[tuple[int, int], str] = {}
        for row in rows:
            if row["input"] == "" and row["input_seq"] is not None:
                event = await self._db.fetchone(
                    "SELECT payload FROM events WHERE session = ? AND seq = ?",
                    (row["session"], row["input_seq"]),
                )
                if event is not None:
                    found[(row["session"], row["input_seq"])] = str(loads(event[0]).get("text", ""))
        return found

    async def transition(
        self,
        task_id: int,
        state: str,
        *,
        stop_reason: str | None = None,
        error: str | None = None,
        turns: int | None = None,
    ) -> TaskRecord:
        """Move a task to `state`, checking the state machine."""
        if state not in STATES:
            raise InvalidTransition(f"Unknown task state {state!r}.")
        now = time.time()
        error = redact(error) if error else error
        started = now if state == "running" else None
        finished = now if state in FINAL else None
        values = (state, stop_reason, error, started, finished, os.getpid(), OWN_START, turns, task_id)
        await self._db.write(lambda conn: _transition(conn, task_id, state, values))
        task = await self.get(task_id)
        assert task is not None
        return task

    async def begin(self, task_id: int, session_num: int) -> None:
        """A queued task starts running and its session shows `running`: one write transaction, so a
        crash leaves both or neither (`transition` and a status update were two, and a re-read)."""
        now = time.time()

        def start(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                "UPDATE tasks SET state = 'running', started_at = COALESCE(started_at, ?), runner_pid = ?, "
                "runner_start = ? WHERE id = ? AND session = ? AND state = 'queued'",
                (now, os.getpid(), OWN_START, task_id, session_num),
            )
            if cur.rowcount != 1:
                raise InvalidTransition(_why_not_started(conn, task_id, session_num))
            conn.execute("UPDATE sessions SET status = 'running' WHERE num = ?", (session_num,))

        await self._db.write(start)

    async def runner_elsewhere(self, session_num: int) -> int | None:
        """The pid of another live process with a queued or running task in the session, if any: a
        front end showing the session says it runs elsewhere (and that it cannot stop it)."""
        rows = await self._db.fetchall(_RUNNERS_ELSEWHERE, (session_num, os.getpid()))
        return _live_pid([(row[0], row[1]) for row in rows])

    async def abandoned(self, session_num: int | None = None) -> list[tuple[int, int]]:
        """(task id, session num) of tasks left queued or running by a process that is gone (in one
        session when `session_num` is given)."""
        sql = "SELECT id, session, runner_pid, runner_start FROM tasks WHERE state IN ('queued', 'running')"
        if session_num is None:
            rows = await self._db.fetchall(sql)
        else:
            rows = await self._db.fetchall(sql + " AND session = ?", (session_num,))
        return [(r[0], r[1]) for r in rows if not pid_alive(r[2], r[3])]

    async def mark_interrupted(self, task_id: int) -> bool:
        """Close a dangling task as interrupted. False when it was closed already: two processes
        noticing the same dead runner at once (one opening, one watching the session) must not both
        say so in its log."""
        now = time.time()
        cursor = await self._db.write(
            lambda conn: conn.execute(
                "UPDATE tasks SET state = 'interrupted', stop_reason = 'interrupted', finished_at = ? "
                "WHERE id = ? AND state IN ('queued', 'running')",
                (now, task_id),
            )
        )
        return cursor.rowcount == 1
