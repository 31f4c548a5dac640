"""pi sessions: `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`, format versions 1 to 3.

The first line is the header (`type: session`; no `version` means 1). From version 2 entries have
`id`/`parentId` and form a tree: branching keeps the abandoned path in the file. Every entry is
read (in file order); the path from the last entry back to the root is what the model saw last, and
is what a continued session's context holds. Version 3 renamed the `hookMessage` role to `custom`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harnez.importers.base import Reader, SourceRef, StreamKey, file_ref
from harnez.importers.jsonl import MISSHAPEN, misshapen, records
from harnez.importers.normalized import (
    AssistantTurn,
    Compaction,
    Entry,
    ModelCall,
    Notice,
    Reasoning,
    SessionInfo,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    UserMessage,
)

HARNESS = "pi"
MAX_HEADER_BYTES = 64 * 1024
"""How much of a parent session file is read to find its header."""
CONTEXT_ROLES = ("custom", "hookMessage", "branchSummary", "compactionSummary")
"""Message roles an extension or pi itself adds to the model's context."""
SIGNED_THINKING = {
    "anthropic-messages": "anthropic-messages",
    "anthropic": "anthropic-messages",
    "openai-responses": "openai-responses",
}
"""pi's `api` names whose thinking signature is a provider item Harnez can replay on that wire."""


class PiReader(Reader):
    """Reads pi's JSONL session files."""

    harness = HARNESS

    def locate(self, home: Path) -> Iterator[SourceRef]:
        folder = home / ".pi" / "agent" / "sessions"
        if folder.is_dir():
            for path in sorted(folder.rglob("*.jsonl")):
                yield file_ref(HARNESS, path)

    def refs_for(self, path: Path) -> list[SourceRef]:
        return [file_ref(HARNESS, path)]

    def parse(
        self, ref: SourceRef, infos: dict[StreamKey, SessionInfo], *, strict: bool = False, full: bool = False
    ) -> Iterator[tuple[StreamKey, Entry]]:
        info = infos[None] = SessionInfo(HARNESS, str(ref.path))
        parents: dict[str, str | None] | None = {} if full else None
        last_id: str | None = None
        settings = _SettingEntries()
        linear = False
        """A version 1 file: its entries have no ids (given here by position, as pi's migration does)."""
        for index, record in enumerate(records(ref.path, info.integrity, strict=strict)):
            if record.get("type") == "session":
                linear = _version(record) < 2
            elif linear and "id" not in record:
                record = _with_position(record, index, last_id)
            entry_id = record.get("id") if isinstance(record.get("id"), str) else None
            try:
                entries = _record_entries(info, record, entry_id, settings, parents)
            except MISSHAPEN as error:
                misshapen(ref.path, info.integrity, strict, error)
                continue
            if entry_id is not None and record.get("type") != "session":
                last_id = entry_id
            for entry in entries:
                yield None, entry
        if parents and last_id is not None:
            info.active_path = _path_to(last_id, parents)


def _record_entries(
    info: SessionInfo,
    record: dict[str, Any],
    entry_id: str | None,
    settings: _SettingEntries,
    parents: dict[str, str | None] | None,
) -> list[Entry]:
    """The entries of one record, after noting its time, header, setting or place in the tree."""
    info.span.see(record.get("timestamp"))
    if record.get("type") == "session":
        _header(info, record)
        return []
    if entry_id is not None:
        settings.see(entry_id, record.get("type") == "message")
        if parents is not None:
            parent = record.get("parentId")
            parents[entry_id] = parent if isinstance(parent, str) else None
    entries = list(_entries(info, record, entry_id))
    for entry in entries:
        if isinstance(entry, Compaction) and entry.kept_from is not None:
            entry.kept_from = settings.message_at(entry.kept_from)
    return entries


