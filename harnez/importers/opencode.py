"""OpenCode sessions: the SQLite database `~/.local/share/opencode/opencode.db` (1.2+), and the older
JSON store `~/.local/share/opencode/storage/` (`session/<project>/<id>.json`, `message/<session>/*.json`,
`part/<message>/*.json`; the oldest keeps parts flat in `part/` with their `messageID`).

Before that (summer 2025) each project had its own store, `~/.local/share/opencode/project/<project>/storage/`
with `session/info/<id>.json`, `session/message/<session>/<id>.json` and
`session/part/<session>/<message>/<id>.json`; OpenCode's migration copied it to the newer store but
skipped some projects (`global`, worktrees gone) and never deleted it. Its first messages held their
parts inline with the model, tokens and times under `metadata` (`tool-invocation` parts): they are
read as the later shape.

The database is never opened in place: it is copied (with its WAL) into a private folder, made
read-only, and read from there. Only the `session`, `message` and `part` tables are read, and
`session_message` (the projection newer OpenCode keeps a conversation in) for a session without
`message` rows (the `event` table replays intermediate states; account and credential tables are
never touched).
An assistant message holds one or more steps (`step-start` … `step-finish`): each step is a model
call, its usage on the `step-finish` part.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harnez.errors import SessionFormatError
from harnez.importers.base import Reader, SourceRef, StreamKey
from harnez.importers.jsonl import MAX_RECORD_BYTES, mend
from harnez.importers.normalized import (
    AssistantTurn,
    Compaction,
    Entry,
    Integrity,
    ModelCall,
    Notice,
    Reasoning,
    SessionInfo,
    Text,
    ToolCall,
    ToolResult,
    TurnMark,
    Usage,
    UserMessage,
    as_list,
    as_object,
    iso_from_ms,
)

HARNESS = "opencode"
DATABASE = "opencode.db"
RESULT_STATES = ("completed", "error")
OUTPUT_PARTS = ("text", "reasoning", "tool")
"""Parts holding what the model produced."""
LONE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A surrogate escape in JSON text (the standard library keeps a lone one as is; `mend` replaces it)."""
OWNER_PREFIX = 4096
"""Bytes read from the start of an over-large flat part file to find the message it belongs to."""


def data_dir(home: Path) -> Path:
    return home / ".local" / "share" / "opencode"


def is_store(path: Path) -> bool:
    """A JSON store folder: it has `session/` and `message/` folders (in the per-project store of
    summer 2025, `session/info/` and `session/message/`)."""
    return (path / "session").is_dir() and ((path / "message").is_dir() or is_project_store(path))


def is_project_store(path: Path) -> bool:
    """The per-project store of summer 2025: `session/info/` and `session/message/`."""
    return (path / "session" / "info").is_dir() and (path / "session" / "message").is_dir()


