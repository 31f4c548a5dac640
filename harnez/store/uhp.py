"""The tables of `harnez serve`: harnesses, skill files, HTTP sessions, responses, files, keys, shares.

Each object made over HTTP names its owner: the name of the principal (bearer token) that made it,
never the token (migration 0013). The server layer compares owners; these reads return them.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from harnez.redaction import redact_json
from harnez.store.db import Database
from harnez.store.sessions import SessionPage, SessionTable, decode_cursor, encode_cursor

IDEMPOTENCY_SECONDS = 24 * 3600
"""How long an idempotency key is remembered."""
ABANDONED_CLAIM_SECONDS = 60.0
"""A key claimed this long ago whose response row was never written belongs to a request that died
while starting (a start takes well under a second): the next request with the key may claim it."""
DEFAULT_OWNER = "default"
"""The principal of `--token-env` (and of a server without a token); rows older than owners are its."""


@dataclass(frozen=True, slots=True)
class HarnessRow:
    """A configured harness as stored: its configuration is a JSON object (skill files apart)."""

    id: str
    name: str
    base: str
    config: dict[str, Any]
    builtin: bool
    created_at: int
    owner: str = DEFAULT_OWNER
    """Whose it is; the built-in harness is everyone's, whatever this says."""


@dataclass(frozen=True, slots=True)
class SkillFileRow:
    """One file of a skill folder, with whether the client sent it as base64."""

    skill: str
    path: str
    content: bytes
    binary: bool


@dataclass(frozen=True, slots=True)
class ResponseRow:
    """A UHP response: one Harnez task, with what the request asked for."""

    id: str
    task: int | None
    session_num: int | None
    session_id: str
    harness: str
    previous: str | None
    model: str | None
    requested_model: str | None
    fallback_reason: str | None
    input: list[Any]
    options: dict[str, Any]
    metadata: dict[str, Any]
    stored: bool
    deleted: bool
    start_seq: int
    created_at: float
    owner: str = DEFAULT_OWNER


@dataclass(frozen=True, slots=True)
class UploadRow:
    """A file sent as task input (uploaded, or inline in a request)."""

    id: str
    filename: str
    media_type: str
    bytes: int
    created_at: float
    owner: str = DEFAULT_OWNER


_RESPONSE_COLUMNS = (
    "id, task, session, session_id, harness, previous, model, requested_model, fallback_reason, "
    "input, options, metadata, stored, deleted, start_seq, created_at, owner"
)


_HARNESS_COLUMNS = "id, name, base, config, builtin, created_at, owner"


def _response(row: sqlite3.Row) -> ResponseRow:
    """A response row (selected as `_RESPONSE_COLUMNS`) read by column name."""
    return ResponseRow(
        id=row["id"],
        task=row["task"],
        session_num=row["session"],
        session_id=row["session_id"],
        harness=row["harness"],
        previous=row["previous"],
        model=row["model"],
        requested_model=row["requested_model"],
        fallback_reason=row["fallback_reason"],
        input=json.loads(row["input"]),
        options=json.loads(row["options"]),
        metadata=json.loads(row["metadata"]),
        stored=bool(row["stored"]),
        deleted=bool(row["deleted"]),
        start_seq=row["start_seq"],
        created_at=row["created_at"],
        owner=row["owner"],
    )


def _harness(row: sqlite3.Row) -> HarnessRow:
    """A harness row read by column name."""
    return HarnessRow(
        id=row["id"],
        name=row["name"],
        base=row["base"],
        config=json.loads(row["config"]),
        builtin=bool(row["builtin"]),
        created_at=row["created_at"],
        owner=row["owner"],
    )


