"""Claude Code sessions: `~/.claude/projects/<project>/<session>.jsonl`, sub-agents beside them
(Claude Code 1.0.29-1.0.3x wrote them under `~/.config/claude/projects/` instead: both are searched).

Layouts: 2.1+ keeps each sub-agent in `<session>/subagents/agent-<id>.jsonl` (with an optional
`agent-<id>.meta.json`); 2.0 keeps them flat as `agent-<id>.jsonl` in the project folder (records
carry the parent's `sessionId`); 1.x writes them inline in the session file (`isSidechain: true`).
One model response is written as several `assistant` lines (one per content block) sharing
`message.id` and `requestId`: they are merged into one turn and its usage is the last line's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harnez.importers.base import Reader, SourceRef, StreamKey, file_ref
from harnez.importers.jsonl import MISSHAPEN, misshapen, records
from harnez.importers.normalized import (
    PROMPTS,
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
    as_object,
)

HARNESS = "claude-code"
WIRE = "anthropic-messages"
LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>", "<bash-stderr>")
"""User-side records holding the output of a local command (`/exit`, `! ls`): the harness answered
it without the model, so they are `local` notices, not prompts."""
CAVEAT = "<local-command-caveat>"
INTERRUPTED = "[Request interrupted by user"
SYNTHETIC_MODEL = "<synthetic>"
"""The model name of the stand-in message Claude Code writes when an API call failed."""
SERVER_TOOL_BLOCKS = ("server_tool_use", "mcp_tool_use")
"""Tools the API ran itself (web search, web fetch, code execution, MCP connector): the call and its
result are both in the assistant's content, so neither is a tool call of the session (nothing answers
it in a user record, and the counting rules count `tool_use` blocks). Both are kept as provider
items: replayed on Anthropic's wire, where the call must stay beside its result."""
TITLE_RECORDS = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
"""Record types naming the session, in order of preference."""


class ClaudeCodeReader(Reader):
    """Reads Claude Code's JSONL session files."""

    harness = HARNESS

    def locate(self, home: Path) -> Iterator[SourceRef]:
        for projects in (home / ".claude" / "projects", home / ".config" / "claude" / "projects"):
            if not projects.is_dir():
                continue
            for project in sorted(p for p in projects.iterdir() if p.is_dir()):
                for path in sorted(project.glob("*.jsonl")):
                    yield file_ref(HARNESS, path, subagent=is_subagent_file(path))
                for path in sorted(project.glob("*/subagents/*.jsonl")):
                    yield file_ref(HARNESS, path, subagent=True)

    def refs_for(self, path: Path) -> list[SourceRef]:
        return [file_ref(HARNESS, path, subagent=is_subagent_file(path))]

    def parse(
        self, ref: SourceRef, infos: dict[StreamKey, SessionInfo], *, strict: bool = False, full: bool = False
    ) -> Iterator[tuple[StreamKey, Entry]]:
        main = SessionInfo(HARNESS, str(ref.path))
        infos[None] = main
        if ref.subagent:
            _describe_subagent(main, ref.path)
        yield from _FileParse(ref, main, infos, full).run(strict)


class _Branches:
    """Claude Code's rewind (Esc Esc to edit an earlier prompt, `/rewind`) keeps the abandoned
    conversation in the file: the new prompt's `parentUuid` names a record before it, and the records
    between the two are a branch the model no longer sees. They stay in the transcript (they happened);
    a continued session leaves them out (`SessionInfo.active_path`, the kept records' `uuid`s)."""

    def __init__(self) -> None:
        self.positions: dict[str, int] = {}
        self.abandoned: list[tuple[int, int]] = []

    def see(self, record: dict[str, Any], entries: list[Entry]) -> None:
        uuid, parent = record.get("uuid"), record.get("parentUuid")
        if not isinstance(uuid, str):
            return
        here = self.positions.setdefault(uuid, len(self.positions))
        prompt = any(
            isinstance(e, UserMessage) and e.kind in PROMPTS and e.source_id == uuid for e in entries
        )
        since = self.positions.get(parent) if prompt and isinstance(parent, str) else None
        if since is not None and since < here - 1:
            self.abandoned.append((since, here))

    def kept(self) -> set[str] | None:
        if not self.abandoned:
            return None
        return {uuid for uuid, at in self.positions.items() if not any(a < at < b for a, b in self.abandoned)}