class _SettingEntries:
    """Entries that are not messages (model and thinking changes, labels…), each mapped to the first
    message after it: a compaction's `firstKeptEntryId` may name one, and keeps the messages from there."""

    def __init__(self) -> None:
        self.waiting: list[str] = []
        self.next_message: dict[str, str] = {}

    def see(self, entry_id: str, is_message: bool) -> None:
        if not is_message:
            self.waiting.append(entry_id)
            return
        for waiting in self.waiting:
            self.next_message[waiting] = entry_id
        self.waiting.clear()

    def message_at(self, entry_id: str) -> str:
        return self.next_message.get(entry_id, entry_id)


def _version(header: dict[str, Any]) -> int:
    version = header.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def _with_position(record: dict[str, Any], index: int, previous: str | None) -> dict[str, Any]:
    """A version 1 entry with the id and parent pi's own migration gives it: its position in the file,
    the entry before it; a compaction's `firstKeptEntryIndex` becomes the id of the entry there."""
    placed = {**record, "id": f"#{index}", "parentId": previous}
    kept = record.get("firstKeptEntryIndex")
    if record.get("type") == "compaction" and isinstance(kept, int) and kept > 0:
        placed["firstKeptEntryId"] = f"#{kept}"
    return placed


def _header(info: SessionInfo, record: dict[str, Any]) -> None:
    if info.session_id is None and isinstance(record.get("id"), str):
        info.session_id = record["id"]
    if info.cwd is None and isinstance(record.get("cwd"), str):
        info.cwd = record["cwd"]
    info.add_version(f"format {_version(record)}")
    parent = record.get("parentSession", record.get("branchedFrom"))
    if info.parent_session_id is None and isinstance(parent, str) and parent:
        info.parent_session_id = parent_id(parent)


PI_FILE_NAME = re.compile(r"\d{4}-\d\d-\d\dT[\d-]+Z_(?P<id>[^/\\]+)\.jsonl$")
"""pi names a session file `<time>_<session id>.jsonl` (`/fork`, `/new` and the resume picker alike)."""


def parent_id(path: str) -> str | None:
    """The id of the session a header's `parentSession` (before 0.31 `branchedFrom`) names: pi records
    the parent's file path, named after its id; a file given its own name (`--session FILE`) is read
    for its header's id when it is still there."""
    named = PI_FILE_NAME.search(path)
    if named:
        return named["id"]
    try:
        if not Path(path).is_file():  # never a pipe or a device a header could name
            return None
        with open(path, "rb") as handle:
            header = json.loads(handle.readline(MAX_HEADER_BYTES))
    except (OSError, ValueError):
        return None
    found = header.get("id") if isinstance(header, dict) and header.get("type") == "session" else None
    return found if isinstance(found, str) and found else None


def _path_to(leaf: str, parents: dict[str, str | None]) -> set[str]:
    path: set[str] = set()
    current: str | None = leaf
    while current is not None and current not in path:
        path.add(current)
        current = parents.get(current)
    return path


def _entries(info: SessionInfo, record: dict[str, Any], entry_id: str | None) -> Iterator[Entry]:
    kind, time = record.get("type"), record.get("timestamp")
    if kind == "message" and isinstance(record.get("message"), dict):
        yield from _message(info, record["message"], time, entry_id)
    elif kind == "compaction":
        tokens = record.get("tokensBefore")
        kept = record.get("firstKeptEntryId")
        yield Compaction(
            _str(record.get("summary")),
            time,
            tokens if isinstance(tokens, int) else None,
            "extension" if record.get("fromHook") else None,
            kept if isinstance(kept, str) else None,
            entry_id,
        )
    elif kind == "branch_summary" and _str(record.get("summary")):
        yield UserMessage(
            f"Summary of an earlier branch of this conversation:\n{record['summary']}",
            time,
            "context",
            source_id=entry_id,
        )
    elif kind == "custom_message":
        yield UserMessage(content_text(record.get("content")), time, "context", source_id=entry_id)
    elif kind == "session_info" and _str(record.get("name")):
        info.title = record["name"]


