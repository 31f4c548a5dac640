"""Shell commands while they run, by process group: what the next open stops if Harnez was killed."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from harnez.redaction import redact
from harnez.store.db import Database, inserted_id
from harnez.store.tasks import OWN_START, pid_alive, process_start


def boot_id() -> str | None:
    """This boot's id (Linux): process start times only compare within one boot."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class RunningCommand:
    """A command's process group, as recorded when it started."""

    id: int
    pgid: int
    leader_start: int | None
    boot_id: str | None
    command: str


class RunningCommands:
    """The `running_commands` table: a row per command from its start to its end.

    Also the tools' ProcessWatch (harnez.tools.base): the shell tool reports each command it starts
    and ends here.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    async def started(self, pgid: int, command: str) -> int:
        """Record a command's process group (its leader is the group's first process)."""
        row = (pgid, process_start(pgid), boot_id(), os.getpid(), OWN_START, redact(command), time.time())
        return await self._db.write(
            lambda conn: inserted_id(
                conn.execute(
                    "INSERT INTO running_commands (pgid, leader_start, boot_id, runner_pid, runner_start, "
                    "command, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            )
        )

    async def ended(self, token: object) -> None:
        """The command and its group are gone (exited, or killed by us)."""
        await self._db.write(lambda conn: conn.execute("DELETE FROM running_commands WHERE id = ?", (token,)))

    async def orphans(self) -> list[RunningCommand]:
        """Commands whose Harnez process is gone: their groups may still be running."""
        rows = await self._db.fetchall(
            "SELECT id, pgid, leader_start, boot_id, runner_pid, runner_start, command FROM running_commands"
        )
        return [RunningCommand(r[0], r[1], r[2], r[3], r[6]) for r in rows if not pid_alive(r[4], r[5])]

    async def forget(self, ids: list[int]) -> None:
        """Drop rows whose groups were dealt with."""
        await self._db.write(
            lambda conn: conn.executemany("DELETE FROM running_commands WHERE id = ?", [(i,) for i in ids])
        )