class UhpTables:
    """Reads and writes of the `uhp_*` tables (migrations 0006 and 0013)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # harnesses ---------------------------------------------------------------------------------

    async def harnesses(self, owner: str) -> list[HarnessRow]:
        """The harnesses `owner` may use (the built-in one and its own), oldest first."""
        rows = await self._db.fetchall(
            f"SELECT {_HARNESS_COLUMNS} FROM uhp_harnesses WHERE builtin = 1 OR owner = ? "
            "ORDER BY created_at, id",
            (owner,),
        )
        return [_harness(r) for r in rows]

    async def harness(self, harness_id: str) -> HarnessRow | None:
        """A harness by id, whoever owns it (the caller checks `owner`)."""
        row = await self._db.fetchone(
            f"SELECT {_HARNESS_COLUMNS} FROM uhp_harnesses WHERE id = ?", (harness_id,)
        )
        return _harness(row) if row else None

    async def builtin_harness(self) -> HarnessRow | None:
        row = await self._db.fetchone(
            f"SELECT {_HARNESS_COLUMNS} FROM uhp_harnesses WHERE builtin = 1 LIMIT 1"
        )
        return _harness(row) if row else None

    async def save_harness(self, harness: HarnessRow, skills: list[SkillFileRow] | None) -> None:
        """Insert or replace a harness; `skills` None keeps its stored skill files."""
        async with self._db.transaction() as conn:
            await conn.execute(
                f"INSERT INTO uhp_harnesses ({_HARNESS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET name = excluded.name, config = excluded.config",
                (
                    harness.id,
                    harness.name,
                    harness.base,
                    json.dumps(harness.config),
                    int(harness.builtin),
                    harness.created_at,
                    harness.owner,
                ),
            )
            if skills is not None:
                await conn.execute("DELETE FROM uhp_skill_files WHERE harness = ?", (harness.id,))
                await conn.executemany(
                    "INSERT INTO uhp_skill_files (harness, skill, path, content, binary) VALUES (?, ?, ?, ?, ?)",
                    [(harness.id, f.skill, f.path, f.content, int(f.binary)) for f in skills],
                )

    async def delete_harness(self, harness_id: str) -> bool:
        async with self._db.transaction() as conn:
            cur = await conn.execute("DELETE FROM uhp_harnesses WHERE id = ? AND builtin = 0", (harness_id,))
            return cur.rowcount == 1

    async def skill_files(self, harness_id: str, skill: str | None = None) -> list[SkillFileRow]:
        """A harness's skill files (of one skill, when named), by skill then path."""
        sql = "SELECT skill, path, content, binary FROM uhp_skill_files WHERE harness = ?"
        params: tuple = (harness_id,)
        if skill is not None:
            sql += " AND skill = ?"
            params += (skill,)
        rows = await self._db.fetchall(sql + " ORDER BY skill, path", params)
        return [
            SkillFileRow(
                skill=row["skill"],
                path=row["path"],
                content=bytes(row["content"]),
                binary=bool(row["binary"]),
            )
            for row in rows
        ]

    # sessions ----------------------------------------------------------------------------------

    async def session_harness(self, session_num: int) -> tuple[str, bool] | None:
        """(harness id, fixed workspace) of a session made over HTTP; None for any other session."""
        row = await self._db.fetchone(
            "SELECT harness, fixed_workspace FROM uhp_sessions WHERE session = ?", (session_num,)
        )
        return (row[0], bool(row[1])) if row else None

    async def session_owner(self, session_num: int) -> str | None:
        """The principal that made a session over HTTP; None for any other session."""
        row = await self._db.fetchone("SELECT owner FROM uhp_sessions WHERE session = ?", (session_num,))
        return str(row[0]) if row else None

    async def session_page(
        self, owner: str, harness_id: str | None, cursor: str | None, limit: int
    ) -> SessionPage:
        """`owner`'s HTTP sessions newest first by last activity, with the picker's keyset cursors."""
        where, params = ["u.owner = ?"], [owner]
        if harness_id is not None:
            where.append("u.harness = ?")
            params.append(harness_id)
        if cursor:
            updated, num = decode_cursor(cursor)
            where.append("(s.updated_at < ? OR (s.updated_at = ? AND s.num < ?))")
            params += [updated, updated, num]
        sql = "SELECT s.num, s.updated_at FROM sessions s JOIN uhp_sessions u ON u.session = s.num"
        sql += " WHERE " + " AND ".join(where)
        rows = await self._db.fetchall(
            sql + " ORDER BY s.updated_at DESC, s.num DESC LIMIT ?", [*params, limit + 1]
        )
        nums = [row[0] for row in rows[:limit]]
        found = await SessionTable(self._db).by_nums(nums)
        records = [found[num] for num in nums if num in found]
        # The cursor is the keys this query ordered by, not the rows read after it (activity moves them).
        last = rows[limit - 1] if len(rows) > limit else None
        return SessionPage(records, encode_cursor(last[1], last[0]) if last else None, {})

    # responses ---------------------------------------------------------------------------------

    async def add_response(self, row: ResponseRow, fixed_workspace: bool = False) -> None:
        """Record a response, and its session as made over HTTP by its harness (once), in one transaction."""
        assert row.session_num is not None
        async with self._db.transaction() as conn:
            await conn.execute(
                "INSERT OR IGNORE INTO uhp_sessions (session, harness, fixed_workspace, created_at, owner) "
                "VALUES (?, ?, ?, ?, ?)",
                (row.session_num, row.harness, int(fixed_workspace), row.created_at, row.owner),
            )
            await conn.execute(
                f"INSERT INTO uhp_responses ({_RESPONSE_COLUMNS}) VALUES ({', '.join('?' * 17)})",
                (
                    row.id,
                    row.task,
                    row.session_num,
                    row.session_id,
                    row.harness,
                    row.previous,
                    row.model,
                    row.requested_model,
                    row.fallback_reason,
                    json.dumps(redact_json(row.input)),  # a client may paste a credential (a token) in
                    json.dumps(row.options),
                    json.dumps(redact_json(row.metadata)),
                    int(row.stored),
                    int(row.deleted),
                    row.start_seq,
                    row.created_at,
                    row.owner,
                ),
            )

    async def response(self, response_id: str) -> ResponseRow | None:
        row = await self._db.fetchone(
            f"SELECT {_RESPONSE_COLUMNS} FROM uhp_responses WHERE id = ?", (response_id,)
        )
        return _response(row) if row else None

    async def session_responses(self, session_num: int) -> list[ResponseRow]:
        """A session's responses, oldest first (deleted ones included)."""
        rows = await self._db.fetchall(
            f"SELECT {_RESPONSE_COLUMNS} FROM uhp_responses WHERE session = ? ORDER BY created_at, rowid",
            (session_num,),
        )
        return [_response(r) for r in rows]

    async def delete_response(self, response_id: str) -> None:
        async with self._db.transaction() as conn:
            await conn.execute("UPDATE uhp_responses SET deleted = 1 WHERE id = ?", (response_id,))

    # idempotency -------------------------------------------------------------------------------

    async def claim_key(self, owner: str, key: str, response_id: str) -> str:
        """Remember `owner`'s `key` for `response_id`, unless it is known: the response it already
        names. Keys are per owner: another principal's key of the same text is another key.

        A claim older than ABANDONED_CLAIM_SECONDS whose response was never written is given to
        `response_id`: the process that made it ended (killed, crashed) before starting its task, so
        there is no first result to return, and a retry must not wait for one for a whole day.
        """
        now = time.time()
        async with self._db.transaction() as conn:
            await conn.execute(
                "DELETE FROM uhp_idempotency WHERE created_at < ?", (now - IDEMPOTENCY_SECONDS,)
            )
            async with conn.execute(
                "SELECT response, created_at, EXISTS (SELECT 1 FROM uhp_responses r WHERE r.id = response) "
                "FROM uhp_idempotency WHERE owner = ? AND key = ?",
                (owner, key),
            ) as cur:
                found = await cur.fetchone()
            if found is not None and (found[2] or found[1] >= now - ABANDONED_CLAIM_SECONDS):
                return str(found[0])
            await conn.execute(
                "INSERT OR REPLACE INTO uhp_idempotency (owner, key, response, created_at) VALUES (?, ?, ?, ?)",
                (owner, key, response_id, now),
            )
        return response_id

    async def forget_key(self, owner: str, key: str) -> None:
        """Drop a key whose request failed before it started a task (a retry may try again)."""
        async with self._db.transaction() as conn:
            await conn.execute("DELETE FROM uhp_idempotency WHERE owner = ? AND key = ?", (owner, key))

    # files -------------------------------------------------------------------------------------

    async def add_upload(self, row: UploadRow, content: bytes) -> None:
        async with self._db.transaction() as conn:
            await conn.execute(
                "INSERT INTO uhp_uploads (id, filename, media_type, bytes, content, created_at, owner) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.filename, row.media_type, row.bytes, content, row.created_at, row.owner),
            )

    async def delete_uploads(self, file_ids: list[str]) -> None:
        async with self._db.transaction() as conn:
            await conn.executemany("DELETE FROM uhp_uploads WHERE id = ?", [(i,) for i in file_ids])

    async def upload(self, file_id: str) -> tuple[UploadRow, bytes] | None:
        row = await self._db.fetchone(
            "SELECT id, filename, media_type, bytes, created_at, content, owner FROM uhp_uploads WHERE id = ?",
            (file_id,),
        )
        if row is None:
            return None
        upload = UploadRow(
            id=row["id"],
            filename=row["filename"],
            media_type=row["media_type"],
            bytes=row["bytes"],
            created_at=row["created_at"],
            owner=row["owner"],
        )
        return upload, bytes(row["content"])

    async def artifact_ids(
        self, session_num: int, paths: list[str], new_id: Any
    ) -> dict[str, tuple[str, float]]:
        """(id, first seen) of each artifact path of a session, giving new paths a new id."""
        known = {
            r[0]: (r[1], r[2])
            for r in await self._db.fetchall(
                "SELECT path, id, created_at FROM uhp_artifacts WHERE session = ?", (session_num,)
            )
        }
        fresh = [(new_id(), session_num, path, time.time()) for path in paths if path not in known]
        if fresh:
            async with self._db.transaction() as conn:
                await conn.executemany(
                    "INSERT OR IGNORE INTO uhp_artifacts (id, session, path, created_at) VALUES (?, ?, ?, ?)",
                    fresh,
                )
            return await self.artifact_ids(session_num, paths, new_id)
        return {path: known[path] for path in paths}

    async def artifact(self, file_id: str) -> tuple[int, str] | None:
        """(session num, relative path) of an artifact id."""
        row = await self._db.fetchone("SELECT session, path FROM uhp_artifacts WHERE id = ?", (file_id,))
        return (row[0], row[1]) if row else None

    # shares ------------------------------------------------------------------------------------

    async def share(self, session_num: int) -> tuple[str, float] | None:
        """(id, created) of the session's live share."""
        row = await self._db.fetchone(
            "SELECT id, created_at FROM uhp_shares WHERE session = ? AND revoked_at IS NULL", (session_num,)
        )
        return (row[0], row[1]) if row else None

    async def add_share(self, share_id: str, session_num: int) -> None:
        async with self._db.transaction() as conn:
            await conn.execute(
                "INSERT INTO uhp_shares (id, session, created_at) VALUES (?, ?, ?)",
                (share_id, session_num, time.time()),
            )

    async def revoke_share(self, session_num: int) -> bool:
        async with self._db.transaction() as conn:
            cur = await conn.execute(
                "UPDATE uhp_shares SET revoked_at = ? WHERE session = ? AND revoked_at IS NULL",
                (time.time(), session_num),
            )
            return cur.rowcount > 0

    async def shared_session(self, share_id: str) -> int | None:
        """The session num a live share shows."""
        row = await self._db.fetchone(
            "SELECT session FROM uhp_shares WHERE id = ? AND revoked_at IS NULL", (share_id,)
        )
        return row[0] if row else None