class OpenCodeReader(Reader):
    """Reads OpenCode's database (from a private copy) and its older JSON store."""

    harness = HARNESS

    def __init__(self) -> None:
        self._copies: dict[Path, _DatabaseCopy] = {}
        self._stores: dict[Path, _Store] = {}

    def close(self) -> None:
        """Delete the private copies of databases."""
        for copy in self._copies.values():
            copy.close()
        self._copies.clear()

    def locate(self, home: Path) -> Iterator[SourceRef]:
        folder = data_dir(home)
        if (folder / DATABASE).is_file():
            yield from self.refs_for(folder / DATABASE)
        if is_store(folder / "storage"):
            yield from self.refs_for(folder / "storage")
        projects = folder / "project"
        if projects.is_dir():
            for store in sorted(projects.glob("*/storage")):
                if is_project_store(store):
                    yield from self.refs_for(store)

    def refs_for(self, path: Path) -> list[SourceRef]:
        if path.is_dir():
            return self._store(path).refs() if is_store(path) else []
        return self._copy(path).refs()

    def parse(
        self, ref: SourceRef, infos: dict[StreamKey, SessionInfo], *, strict: bool = False, full: bool = False
    ) -> Iterator[tuple[StreamKey, Entry]]:
        source: _DatabaseCopy | _Store = self._store(ref.path) if ref.path.is_dir() else self._copy(ref.path)
        info = infos[None] = SessionInfo(HARNESS, str(ref.path), session_id=ref.key)
        skips = Skips(ref.label, info.integrity, strict)
        try:
            _describe(info, source.session(str(ref.key)))
            read, compacting = 0, _Compacting()
            for message in source.messages(str(ref.key), skips):
                read += 1
                info.integrity.records += 1
                parts = source.parts(message, skips)
                info.integrity.records += len(parts)
                for entry in _message_entries(info, message, parts, compacting):
                    yield None, entry
            if not read and isinstance(source, _DatabaseCopy):
                for kind, data in source.projected(str(ref.key), skips):
                    info.integrity.records += 1
                    for entry in _projected_entries(info, kind, data):
                        yield None, entry
            for entry in compacting.finish():
                yield None, entry
        except sqlite3.Error as exc:
            raise SessionFormatError(f"session {ref.key} of {ref.path} cannot be read ({exc}).") from exc

    def _copy(self, path: Path) -> _DatabaseCopy:
        path = path.resolve()
        copy = self._copies.get(path)
        if copy is None or copy.stale():
            if copy is not None:
                copy.close()
            copy = self._copies[path] = _DatabaseCopy(path)
        return copy

    def _store(self, path: Path) -> _Store:
        path = path.resolve()
        if path not in self._stores:
            self._stores[path] = _Store(path)
        return self._stores[path]


class Skips:
    """The records of one session that are not read: too large (over `MAX_RECORD_BYTES`, left unread,
    counted and named) or not a JSON object (counted); with `strict`, either is an error naming it."""

    def __init__(self, source: str, integrity: Integrity, strict: bool) -> None:
        self.source, self.integrity, self.strict = source, integrity, strict

    def too_large(self, name: str, size: int) -> None:
        if self.strict:
            raise SessionFormatError(
                f"{name} of {self.source} is {size:,} bytes, longer than the {MAX_RECORD_BYTES:,} bytes "
                "Harnez reads as one record; run without --strict to skip and count such records."
            )
        self.integrity.oversized_records.append((name, size))
        self._skip()

    def unparsable(self, name: str) -> None:
        if self.strict:
            raise SessionFormatError(
                f"{name} of {self.source} is not a JSON object; run without --strict to skip and count such records."
            )
        self._skip()

    def _skip(self) -> None:
        self.integrity.records += 1
        self.integrity.unparsed_records += 1


def _describe(info: SessionInfo, row: dict[str, Any] | None) -> None:
    if not row:
        return
    info.title = _str(row.get("title"))
    info.cwd = _str(row.get("directory"))
    info.add_version(row.get("version"))
    parent = _str(row.get("parent_id")) or _str(row.get("parentID"))
    if parent:
        info.parent_session_id, info.agent_id, info.agent_type = parent, info.session_id, "sub-agent"
    times = as_object(row.get("time"))
    info.span.see(row.get("time_created", times.get("created")))


# conversion ---------------------------------------------------------------------------------------


def _message_entries(
    info: SessionInfo,
    message: dict[str, Any],
    parts: list[dict[str, Any]],
    compacting: _Compacting | None = None,
) -> Iterator[Entry]:
    if isinstance(message.get("metadata"), dict) and isinstance(message.get("parts"), list):
        message, parts = _from_first_shape(message)
    if info.cwd is None:
        info.cwd = _str(as_object(message.get("path")).get("cwd"))
    times = as_object(message.get("time"))
    created = iso_from_ms(times.get("created"))
    info.span.see(created)
    info.span.see(iso_from_ms(times.get("completed")))
    role = message.get("role")
    compacting = compacting or _Compacting()
    if role == "user":
        yield from compacting.interrupted()
        yield from _user(message, parts, created)
        compacting.requested(parts, created)
    elif role == "assistant":
        yield from _assistant(info, message, parts, created)
        yield from _message_end(message, times, created)
        yield from compacting.summarised(message, parts, created)