def is_subagent_file(path: Path) -> bool:
    """A sub-agent's own file: under `subagents/`, or a flat `agent-*.jsonl` (2.0)."""
    return path.parent.name == "subagents" or path.name.startswith("agent-")


def _describe_subagent(info: SessionInfo, path: Path) -> None:
    """The agent id and parent from the layout, and the agent type from its `.meta.json`."""
    info.agent_id = path.stem[len("agent-") :] if path.stem.startswith("agent-") else path.stem
    if path.parent.name == "subagents":
        info.parent_session_id = path.parent.parent.name
        meta = path.with_name(path.stem + ".meta.json")
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("agentType"), str):
            info.agent_type = data["agentType"]


class _FileParse:
    """One pass over a session file; inline sidechains (1.x) become conversations of their own."""

    def __init__(
        self, ref: SourceRef, main: SessionInfo, infos: dict[StreamKey, SessionInfo], full: bool = False
    ) -> None:
        self.ref, self.main, self.infos = ref, main, infos
        self.branches = _Branches() if full else None
        self.streams: dict[StreamKey, _Conversation] = {None: _Conversation(main)}
        self.roots: dict[str, str] = {}
        """uuid → root uuid of each inline sidechain record."""
        self.titles: dict[str, str] = {}
        self.ids: dict[str, None] = {}
        """The `sessionId`s the records carry, in the order they first appear."""
        self.starts: dict[str, int] = {}
        """How many entries of the file's own conversation come before each `sessionId`'s first record."""

    def run(self, strict: bool) -> Iterator[tuple[StreamKey, Entry]]:
        integrity = self.main.integrity
        main, yielded = self.streams[None], 0
        for record in records(self.ref.path, integrity, strict=strict):
            session = record.get("sessionId")
            if isinstance(session, str) and session not in self.ids:
                self.starts[session] = yielded + main.pending()
            try:
                key = self._stream_key(record)
                conversation = self._conversation(key, record)
                self._note(conversation.info, record, main=key is None)
                entries = list(conversation.feed(record))
            except MISSHAPEN as error:
                misshapen(self.ref.path, integrity, strict, error)
                continue
            if key is None and self.branches is not None:
                self.branches.see(record, entries)
            for entry in entries:
                yield key, entry
            yielded += len(entries) if key is None else 0
        for key, conversation in self.streams.items():
            for entry in conversation.finish():
                yield key, entry
        if self.branches is not None:
            self.main.active_path = self.branches.kept()
        self.main.title = next((self.titles[k] for k in TITLE_RECORDS if k in self.titles), None)
        if not self.ref.subagent:
            self._own_id()

    def _own_id(self) -> None:
        """A resumed session's file starts with the records of the session it resumed, copied with
        their `sessionId` (and a file may go on under a newer one): the file is one session, the one
        its name gives (`<sessionId>.jsonl`, the id Claude Code resumes it by) when its records carry
        it, else the first recorded; the id recorded just before that one first appears is the
        session it resumed, its parent, and the entries before its own first record the copy
        (`SessionInfo.copied`)."""
        ids = list(self.ids)
        own = self.ref.path.stem if self.ref.path.stem in self.ids else (ids[0] if ids else None)
        if own is None:
            return
        self.main.session_id = own
        at = ids.index(own)
        self.main.parent_session_id = ids[at - 1] if at > 0 else None
        self.main.copied = self.starts.get(own, 0) if at > 0 else 0
        for info in self.infos.values():
            if info is not self.main:
                info.parent_session_id = own

    def _stream_key(self, record: dict[str, Any]) -> StreamKey:
        if self.ref.subagent or record.get("isSidechain") is not True:
            return None
        uuid, parent = record.get("uuid"), record.get("parentUuid")
        root = self.roots.get(parent) if isinstance(parent, str) else None
        root = root or (uuid if isinstance(uuid, str) else "sidechain")
        if isinstance(uuid, str):
            self.roots[uuid] = root
        return root

    def _conversation(self, key: StreamKey, record: dict[str, Any]) -> _Conversation:
        conversation = self.streams.get(key)
        if conversation is None:
            agent = record.get("agentId")
            info = SessionInfo(
                HARNESS,
                str(self.ref.path),
                agent_id=agent if isinstance(agent, str) else f"sidechain-{len(self.streams)}",
                agent_type="sidechain",
            )
            self.infos[key] = info
            conversation = self.streams[key] = _Conversation(info)
        if key is not None:
            conversation.info.integrity.records += 1
            conversation.info.parent_session_id = self.main.session_id
        return conversation

    def _note(self, info: SessionInfo, record: dict[str, Any], *, main: bool) -> None:
        """Ids, folder, versions, times and titles, from any record."""
        kind = record.get("type")
        if kind in TITLE_RECORDS and main:
            title = record.get(TITLE_RECORDS[kind])
            if isinstance(title, str) and title.strip():
                self.titles[kind] = title.strip()  # the newest of each kind wins (a later rename)
        session = record.get("sessionId")
        if isinstance(session, str) and session:
            self.ids.setdefault(session)
            if info.session_id is None:
                info.session_id = session
        agent = record.get("agentId")
        if isinstance(agent, str) and self.ref.subagent and main:
            info.agent_id = agent
        cwd = record.get("cwd")
        if isinstance(cwd, str) and info.cwd is None:
            info.cwd = cwd
        info.add_version(record.get("version"))
        info.span.see(record.get("timestamp"))
        if self.ref.subagent and main and info.parent_session_id is None and info.session_id:
            info.parent_session_id = info.session_id  # 2.0 flat layout: the records carry the parent's id