def _message(
    info: SessionInfo, message: dict[str, Any], time: str | None, entry_id: str | None
) -> Iterator[Entry]:
    role = message.get("role")
    if role == "user":
        content = message.get("content")
        yield UserMessage(content_text(content), time, "prompt", _images(content), entry_id)
    elif role == "assistant":
        yield from _assistant(info, message, time, entry_id)
    elif role == "toolResult":
        yield ToolResult(
            str(message.get("toolCallId") or ""),
            content_text(message.get("content")),
            message.get("isError") is True,
            time,
            _str(message.get("toolName")),
            message.get("details"),
            entry_id,
        )
    elif role == "bashExecution":
        output = f"$ {message.get('command') or ''}\n{message.get('output') or ''}".rstrip()
        if message.get("excludeFromContext"):
            yield Notice("local", output, time, entry_id)
        else:
            yield UserMessage(f"I ran this command:\n{output}", time, "context", source_id=entry_id)
    elif role in CONTEXT_ROLES:
        text = _str(message.get("summary")) or content_text(message.get("content"))
        yield UserMessage(text, time, "context", source_id=entry_id)


def _assistant(
    info: SessionInfo, message: dict[str, Any], time: str | None, entry_id: str | None
) -> Iterator[Entry]:
    turn = AssistantTurn(time=time, source_id=entry_id)
    wire = SIGNED_THINKING.get(str(message.get("api")))
    for block in message.get("content") or [] if isinstance(message.get("content"), list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            turn.parts.append(Text(block["text"]))
        elif kind == "thinking":
            turn.parts.append(Reasoning(str(block.get("thinking") or "")))
            opaque = _signed(wire, block)
            if opaque is not None:
                turn.opaque.append(opaque)
        elif kind == "toolCall":
            turn.parts.append(
                ToolCall(str(block.get("id") or ""), str(block.get("name") or "tool"), block.get("arguments"))
            )
    provider, model = _str(message.get("provider")), _str(message.get("model"))
    served = f"{provider}/{model}" if provider and model else model
    turn.call = ModelCall(
        served,
        pi_usage(message.get("usage")),
        time,
        _str(message.get("responseId")),
        _str(message.get("stopReason")),
    )
    info.add_model(served)
    yield turn
    stop = message.get("stopReason")
    if stop in ("error", "aborted"):
        text = _str(message.get("errorMessage")) or (
            "The model call failed." if stop == "error" else "Aborted."
        )
        yield Notice(stop, text, time, entry_id)


def _signed(wire: str | None, block: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A thinking block's provider item: Anthropic's signature, or the Responses reasoning item pi
    stores as JSON text in `thinkingSignature`. Thinking Anthropic redacted (pi 0.55+: `redacted`, a
    placeholder text, the encrypted payload as its signature) goes back as the `redacted_thinking`
    block it came as: sent as signed thinking, the API refuses its signature."""
    signature = block.get("thinkingSignature")
    if not wire or not isinstance(signature, str) or not signature:
        return None
    if wire == "anthropic-messages" and block.get("redacted") is True:
        return wire, {"type": "redacted_thinking", "data": signature}
    if wire == "anthropic-messages":
        return wire, {"type": "thinking", "thinking": block.get("thinking") or "", "signature": signature}
    try:
        item = json.loads(signature)
    except ValueError:
        return None
    return (wire, item) if isinstance(item, dict) and item.get("type") == "reasoning" else None


def pi_usage(raw: Any) -> Usage | None:
    """pi's usage: `input` already excludes cache reads and writes; `cost.total` in US dollars."""
    if not isinstance(raw, dict):
        return None
    cost = raw.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    return Usage(
        _int(raw.get("input")),
        _int(raw.get("output")),
        _int(raw.get("cacheRead")),
        _int(raw.get("cacheWrite")),
        _int(raw.get("reasoning")),
        float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) else None,
    )


def content_text(content: Any) -> str:
    """Text content: a string, or the text blocks joined (images noted)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


def _images(content: Any) -> int:
    return (
        sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")
        if isinstance(content, list)
        else 0
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