class _Compacting:
    """OpenCode's compaction: a user message holding a `compaction` part (and no text), then an
    assistant message flagged `summary: true` whose text is the summary; read as one `Compaction`
    after that message, so a continued session starts from the summary. (The request stays one of
    the user messages: the counting rules count every user message.) Before 0.15 a `summary`
    message came alone (the summarize command)."""

    def __init__(self) -> None:
        self.pending: Compaction | None = None

    def requested(self, parts: list[dict[str, Any]], time: str | None) -> None:
        part = next((p for p in parts if p.get("type") == "compaction"), None)
        if part is not None:
            self.pending = Compaction(None, time, trigger="auto" if part.get("auto") else "manual")

    def summarised(
        self, message: dict[str, Any], parts: list[dict[str, Any]], time: str | None
    ) -> Iterator[Entry]:
        if message.get("summary") is not True:
            return
        texts = [p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str)]
        pending, self.pending = self.pending, None
        yield Compaction("\n".join(texts) or None, time, trigger=pending.trigger if pending else None)

    def interrupted(self) -> Iterator[Entry]:
        """A compaction that got no summary (it failed, or was cut short) before the next prompt."""
        yield from self.finish()

    def finish(self) -> Iterator[Entry]:
        if self.pending is not None:
            yield self.pending
            self.pending = None


def _from_first_shape(message: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A message of OpenCode's first shape (parts inline; time, error, model and tokens under
    `metadata`; tools as `tool-invocation` parts) in the later shape the reader takes."""
    metadata = as_object(message["metadata"])
    assistant = as_object(metadata.get("assistant"))
    converted = {
        "id": message.get("id"),
        "role": message.get("role"),
        "time": metadata.get("time"),
        "error": metadata.get("error"),
        "providerID": assistant.get("providerID"),
        "modelID": assistant.get("modelID"),
        "tokens": assistant.get("tokens"),
        "cost": assistant.get("cost"),
        "path": assistant.get("path"),
        "summary": assistant.get("summary"),
    }
    parts = []
    for part in message["parts"]:
        if not isinstance(part, dict):
            continue
        invocation = as_object(part.get("toolInvocation"))
        if part.get("type") == "tool-invocation":
            done = invocation.get("state") == "result"
            result = invocation.get("result")
            state = {"status": "completed" if done else "running", "input": invocation.get("args")}
            if done:
                state["output"] = result if isinstance(result, str) else json.dumps(result)
            part = {
                "type": "tool",
                "callID": invocation.get("toolCallId"),
                "tool": invocation.get("toolName"),
            }
            part["state"] = state
        parts.append(part)
    return converted, parts


def _projected_entries(info: SessionInfo, kind: Any, data: dict[str, Any]) -> Iterator[Entry]:
    """A row of `session_message`, the projection newer OpenCode keeps a session's conversation in
    (one row per user prompt, assistant message, shell command, compaction…), read as the
    `message`/`part` shape or straight into entries."""
    time = iso_from_ms(as_object(data.get("time")).get("created"))
    text = _str(data.get("text")) or ""
    if kind == "user":
        files = [
            {"type": "file", "mime": f.get("mime")} for f in as_list(data.get("files")) if isinstance(f, dict)
        ]
        message = {"id": data.get("id"), "role": "user", "time": data.get("time")}
        yield from _message_entries(info, message, [{"type": "text", "text": text}, *files])
    elif kind in ("synthetic", "system"):
        yield UserMessage(text, time, "meta")
    elif kind == "shell":
        info.span.see(time)
        yield Notice("local", f"$ {data.get('command') or ''}\n{data.get('output') or ''}".rstrip(), time)
    elif kind == "compaction":
        info.span.see(time)
        yield Compaction(_str(data.get("summary")), time, trigger=_str(data.get("reason")))
    elif kind == "assistant":
        yield from _message_entries(info, *_from_projection(data))


def _from_projection(data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A projected assistant message in the `message`/`part` shape."""
    model = as_object(data.get("model"))
    error = data.get("error")
    if isinstance(error, dict):
        error = {"name": error.get("name") or error.get("type"), "data": {"message": error.get("message")}}
    message = {
        "id": data.get("id"),
        "role": "assistant",
        "providerID": model.get("providerID"),
        "modelID": model.get("id"),
        "tokens": data.get("tokens"),
        "cost": data.get("cost"),
        "finish": data.get("finish"),
        "error": error,
        "time": data.get("time"),
    }
    parts = []
    for block in as_list(data.get("content")):
        if not isinstance(block, dict):
            continue
        if block.get("type") != "tool":
            parts.append(block)
            continue
        state = as_object(block.get("state"))
        output = "\n".join(
            c["text"]
            for c in as_list(state.get("content"))
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        )
        result = state.get("result")
        failure = as_object(state.get("error"))
        parts.append(
            {
                "type": "tool",
                "callID": block.get("id"),
                "tool": block.get("name"),
                "state": {
                    "status": state.get("status"),
                    "input": state.get("input"),
                    "output": output or (result if isinstance(result, str) else ""),
                    "error": _str(failure.get("message")) or output or "The tool failed.",
                },
            }
        )
    return message, parts