class _Response:
    """The lines of one model response, merged."""

    def __init__(self, key: tuple[Any, Any], record: dict[str, Any], message: dict[str, Any]) -> None:
        self.key = key
        self.sealed = False
        """No later line joins it (a tool result came in and the response has no requestId)."""
        self.turn = AssistantTurn(time=record.get("timestamp"), source_id=record.get("uuid"))
        self.model = message.get("model")
        self.usage: dict[str, Any] | None = None
        self.stop: str | None = None
        self.tool_ids: set[str] = set()

    def add(self, message: dict[str, Any]) -> None:
        usage = message.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        if isinstance(message.get("stop_reason"), str):
            self.stop = message["stop_reason"]
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict):
                self._block(block)

    def _block(self, block: dict[str, Any]) -> None:
        kind, turn = block.get("type"), self.turn
        if kind == "text" and isinstance(block.get("text"), str):
            turn.parts.append(Text(block["text"]))
        elif kind == "thinking":
            turn.parts.append(Reasoning(str(block.get("thinking") or "")))
            if block.get("signature"):
                turn.opaque.append(
                    (
                        WIRE,
                        {
                            "type": "thinking",
                            "thinking": block.get("thinking") or "",
                            "signature": block["signature"],
                        },
                    )
                )
        elif kind == "redacted_thinking" or kind in SERVER_TOOL_BLOCKS or _is_server_result(kind):
            turn.opaque.append((WIRE, dict(block)))
        elif kind == "tool_use":
            call_id = str(block.get("id") or "")
            if not call_id or call_id not in self.tool_ids:
                self.tool_ids.add(call_id)
                turn.parts.append(ToolCall(call_id, str(block.get("name") or "tool"), block.get("input")))

    def finish(self) -> AssistantTurn:
        model = self.model if isinstance(self.model, str) else None
        self.turn.call = ModelCall(
            model,
            claude_usage(self.usage),
            self.turn.time,
            self.key[0] if isinstance(self.key[0], str) else None,
            self.stop,
        )
        return self.turn


def _is_server_result(kind: Any) -> bool:
    """A server tool's result block (`web_search_tool_result`, `web_fetch_tool_result`,
    `code_execution_tool_result`, `mcp_tool_result`, …): it comes in the assistant's own content."""
    return isinstance(kind, str) and kind.endswith("_tool_result")


