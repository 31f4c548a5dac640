"""Child sessions of delegations: the link to the session, task and call that delegated, and their totals."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from harnez.store.db import Database
from harnez.store.sessions import SessionRecord, insert_session

_COLUMNS = (
    "d.child, c.id AS child_id, d.parent, p.id AS parent_id, d.task, d.call_id, d.agent, d.tools, "
    "d.created_at, d.stop, c.status AS child_status, c.title AS child_title"
)
_JOINED = "delegations d JOIN sessions c ON c.num = d.child LEFT JOIN sessions p ON p.num = d.parent"


@dataclass(frozen=True, slots=True)
class DelegationLink:
    """A child session and where it came from: the parent session, its task and the delegate call."""

    child_num: int
    child: str
    parent_num: int
    parent: str | None
    task: int
    call_id: str
    agent: str
    tools: tuple[str, ...]
    """The tools the child may use (its agent's, within what the parent offered)."""
    created_at: float
    stop: str | None
    """How the delegation ended; None while it runs (or when the process running it died)."""
    child_status: str = "idle"
    child_title: str | None = None


@dataclass(frozen=True, slots=True)
class ChildUsage:
    """Tokens and cost of a child session's model calls, as rolled up into its parent's totals."""

    input: int = 0
    output: int = 0
    usd: float | None = None
    calls: int = 0
    reported: int = 0
    unpriced: bool = False


def _link(row: sqlite3.Row) -> DelegationLink:
    return DelegationLink(
        child_num=row["child"],
        child=row["child_id"],
        parent_num=row["parent"],
        parent=row["parent_id"],
        task=row["task"],
        call_id=row["call_id"],
        agent=row["agent"],
        tools=tuple(json.loads(row["tools"])),
        created_at=row["created_at"],
        stop=row["stop"],
        child_status=row["child_status"],
        child_title=row["child_title"],
    )


class DelegationTable:
    """Reads and writes of the delegations table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def open_child(
        self,
        parent: SessionRecord,
        task: int,
        call_id: str,
        agent: str,
        tools: list[str],
        *,
        child_id: str,
        model: str | None,
        title: str,
    ) -> SessionRecord:
        """A child session of `parent`, linked in the same transaction (so no listing ever shows it
        unlinked), with its naming used up (its title says which agent does what)."""

        def link(conn: sqlite3.Connection) -> SessionRecord:
            child = insert_session(conn, child_id, parent.workspace, model, title, "agent")
            conn.execute("UPDATE sessions SET naming_used = 1 WHERE num = ?", (child.num,))
            conn.execute(
                "INSERT INTO delegations (child, parent, task, call_id, agent, tools, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (child.num, parent.num, task, call_id, agent, json.dumps(tools), time.time()),
            )
            return child

        return await self._db.write(link)

    async def of_child(self, child_num: int) -> DelegationLink | None:
        """The link of a child session; None for a session nobody delegated."""
        # Read before every task's request: one round trip to the reader's thread (fetchone takes three).
        rows = await self._db.fetchall(f"SELECT {_COLUMNS} FROM {_JOINED} WHERE d.child = ?", (child_num,))
        return _link(rows[0]) if rows else None

    async def children(self, parent_num: int) -> list[DelegationLink]:
        """The child sessions a session delegated to, oldest first."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM {_JOINED} WHERE d.parent = ? ORDER BY d.child", (parent_num,)
        )
        return [_link(row) for row in rows]

    async def unfinished(self, task: int) -> list[DelegationLink]:
        """The delegations of a parent task that never recorded their end (its process died)."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM {_JOINED} WHERE d.task = ? AND d.stop IS NULL ORDER BY d.child",
            (task,),
        )
        return [_link(row) for row in rows]

    async def finish(self, child_num: int, stop: str, seq: int, usage: ChildUsage) -> None:
        """Record how a delegation ended, the parent's `delegate-finished` event and the child's totals."""
        values = (
            stop,
            seq,
            usage.input,
            usage.output,
            usage.usd,
            usage.calls,
            usage.reported,
            int(usage.unpriced),
        )
        await self._db.write(
            lambda conn: conn.execute(
                "UPDATE delegations SET stop = ?, seq = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, "
                "calls = ?, reported = ?, unpriced = ? WHERE child = ?",
                (*values, child_num),
            )
        )

    async def rolled_up(self, parent_num: int, up_to: int | None = None) -> ChildUsage:
        """The totals of a session's finished delegations (those whose `delegate-finished` has seq ≤ up_to)."""
        bound, params = ("AND seq <= ?", (parent_num, up_to)) if up_to is not None else ("", (parent_num,))
        row = await self._db.fetchone(
            "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), SUM(cost_usd), "
            "COALESCE(SUM(calls), 0), COALESCE(SUM(reported), 0), COALESCE(MAX(unpriced), 0) "
            f"FROM delegations WHERE parent = ? AND seq IS NOT NULL {bound}",
            params,
        )
        assert row is not None  # an aggregate always gives one row
        return ChildUsage(int(row[0]), int(row[1]), row[2], int(row[3]), int(row[4]), bool(row[5]))