def _user(message: dict[str, Any], parts: list[dict[str, Any]], time: str | None) -> Iterator[Entry]:
    typed = [
        p["text"]
        for p in parts
        if p.get("type") == "text" and isinstance(p.get("text"), str) and not p.get("synthetic")
    ]
    added = [
        p["text"]
        for p in parts
        if p.get("type") == "text" and isinstance(p.get("text"), str) and p.get("synthetic")
    ]
    typed += [task for task in (_subtask_prompt(p) for p in parts) if task]
    files = sum(1 for p in parts if p.get("type") == "file" and _is_image(p))
    summary = as_object(message.get("summary"))
    text = "\n".join(typed) or _str(summary.get("body")) or _str(summary.get("title")) or ""
    yield UserMessage(text, time, "prompt", files, _str(message.get("id")))
    if added:
        yield UserMessage("\n".join(added), time, "meta")


def _subtask_prompt(part: dict[str, Any]) -> str | None:
    """The request of a `subtask` part: a command run as a sub-agent's task (`subtask: true`, or a
    command whose agent is a sub-agent) leaves its expanded template there, in a user message that
    holds no text part."""
    if part.get("type") != "subtask":
        return None
    return _str(part.get("prompt")) or _str(part.get("description"))


def _is_image(part: dict[str, Any]) -> bool:
    """A file part holding an image (`mime`; `mediaType` in the first message shape). An attached
    source file is not one: OpenCode reads it into the prompt as synthetic text."""
    mime = part.get("mime", part.get("mediaType"))
    return isinstance(mime, str) and mime.startswith("image/")


def _assistant(
    info: SessionInfo, message: dict[str, Any], parts: list[dict[str, Any]], time: str | None
) -> Iterator[Entry]:
    model = _model(message)
    info.add_model(model)
    results: list[Entry] = []
    turn, steps = AssistantTurn(time=time, source_id=_str(message.get("id"))), 0
    stepped = any(part.get("type") == "step-finish" for part in parts)
    for part in parts:
        kind = part.get("type")
        if not stepped and results and kind in OUTPUT_PARTS:
            # No steps recorded (OpenCode's first message shape, a message cut short): output after
            # a tool's result answers it, so the results come before it; the call stays one.
            yield turn
            yield from results
            turn, results = AssistantTurn(time=time), []
        if kind == "step-finish":
            steps += 1
            turn.call = ModelCall(
                model,
                opencode_usage(part.get("tokens"), part.get("cost")),
                time,
                _str(message.get("id")),
                _str(part.get("reason")),
            )
            yield turn
            yield from results
            turn, results = AssistantTurn(time=time), []
        elif kind == "compaction":
            yield Compaction(None, time, trigger="auto" if part.get("auto") else None)
        else:
            _part(turn, results, part, time)
    if turn.parts or results or steps == 0:
        if steps == 0:
            turn.call = ModelCall(
                model,
                opencode_usage(message.get("tokens"), message.get("cost")),
                time,
                _str(message.get("id")),
                _str(message.get("finish")),
            )
        yield turn
        yield from results