def claude_usage(raw: dict[str, Any] | None) -> Usage | None:
    """Anthropic usage: `input_tokens` already excludes cache reads and writes."""
    if not isinstance(raw, dict):
        return None
    details = raw.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
    return Usage(
        _int(raw.get("input_tokens")),
        _int(raw.get("output_tokens")),
        _int(raw.get("cache_read_input_tokens")),
        _int(raw.get("cache_creation_input_tokens")),
        _int(thinking),
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Conversation:
    """The state of one conversation: the response being written, and what arrived meanwhile."""

    def __init__(self, info: SessionInfo) -> None:
        self.info = info
        self.open: _Response | None = None
        self.held: list[Entry] = []
        """Entries that arrived while a response was open; they follow it."""
        self.compaction: Compaction | None = None
        """A compact boundary waiting for its summary record."""
        self.result_ids: set[str] = set()
        self.queued: set[str] = set()
        """`source_uuid`s and `uuid`s of the queued prompts read (Claude Code writes one again when it
        saves its queue again, with the same ids)."""
        self.prompt_ids: set[str] = set()
        """`uuid`s of the prompts read: a queued prompt naming one (`source_uuid`) is that prompt."""
        self.held_queued: list[tuple[UserMessage, str | None]] = []
        """Queued prompts waiting in `held`, with their `source_uuid`."""

    def feed(self, record: dict[str, Any]) -> Iterator[Entry]:
        kind = record.get("type")
        if kind == "assistant":
            yield from self._assistant(record)
        elif kind == "user":
            yield from self._user(record)
        elif kind == "system":
            yield from self._system(record)
        elif kind == "attachment":
            yield from self._attachment(record)

    def pending(self) -> int:
        """How many entries read are still held back (the open response, what arrived meanwhile): they
        come out before anything a later record adds."""
        waiting = self.compaction is not None and self.open is None
        return int(waiting) + int(self.open is not None) + len(self.held)

    def finish(self) -> Iterator[Entry]:
        yield from self._close()
        if self.compaction is not None:
            yield self.compaction
            self.compaction = None

    def _close(self) -> Iterator[Entry]:
        if self.compaction is not None and self.open is None:
            yield self.compaction
            self.compaction = None
        if self.open is not None:
            yield self.open.finish()
            self.open = None
        yield from self.held
        self.held = []
        self.held_queued = []

    def _emit(self, entry: Entry) -> Iterator[Entry]:
        """An entry that does not end the open response: it follows the response."""
        if self.open is not None:
            self.held.append(entry)
        else:
            yield from self._close()
            yield entry

    def _assistant(self, record: dict[str, Any]) -> Iterator[Entry]:
        message = record.get("message")
        if not isinstance(message, dict):
            return
        if message.get("model") == SYNTHETIC_MODEL or record.get("isApiErrorMessage"):
            yield from self._close()
            yield Notice(
                "error",
                content_text(message.get("content")) or "The API call failed.",
                record.get("timestamp"),
            )
            return
        key = (message.get("id"), record.get("requestId"))
        current = self.open
        if current is None or current.sealed or current.key != key or key == (None, None):
            yield from self._close()
            current = self.open = _Response(key, record, message)
        current.add(message)

    def _user(self, record: dict[str, Any]) -> Iterator[Entry]:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        time = record.get("timestamp")
        if record.get("isCompactSummary"):
            compaction = self.compaction or Compaction(time=time)
            self.compaction = None
            yield from self._close()
            compaction.summary = content_text(content)
            yield compaction
            return
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            yield from self._result(block, record)
        texts = [
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        images = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "image")
        documents = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "document")
        if texts or images:
            yield from self._said("\n".join(texts), images, record, bool(results), documents)
        elif documents and not results:
            yield from self._attached(documents, record)

    def _said(
        self, text: str, images: int, record: dict[str, Any], with_results: bool, documents: int = 0
    ) -> Iterator[Entry]:
        time = record.get("timestamp")
        if text.startswith(INTERRUPTED):
            yield from self._close()
            yield Notice("aborted", text, time)
            return
        if text.startswith(LOCAL_OUTPUT):
            yield from self._emit(Notice("local", text, time))
            return
        meta = bool(record.get("isMeta")) or with_results or text.startswith(CAVEAT)
        entry = UserMessage(text, time, "meta" if meta else "prompt", images, record.get("uuid"), documents)
        if meta:
            yield from self._emit(entry)
            return
        self._drop_queued_copy(entry)
        yield from self._close()
        yield entry

    def _drop_queued_copy(self, prompt: UserMessage) -> None:
        """A prompt that a queued prompt still waiting to be placed already said (its `source_uuid`
        names this record, or no model response came between the two and the text is the same): the
        prompt is kept (it is the counted one), the queued copy goes."""
        if prompt.source_id:
            self.prompt_ids.add(prompt.source_id)
        for queued, source in self.held_queued:
            if (source is not None and source == prompt.source_id) or queued.text == prompt.text:
                self.held = [entry for entry in self.held if entry is not queued]

    def _attached(self, documents: int, record: dict[str, Any]) -> Iterator[Entry]:
        """A prompt of documents only (a PDF sent without a word): a task in the transcript, the
        documents noted, but not a counted prompt (the counting rules count text and images)."""
        if record.get("isMeta"):
            yield from self._emit(UserMessage("", record.get("timestamp"), "meta", documents=documents))
            return
        yield from self._close()
        yield UserMessage(
            "", record.get("timestamp"), "attachment", source_id=record.get("uuid"), documents=documents
        )

    def _result(self, block: dict[str, Any], record: dict[str, Any]) -> Iterator[Entry]:
        call_id = block.get("tool_use_id")
        call_id = call_id if isinstance(call_id, str) else ""
        if call_id in self.result_ids:
            return
        self.result_ids.add(call_id)
        if self.open is not None and self.open.key[1] is None:
            self.open.sealed = True
        yield from self._emit(
            ToolResult(
                call_id,
                content_text(block.get("content")),
                block.get("is_error") is True,
                record.get("timestamp"),
                details=record.get("toolUseResult"),
                source_id=record.get("uuid") if isinstance(record.get("uuid"), str) else None,
            )
        )

    def _attachment(self, record: dict[str, Any]) -> Iterator[Entry]:
        """A prompt typed while the model was working (2.x `queued_command`, its text a string or
        text and image blocks): the model read it with its next request, so it is context (not one
        of the counted prompts, not meta). Read once: a copy with the same `source_uuid` or `uuid`
        (Claude Code saves its queue again), or one naming a prompt already read, is left out."""
        attachment = as_object(record.get("attachment"))
        if attachment.get("type") != "queued_command":
            return
        source = attachment.get("source_uuid") if isinstance(attachment.get("source_uuid"), str) else None
        ids = {i for i in (source, record.get("uuid")) if isinstance(i, str) and i}
        if ids & self.queued or source in self.prompt_ids:
            return
        self.queued |= ids
        prompt = attachment.get("prompt")
        blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
        if not isinstance(blocks, list):
            return
        text = "\n".join(
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        images = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "image")
        if text or images:
            entry = UserMessage(
                text, record.get("timestamp"), "context", images, source_id=record.get("uuid")
            )
            self.held_queued.append((entry, source))
            yield from self._emit(entry)

    def _system(self, record: dict[str, Any]) -> Iterator[Entry]:
        subtype, time = record.get("subtype"), record.get("timestamp")
        if subtype == "compact_boundary":
            yield from self._close()
            if self.compaction is not None:
                yield self.compaction
            meta = as_object(record.get("compactMetadata"))
            self.compaction = Compaction(
                time=time,
                tokens_before=_int(meta.get("preTokens")),
                trigger=meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
            )
        elif subtype in ("api_error", "error"):
            yield from self._close()
            yield Notice("error", _error_text(record), time)


def content_text(content: Any) -> str:
    """The text of message content: a string, or text blocks joined (images noted, nested results flattened)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") in ("image", "document"):
                parts.append(f"[{block['type']}]")
            elif "content" in block:
                parts.append(content_text(block["content"]))
    return "\n".join(parts)


def _error_text(record: dict[str, Any]) -> str:
    error = record.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    attempt, most = record.get("retryAttempt"), record.get("maxRetries")
    retry = (
        f" (attempt {attempt} of {most})"
        if isinstance(attempt, int) and isinstance(most, int) and most
        else ""
    )
    text = message if isinstance(message, str) else record.get("content")
    return (text if isinstance(text, str) and text else "The API call failed") + retry
