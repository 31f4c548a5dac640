"""Context records: conversation items exactly as sent to or received from a provider, compressed."""

from __future__ import annotations

import json
import time
import zlib
from typing import Any

from harnez.redaction import SECRETS
from harnez.store.db import Database, inserted_id


def pack(item: dict[str, Any]) -> bytes:
    """JSON then zlib: context records are read rarely and are mostly text, which compresses well.

    Known credentials are masked first (harnez.redaction): nothing stored may hold a key.
    """
    text = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
    if SECRETS.holds_secret(text):
        text = json.dumps(SECRETS.redact_json(item), ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode(), 6)


def unpack(body: bytes) -> dict[str, Any]:
    """The item stored by `pack`."""
    return json.loads(zlib.decompress(body))


class ContextRecords:
    """The conversation of a session, item by item, in order."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(
        self, session_num: int, task: int | None, role: str, item: dict[str, Any], wire: str | None = None
    ) -> int:
        """Store one conversation item."""
        async with self._db.transaction() as conn:
            cur = await conn.execute(
                "INSERT INTO context_records (session, task, role, wire, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (session_num, task, role, wire, pack(item), time.time()),
            )
        return inserted_id(cur)

    async def items(self, session_num: int) -> list[tuple[str, str | None, dict[str, Any]]]:
        """(role, wire, item) of every record, oldest first."""
        rows = await self._db.fetchall(
            "SELECT role, wire, body FROM context_records WHERE session = ? ORDER BY id", (session_num,)
        )
        return [(r[0], r[1], unpack(r[2])) for r in rows]