def _part(turn: AssistantTurn, results: list[Entry], part: dict[str, Any], time: str | None) -> None:
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        turn.parts.append(Text(part["text"]))
    elif kind == "reasoning" and isinstance(part.get("text"), str):
        turn.parts.append(Reasoning(part["text"]))
    elif kind == "tool":
        state = as_object(part.get("state"))
        call_id = str(part.get("callID") or part.get("id") or "")
        name = str(part.get("tool") or "tool")
        turn.parts.append(ToolCall(call_id, name, state.get("input")))
        status = state.get("status")
        if status in RESULT_STATES:
            content = state.get("output") if status == "completed" else state.get("error")
            results.append(
                ToolResult(
                    call_id,
                    content if isinstance(content, str) else json.dumps(content),
                    status == "error",
                    time,
                    name,
                    state.get("metadata"),
                )
            )


def _message_end(message: dict[str, Any], times: dict[str, Any], time: str | None) -> Iterator[Entry]:
    error = message.get("error")
    if isinstance(error, dict):
        data = as_object(error.get("data"))
        text = _str(data.get("message")) or _str(error.get("name")) or "The model call failed."
        yield Notice("aborted" if error.get("name") == "MessageAbortedError" else "error", text, time)
    yield TurnMark("completed" if times.get("completed") or error else "started", time)


def _model(message: dict[str, Any]) -> str | None:
    nested = as_object(message.get("model"))
    provider = _str(message.get("providerID")) or _str(nested.get("providerID"))
    model = _str(message.get("modelID")) or _str(nested.get("modelID"))
    return f"{provider}/{model}" if provider and model else model


