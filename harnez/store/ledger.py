"""Execution ledgers: one row per model call and per tool execution, plus model selections."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from harnez.redaction import redact
from harnez.store.db import Database, inserted_id


@dataclass(frozen=True, slots=True)
class ModelCall:
    """What one model call cost and returned. Token counts are None when the provider did not say."""

    session_num: int
    task: int | None
    model_requested: str
    outcome: str
    provider: str | None = None
    wire: str | None = None
    model_served: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    first_token_ms: float | None = None
    attempts: int = 1
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """What one tool call was asked, decided and returned."""

    session_num: int
    task: int | None
    call_id: str
    tool: str
    arguments: dict[str, Any]
    outcome: str
    result: str | None = None
    is_error: bool = False
    approval: str | None = None
    duration_ms: float | None = None


class Ledger:
    """Writes and reads of the ledgers."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record_model_call(self, call: ModelCall) -> int:
        """Insert a model call row."""
        values = asdict(call)
        values["session"] = values.pop("session_num")
        values["created_at"] = time.time()
        return await self._insert("model_calls", values)

    async def record_tool_execution(self, execution: ToolExecution) -> int:
        """Insert a tool execution row."""
        values = asdict(execution)
        values["session"] = values.pop("session_num")
        values["arguments"] = json.dumps(values["arguments"], ensure_ascii=False)
        values["is_error"] = int(values["is_error"])
        values["created_at"] = time.time()
        return await self._insert("tool_executions", values)

    async def record_model_selection(self, session_num: int, model: str, thinking: str | None) -> int:
        """Insert a model selection row."""
        return await self._insert(
            "model_selections",
            {"session": session_num, "model": model, "thinking": thinking, "selected_at": time.time()},
        )

    async def _insert(self, table: str, values: dict[str, Any]) -> int:
        names = ", ".join(values)
        marks = ", ".join("?" * len(values))
        row = tuple(redact(v) if isinstance(v, str) else v for v in values.values())
        return await self._db.write(
            lambda conn: inserted_id(conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", row))
        )

    async def model_calls(self, session_num: int) -> list[dict[str, Any]]:
        """Model call rows of a session, oldest first."""
        rows = await self._db.fetchall(
            "SELECT * FROM model_calls WHERE session = ? ORDER BY id", (session_num,)
        )
        return [dict(r) for r in rows]

    async def recent_successful_models(self, limit: int = 10, scan: int = 2000) -> list[str]:
        """The models (`<provider>/<model>`) of the newest model calls that completed, newest first, each
        once; a model whose calls only ever failed is not among them. Reads at most `scan` calls."""
        rows = await self._db.fetchall(
            "SELECT model_requested FROM (SELECT model_requested, outcome FROM model_calls ORDER BY id DESC "
            "LIMIT ?) WHERE outcome = 'completed'",
            (scan,),
        )
        return list(dict.fromkeys(row[0] for row in rows))[:limit]

    async def tool_executions(self, session_num: int) -> list[dict[str, Any]]:
        """Tool execution rows of a session, oldest first."""
        rows = await self._db.fetchall(
            "SELECT * FROM tool_executions WHERE session = ? ORDER BY id", (session_num,)
        )
        return [dict(r) for r in rows]

    async def model_selections(self, session_num: int) -> list[dict[str, Any]]:
        """Model selections of a session, oldest first."""
        rows = await self._db.fetchall(
            "SELECT * FROM model_selections WHERE session = ? ORDER BY id", (session_num,)
        )
        return [dict(r) for r in rows]