def opencode_usage(tokens: Any, cost: Any) -> Usage | None:
    """OpenCode tokens: `input` excludes the cache, which is `cache.read` / `cache.write`."""
    if not isinstance(tokens, dict):
        return None
    cache = as_object(tokens.get("cache"))
    if isinstance(cost, dict):
        cost = cost.get("usd")
    return Usage(
        _int(tokens.get("input")),
        _int(tokens.get("output")),
        _int(cache.get("read")),
        _int(cache.get("write")),
        _int(tokens.get("reasoning")),
        float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _json(text: Any) -> dict[str, Any]:
    return _json_object(text) or {}


def _json_object(text: Any) -> dict[str, Any] | None:
    """A JSON object from text (None when the text is not one)."""
    try:
        data = json.loads(text) if isinstance(text, (str, bytes)) else None
        if data is not None and LONE_SURROGATE.search(
            text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        ):
            data = mend(data)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


# the database ---------------------------------------------------------------------------------------


class _DatabaseCopy:
    """A private, read-only copy of an OpenCode database (and its WAL), deleted on close."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self._stamp = _stamp(source)
        self._folder = Path(tempfile.mkdtemp(prefix="harnez-opencode-"))
        atexit.register(shutil.rmtree, self._folder, True)
        copy = self._folder / DATABASE
        try:
            shutil.copyfile(source, copy)
            if Path(f"{source}-wal").is_file():
                shutil.copyfile(f"{source}-wal", f"{copy}-wal")
                _fold_wal(copy)
            os.chmod(copy, stat.S_IRUSR)
            # One run reads it from worker threads one at a time (never at once): any thread may use it.
            self.db = sqlite3.connect(f"file:{copy}?mode=ro", uri=True, check_same_thread=False)
            self.db.execute("SELECT 1 FROM session LIMIT 1")
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise SessionFormatError(
                f"{source} is not an OpenCode database Harnez can read ({exc})."
            ) from exc
        self.db.row_factory = sqlite3.Row
        self.db.text_factory = _text

    def stale(self) -> bool:
        return _stamp(self.source) != self._stamp

    def close(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            db.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def refs(self) -> list[SourceRef]:
        try:
            return self._refs()
        except sqlite3.Error as exc:
            raise SessionFormatError(
                f"{self.source} has no OpenCode sessions Harnez can read ({exc})."
            ) from exc

    def _refs(self) -> list[SourceRef]:
        rows = self.db.execute(
            "SELECT s.id, s.time_updated, (SELECT COUNT(*) FROM message m WHERE m.session_id = s.id), "
            "(SELECT MAX(m.time_updated) FROM message m WHERE m.session_id = s.id) FROM session s"
        ).fetchall()
        orphans = self.db.execute(
            "SELECT session_id, MAX(time_updated), COUNT(*), MAX(time_updated) FROM message "
            "WHERE session_id NOT IN (SELECT id FROM session) GROUP BY session_id"
        ).fetchall()
        refs = []
        for session, updated, count, last in [*rows, *orphans]:
            newest = max(v for v in (updated, last, 0) if isinstance(v, (int, float)))
            refs.append(
                SourceRef(HARNESS, self.source, session, False, f"{updated}:{count}:{last}", newest / 1000.0)
            )
        return sorted(refs, key=lambda r: r.key or "")

    def session(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM session WHERE id = ?", (key,)).fetchone()
        return dict(row) if row else None

    def messages(self, key: str, skips: Skips) -> Iterator[dict[str, Any]]:
        for row in self.db.execute(
            f"SELECT id, time_created, {CAPPED_DATA} FROM message WHERE session_id = ? ORDER BY time_created, id",
            (MAX_RECORD_BYTES, key),
        ):
            data = _row_data(row, f"message {row['id']}", skips)
            if data is not None:
                data["id"] = row["id"]
                data.setdefault("time", {"created": row["time_created"]})
                yield data

    def parts(self, message: dict[str, Any], skips: Skips) -> list[dict[str, Any]]:
        rows = self.db.execute(
            f"SELECT id, {CAPPED_DATA} FROM part WHERE message_id = ? ORDER BY id",
            (MAX_RECORD_BYTES, message["id"]),
        )
        found = []
        for row in rows:
            data = _row_data(row, f"part {row['id']} (message {message['id']})", skips)
            if data is not None:
                found.append({**data, "id": row["id"]})
        return found

    def projected(self, key: str, skips: Skips) -> Iterator[tuple[Any, dict[str, Any]]]:
        """The rows of `session_message` (newer OpenCode), in order: (type, data with its id)."""
        if not self._has_projection():
            return
        for row in self.db.execute(
            f"SELECT id, type, {CAPPED_DATA} FROM session_message WHERE session_id = ? ORDER BY seq, id",
            (MAX_RECORD_BYTES, key),
        ):
            data = _row_data(row, f"session_message {row['id']}", skips)
            if data is not None:
                yield row["type"], {**data, "id": row["id"]}

    def _has_projection(self) -> bool:
        found = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_message'"
        ).fetchone()
        return found is not None


CAPPED_DATA = (
    "length(CAST(data AS BLOB)) AS size, CASE WHEN length(CAST(data AS BLOB)) <= ? THEN data END AS data"
)
"""A row's JSON and its size in bytes; the JSON only when it is at most `MAX_RECORD_BYTES` (a larger
one never reaches Python)."""


def _row_data(row: sqlite3.Row, name: str, skips: Skips) -> dict[str, Any] | None:
    """The JSON object of a message or part row; None (counted, named) when too large or not an object."""
    size = row["size"]
    if isinstance(size, int) and size > MAX_RECORD_BYTES:
        skips.too_large(name, size)
        return None
    data = _json_object(row["data"])
    if data is None:
        skips.unparsable(name)
    return data


def _text(raw: bytes) -> str:
    """A TEXT value; bytes that are not UTF-8 (a harness that wrote them anyway) become U+FFFD
    instead of failing the whole session's read."""
    return raw.decode("utf-8", "replace")


def _fold_wal(copy: Path) -> None:
    """Apply the copied WAL to the copy and leave a plain database file (the source is not touched)."""
    db = sqlite3.connect(copy)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode = DELETE")
    finally:
        db.close()


def _stamp(path: Path) -> tuple[int, int, int]:
    info = path.stat()
    wal = Path(f"{path}-wal")
    return info.st_size, info.st_mtime_ns, wal.stat().st_mtime_ns if wal.exists() else 0


# the JSON store -----------------------------------------------------------------------------------


class _Store:
    """The JSON store of OpenCode before 1.2 (or the per-project store before it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._flat_parts: dict[str, list[Path]] | None = None
        self._sessions: dict[str, Path] | None = None
        self.per_project = is_project_store(root) and not (root / "message").is_dir()
        self.message_root = root / "session" / "message" if self.per_project else root / "message"
        self.session_glob = "info/*.json" if self.per_project else "*/*.json"

    def refs(self) -> list[SourceRef]:
        sessions: dict[str, Path] = dict(self._session_files())
        for folder in self.message_root.iterdir():
            if folder.is_dir():
                sessions.setdefault(folder.name, folder)
        refs = []
        for session, path in sorted(sessions.items()):
            messages = self.message_root / session
            listed = sorted(messages.glob("*.json")) if messages.is_dir() else []
            newest = max([path.stat().st_mtime_ns, *(m.stat().st_mtime_ns for m in listed)])
            refs.append(
                SourceRef(
                    HARNESS,
                    self.root,
                    session,
                    False,
                    f"{path.stat().st_mtime_ns}:{len(listed)}:{newest}",
                    newest / 1e9,
                )
            )
        return refs

    def session(self, key: str) -> dict[str, Any] | None:
        path = self._session_files().get(key)
        return _json_file(path) if path is not None else None

    def _session_files(self) -> dict[str, Path]:
        """Session files by the id they hold (the file name when they hold none)."""
        if self._sessions is None:
            self._sessions = {}
            for path in sorted((self.root / "session").glob(self.session_glob)):
                self._sessions[_str(_json_file(path).get("id")) or path.stem] = path
        return self._sessions

    def messages(self, key: str, skips: Skips) -> Iterator[dict[str, Any]]:
        loaded = [
            (data, path)
            for path in sorted((self.message_root / key).glob("*.json"))
            if (data := _capped_file(path, skips)) is not None
        ]
        loaded.sort(key=lambda pair: (_created(pair[0]), pair[1].name))
        for data, path in loaded:
            data.setdefault("id", path.stem)
            data.setdefault("sessionID", key)
            yield data

    def parts(self, message: dict[str, Any], skips: Skips) -> list[dict[str, Any]]:
        message_id = str(message.get("id"))
        if self.per_project:
            folder = self.root / "session" / "part" / str(message.get("sessionID")) / message_id
            return [
                data
                for path in sorted(folder.glob("*.json"))
                if (data := _capped_file(path, skips)) is not None
            ]
        folder = self.root / "part" / message_id
        paths = sorted(folder.glob("*.json")) if folder.is_dir() else self._flat().get(message_id, [])
        return [data for path in paths if (data := _capped_file(path, skips)) is not None]

    def _flat(self) -> dict[str, list[Path]]:
        """Parts kept flat in `part/` (the oldest layout), by message id."""
        if self._flat_parts is None:
            self._flat_parts = {}
            for path in sorted((self.root / "part").glob("*.json")):
                owner = _owner(path)
                if isinstance(owner, str):
                    self._flat_parts.setdefault(owner, []).append(path)
        return self._flat_parts


def _json_file(path: Path) -> dict[str, Any]:
    """A small JSON file of the store (a session's), {} when unreadable or too large to read."""
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            return {}
        return _json(path.read_bytes())
    except OSError:
        return {}


def _capped_file(path: Path, skips: Skips) -> dict[str, Any] | None:
    """A message or part file's JSON object; None (counted, named) when too large, unreadable or not one."""
    try:
        size = path.stat().st_size
        if size > MAX_RECORD_BYTES:
            skips.too_large(str(path), size)
            return None
        data = _json_object(path.read_bytes())
    except OSError:
        data = None
    if data is None:
        skips.unparsable(str(path))
    return data


OWNER = re.compile(rb'"messageID"\s*:\s*"([^"\\]+)"')


def _owner(path: Path) -> str | None:
    """The message a flat part file belongs to; an over-large file is not parsed, its `messageID` is
    found near its start (OpenCode writes the ids first), so it is still counted with its message."""
    try:
        if path.stat().st_size <= MAX_RECORD_BYTES:
            owner = _json(path.read_bytes()).get("messageID")
            return owner if isinstance(owner, str) else None
        with open(path, "rb") as handle:
            found = OWNER.search(handle.read(OWNER_PREFIX))
    except OSError:
        return None
    return found.group(1).decode("utf-8", "replace") if found else None


def _created(message: dict[str, Any]) -> float:
    times = as_object(message.get("time"))
    created = times.get("created")
    return float(created) if isinstance(created, (int, float)) else 0.0
