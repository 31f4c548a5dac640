"""Codex CLI sessions: rollouts in `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (and `archived_sessions/`).

The first Codex CLI (TypeScript, spring 2025) kept each session as one JSON document instead,
`~/.codex/sessions/rollout-YYYY-MM-DD-<id>.json`: `{"session": {"id", "timestamp", "instructions"},
"items": [response items]}`, rewritten whole as the session went on; it is read as a rollout whose
items have no envelope (and no token counts: it recorded none).

A rollout interleaves `response_item`s (what went to and came from the model), `event_msg`s (what
the CLI showed: typed prompts, token counts, task start and end), `turn_context` (the model of each
turn) and `compacted`. A model call is a `token_count` whose running total changed; the items the
model produced since the previous call are its turn. Codex's `input_tokens` include cached input:
the normalized `input` is the uncached part.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harnez.errors import SessionFormatError
from harnez.importers.base import Reader, SourceRef, StreamKey, file_ref
from harnez.importers.jsonl import MAX_RECORD_BYTES, MISSHAPEN, misshapen, records
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
    TurnMark,
    Usage,
    UserMessage,
    as_list,
)

HARNESS = "codex"
WIRE = "openai-responses"
CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
"""Response items that are tool calls, and the field holding their input."""
DEFAULT_NAMESPACE = "functions"
"""The namespace of Codex's own tools, which their names go without."""
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
BARE_ITEMS = frozenset({"message", "reasoning", *CALLS, *OUTPUTS})
IMAGE_INPUTS = ("image", "local_image", "input_image")
"""User input items that are images (a 0.158+ `item_completed` UserMessage's content)."""
TURN_EVENTS = {"task_started": "started", "task_complete": "completed", "turn_aborted": "aborted"}
INJECTED_KINDS = ("user_instructions", "environment_context", "browser_snapshot")
"""`user_message` events Codex wrote for text it injected itself (0.2x-0.3x: `kind`, beside `plain`)."""
REASONING_KEYS = ("type", "id", "summary", "content", "encrypted_content")
"""The fields of a reasoning item the Responses API takes back (Codex adds its own metadata)."""


class CodexReader(Reader):
    """Reads Codex rollout files."""

    harness = HARNESS

    def locate(self, home: Path) -> Iterator[SourceRef]:
        for folder in (home / ".codex" / "sessions", home / ".codex" / "archived_sessions"):
            if folder.is_dir():
                for path in sorted([*folder.rglob("rollout-*.jsonl"), *folder.rglob("rollout-*.json")]):
                    if path.suffix == ".jsonl" or is_json_rollout(path):
                        yield file_ref(HARNESS, path)

    def refs_for(self, path: Path) -> list[SourceRef]:
        return [file_ref(HARNESS, path)]

    def parse(
        self, ref: SourceRef, infos: dict[StreamKey, SessionInfo], *, strict: bool = False, full: bool = False
    ) -> Iterator[tuple[StreamKey, Entry]]:
        info = infos[None] = SessionInfo(HARNESS, str(ref.path))
        rollout = _Rollout(info)
        out = rollout.out
        backtracks = _Backtracks() if full else None
        source = (
            _json_rollout(ref.path, info, strict)
            if ref.path.suffix == ".json"
            else records(ref.path, info.integrity, strict=strict)
        )
        for record in source:
            try:
                rollout.feed(record)
            except MISSHAPEN as error:
                misshapen(ref.path, info.integrity, strict, error)
            if out:
                for entry in out:
                    if backtracks is not None:
                        backtracks.see(entry)
                    yield None, entry
                out.clear()
            if rollout.rolled_back:
                if backtracks is not None:
                    backtracks.roll_back(rollout.rolled_back)
                rollout.rolled_back = 0
        rollout.settle()
        for entry in out:
            yield None, entry
        if backtracks is not None:
            info.active_path = backtracks.kept()


class _Backtracks:
    """Turns Codex's backtracking (Esc Esc, to edit an earlier prompt: `thread_rolled_back`) took out
    of the model's history: the last N turns, each from the prompt that started it. They stay in the
    transcript (they happened); a continued session leaves them out, as Codex does. Entries get ids
    by position for that (`SessionInfo.active_path` holds the kept ones)."""

    def __init__(self) -> None:
        self.count = 0
        self.starts: list[int] = []
        self.dropped: list[tuple[int, int]] = []

    def see(self, entry: Entry) -> None:
        if not isinstance(entry, TurnMark):
            entry.source_id = f"#{self.count}"
        if isinstance(entry, UserMessage) and entry.kind in PROMPTS:
            self.starts.append(self.count)
        self.count += 1

    def roll_back(self, turns: int) -> None:
        if not self.starts:
            return
        cut = self.starts[-min(turns, len(self.starts))]
        self.starts = [start for start in self.starts if start < cut]
        self.dropped.append((cut, self.count))

    def kept(self) -> set[str] | None:
        if not self.dropped:
            return None
        return {f"#{n}" for n in range(self.count) if not any(a <= n < b for a, b in self.dropped)}


def is_json_rollout(path: Path) -> bool:
    """A rollout of the TypeScript Codex CLI: one JSON document with `session` and `items`."""
    if path.suffix != ".json":
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"session"' in head


def _json_rollout(path: Path, info: SessionInfo, strict: bool) -> Iterator[dict[str, Any]]:
    """The records of a TypeScript-era rollout: its `session` object (the bare first line of a
    rollout of that time), then its items. A file over `MAX_RECORD_BYTES` is one record too large
    to read: skipped unread, counted and named (its id taken from the file name)."""
    integrity = info.integrity
    size = path.stat().st_size
    if size > MAX_RECORD_BYTES:
        if strict:
            raise SessionFormatError(
                f"{path} is {size:,} bytes, longer than the {MAX_RECORD_BYTES:,} bytes Harnez reads "
                "as one record; run without --strict to skip and count such records."
            )
        integrity.records += 1
        integrity.unparsed_records += 1
        integrity.oversized_records.append((str(path), size))
        info.session_id = path.stem.split("-", 4)[-1] if path.stem.count("-") >= 4 else path.stem
        return
    try:
        document = json.loads(path.read_bytes())
    except ValueError:
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("session"), dict):
        if strict:
            raise SessionFormatError(f"{path} is not a Codex rollout Harnez can read (no `session` object).")
        integrity.records += 1
        integrity.unparsed_records += 1
        return
    items = document.get("items")
    integrity.records += 1
    yield {k: v for k, v in document["session"].items() if k != "type"}
    for number, item in enumerate(items if isinstance(items, list) else [], 1):
        integrity.records += 1
        integrity.line = number
        if isinstance(item, dict):
            yield item
        elif strict:
            raise SessionFormatError(f"Item {number} of {path} is not a JSON object.")
        else:
            integrity.unparsed_records += 1


def is_injected(text: str) -> bool:
    """A user-role item Codex wrote itself (environment context, AGENTS.md, instructions)."""
    stripped = text.lstrip()
    return stripped.startswith("<") or stripped.startswith("# AGENTS.md")


class _Rollout:
    """One pass over a rollout; each record's entries are appended to `out` (plain calls, no
    generator per record: this loop runs for every line of files of hundreds of megabytes)."""

    def __init__(self, info: SessionInfo) -> None:
        self.info = info
        self.out: list[Entry] = []
        self.model: str | None = None
        self.turn: AssistantTurn | None = None
        self.held: list[Entry] = []
        """Tool results that arrived while their turn was still waiting for its token count."""
        self.last_total: Any = None
        self.prompts: str | None = None
        """Where typed prompts come from, once known: `event` (event_msg/user_message), `item`
        (item_completed UserMessage, Codex 0.158+), or `response` (user response items)."""
        self.candidate: UserMessage | None = None
        """A user response item that is a prompt unless a prompt event for it follows."""
        self.trigger: Any = None
        """The `trigger_turn` of the agent message that comes next (its metadata line precedes it)."""
        self.rolled_back = 0
        """Turns a `thread_rolled_back` event just took out of the model's history."""

    def feed(self, record: dict[str, Any]) -> None:
        """Read one record; the entries it completes are appended to `out`."""
        kind, payload, time = record.get("type"), record.get("payload"), record.get("timestamp")
        self.info.span.see(time)
        if not isinstance(payload, dict):
            self._bare(record, kind, time)
            return
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context":
            self._context(payload)
        elif kind == "response_item":
            self._item(payload, time)
        elif kind == "event_msg":
            self._event(payload, time)
        elif kind == "compacted":
            self.settle()
            self.out.append(Compaction(_compaction_summary(payload), time))
        elif kind == "inter_agent_communication":
            self._from_agent(payload, payload.get("content"), time)
        elif kind == "inter_agent_communication_metadata":
            self.trigger = payload.get("trigger_turn")

    def _bare(self, record: dict[str, Any], kind: Any, time: str | None) -> None:
        """Rollouts written before the `type`/`payload` envelope (Codex of early 2025): a first line
        holding the session's id, then response items at the top level."""
        if kind is None and isinstance(record.get("id"), str) and self.info.session_id is None:
            self._meta(record)
        elif kind in BARE_ITEMS:
            self._item(record, time)

    # session facts ------------------------------------------------------------------------------

    def _meta(self, payload: dict[str, Any]) -> None:
        info = self.info
        info.add_version(payload.get("cli_version"))
        if info.session_id is not None:
            return
        info.session_id = payload.get("id") if isinstance(payload.get("id"), str) else None
        info.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        info.span.see(payload.get("timestamp"))
        source = payload.get("source")
        agent = source.get("subagent") if isinstance(source, dict) else None
        if isinstance(agent, str):
            info.agent_id = info.agent_type = agent
        elif isinstance(agent, dict):
            spawn = agent.get("thread_spawn")
            if isinstance(spawn, dict):
                info.parent_session_id = _str(spawn.get("parent_thread_id"))
                info.agent_id = _str(spawn.get("agent_nickname")) or _str(spawn.get("agent_path"))
                info.agent_type = _str(spawn.get("agent_role"))
            else:
                info.agent_id = info.agent_type = next(iter(agent), "sub-agent")
        _spawned(info, payload, spawn=isinstance(agent, dict))
        if info.parent_session_id is None:  # a fork (`/fork`, `codex fork`): the thread it was copied from
            info.parent_session_id = _str(payload.get("forked_from_id"))

    def _context(self, payload: dict[str, Any]) -> None:
        model = payload.get("model")
        if isinstance(model, str) and model:
            self.model = model
            self.info.add_model(model)
        if self.info.cwd is None and isinstance(payload.get("cwd"), str):
            self.info.cwd = payload["cwd"]

    # response items -----------------------------------------------------------------------------

    def _item(self, payload: dict[str, Any], time: str | None) -> None:
        kind = payload.get("type")
        if kind == "message":
            self._message(payload, time)
        elif kind == "reasoning":
            self._reasoning(payload, time)
        elif kind in CALLS:
            self._output_turn(time)
            name = payload.get("name") or ("local_shell" if kind == "local_shell_call" else "tool")
            self._add(
                ToolCall(
                    str(payload.get("call_id") or payload.get("id") or ""),
                    tool_name(payload.get("namespace"), str(name)),
                    _arguments(payload.get(CALLS[kind])),
                )
            )
        elif kind == "agent_message":
            self._from_agent(payload, payload.get("content"), time)
        elif kind in OUTPUTS:
            self._settle_prompt()
            result = ToolResult(
                str(payload.get("call_id") or ""),
                output_text(payload.get("output")),
                _failed(payload.get("output")),
                time,
            )
            if self.turn is not None:
                self.held.append(result)
            else:
                self.out.append(result)

    def _message(self, payload: dict[str, Any], time: str | None) -> None:
        role, text = payload.get("role"), message_text(payload.get("content"))
        images = _images(payload.get("content"))
        envelope = _envelope(text) if role == "assistant" else None
        if envelope is not None:
            self._from_agent(envelope, envelope.get("content"), time)
        elif role == "assistant":
            self._output_turn(time)
            self._add(Text(text))
        elif role == "user" and not is_injected(text) and self.prompts in (None, "response"):
            self._settle_prompt()
            self.candidate = UserMessage(text, time, "prompt", images)
        elif role in ("user", "developer", "system"):
            self._beside(UserMessage(text, time, "meta", images))

    def _beside(self, message: UserMessage) -> None:
        """A message that starts no turn: it follows a turn still waiting for its token count."""
        self._settle_prompt()
        (self.held if self.turn is not None else self.out).append(message)

    def _from_agent(self, sender: dict[str, Any], content: Any, time: str | None) -> None:
        """A message another agent of the session sent this one (Codex multi-agent v2: the task a
        sub-agent is given, a sub-agent's report to its parent)."""
        trigger, self.trigger = self.trigger, None
        if isinstance(sender.get("trigger_turn"), bool):
            trigger = sender["trigger_turn"]
        self._sent(_str(sender.get("author")), agent_text(content), trigger, time)

    def _sent(self, sender: str | None, text: str, trigger: Any, time: str | None) -> None:
        """A message sent to the session by another agent or a program (a timer, `codex message`):
        it starts a turn as a prompt does, not counted among the typed prompts; one that arrived
        while the model worked, or that said it triggers no turn, is read by the model with its next
        request (context)."""
        text = f"Message from {sender}:\n{text}" if sender else text
        if trigger is False or self.turn is not None:
            self._beside(UserMessage(text, time, "context"))
            return
        self.settle()
        self.out.append(UserMessage(text, time, "agent"))

    def _reasoning(self, payload: dict[str, Any], time: str | None) -> None:
        self._output_turn(time)
        summary = as_list(payload.get("summary"))
        texts: list[str] = [
            s["text"] for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)
        ]
        texts += [
            c["text"]
            for c in as_list(payload.get("content"))
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        ]
        self._add(Reasoning("\n\n".join(texts)))
        if payload.get("encrypted_content") and payload.get("id") and self.turn is not None:
            self.turn.opaque.append((WIRE, {k: payload[k] for k in REASONING_KEYS if k in payload}))

    def _output_turn(self, time: str | None) -> None:
        """Open the turn new model output joins; output after a tool's result starts the next turn."""
        self._settle_prompt()
        if self.turn is not None and self.held:
            self.out.append(self._closed_turn(None))
            self.out.extend(self.held)
            self.held = []
        if self.turn is None:
            self.turn = AssistantTurn(time=time)

    def _add(self, part: Text | Reasoning | ToolCall) -> None:
        if self.turn is not None:
            self.turn.parts.append(part)

    def _closed_turn(self, call: ModelCall | None) -> AssistantTurn:
        turn = self.turn or AssistantTurn(time=call.time if call else None)
        turn.call = call
        self.turn = None
        return turn

    # events -------------------------------------------------------------------------------------

    def _event(self, payload: dict[str, Any], time: str | None) -> None:
        kind = payload.get("type")
        if kind == "user_message" and payload.get("kind") in INJECTED_KINDS:
            self._beside(UserMessage(_str(payload.get("message")) or "", time, "meta"))
        elif kind == "user_message":
            images = len(as_list(payload.get("images"))) + len(as_list(payload.get("local_images")))
            self._typed(_str(payload.get("message")) or "", time, "event", images)
        elif kind == "item_completed":
            item = payload.get("item")
            if isinstance(item, dict) and item.get("type") == "UserMessage" and self.prompts != "event":
                content = as_list(item.get("content"))
                images = sum(1 for c in content if isinstance(c, dict) and c.get("type") in IMAGE_INPUTS)
                self._typed(message_text(content), time, "item", images)
        elif kind == "thread_rolled_back" and _int(payload.get("num_turns")):
            self.settle()
            self.rolled_back = max(0, payload["num_turns"])
        elif kind == "injected_message":
            self._sent(_str(payload.get("source")), _str(payload.get("content")) or "", None, time)
        elif kind == "token_count":
            self._token_count(payload, time)
        elif kind in TURN_EVENTS:
            self.settle()
            if kind == "turn_aborted":
                self.out.append(
                    Notice("aborted", f"Turn aborted ({payload.get('reason') or 'interrupted'}).", time)
                )
            self.out.append(TurnMark(TURN_EVENTS[kind], time))
        elif kind == "error":
            self.settle()
            self.out.append(Notice("error", _str(payload.get("message")) or "Codex reported an error.", time))
        elif kind == "thread_name_updated" and _str(payload.get("thread_name")):
            self.info.title = payload["thread_name"]
        elif kind == "entered_review_mode" and time is not None:
            self.info.review_starts.append(time)

    def _typed(self, text: str, time: str | None, source: str, images: int) -> None:
        """A typed prompt from an event: it replaces the response item holding the same prompt."""
        self.prompts = source
        self.candidate = None
        self.settle()
        self.out.append(UserMessage(text, time, "prompt", images))

    def _token_count(self, payload: dict[str, Any], time: str | None) -> None:
        info = payload.get("info")
        if not isinstance(info, dict) or not isinstance(info.get("total_token_usage"), dict):
            return
        total = info["total_token_usage"]
        if total == self.last_total:
            return
        last = info.get("last_token_usage")
        usage = codex_usage(last if isinstance(last, dict) else _difference(total, self.last_total))
        self.last_total = total
        self._settle_prompt()
        self.out.append(self._closed_turn(ModelCall(self.model, usage, time)))
        self.out.extend(self.held)
        self.held = []

    def _settle_prompt(self) -> None:
        if self.candidate is not None:
            self.prompts = self.prompts or "response"
            self.out.append(self.candidate)
            self.candidate = None

    def settle(self) -> None:
        """Close what is open: a pending prompt, a turn that got no token count, held results."""
        self._settle_prompt()
        if self.turn is not None:
            self.out.append(self._closed_turn(None))
        self.out.extend(self.held)
        self.held = []


def _spawned(info: SessionInfo, payload: dict[str, Any], *, spawn: bool) -> None:
    """A spawned sub-agent as recent Codex records it: `parent_thread_id`, `agent_nickname`,
    `agent_role` (`agent_type` in the versions that named it so) and `agent_path` at the top of
    `session_meta`, beside or instead of `source.subagent.thread_spawn` (whose `source` may then be
    a plain string). What the spawn object left out is taken from there."""
    parent = _str(payload.get("parent_thread_id"))
    if not spawn and parent is None:
        return
    info.parent_session_id = info.parent_session_id or parent
    info.agent_id = (
        info.agent_id or _str(payload.get("agent_nickname")) or _str(payload.get("agent_path")) or "sub-agent"
    )
    info.agent_type = info.agent_type or _str(payload.get("agent_role")) or _str(payload.get("agent_type"))


def tool_name(namespace: Any, name: str) -> str:
    """A call's tool as Codex names it where the namespace cannot travel apart: `mcp__github` and
    `get_me` are `mcp__github__get_me` (one `__` between, however many underscores either side
    brought), so two MCP servers' tools of one name stay apart; the default namespace, `functions`,
    is left out, as Codex does."""
    if not isinstance(namespace, str) or namespace in ("", DEFAULT_NAMESPACE):
        return name
    return f"{namespace.rstrip('_')}__{name.lstrip('_')}"


def codex_usage(raw: dict[str, Any]) -> Usage:
    """Codex token usage: input includes cached input (taken out here); output includes reasoning."""
    cached = _int(raw.get("cached_input_tokens"))
    given = _int(raw.get("input_tokens"))
    return Usage(
        None if given is None else given - (cached or 0),
        _int(raw.get("output_tokens")),
        cached,
        _int(raw.get("cache_write_input_tokens")),
        _int(raw.get("reasoning_output_tokens")),
    )


def _difference(total: dict[str, Any], previous: Any) -> dict[str, Any]:
    before = previous if isinstance(previous, dict) else {}
    return {k: v - (before.get(k) or 0) for k, v in total.items() if isinstance(v, int)}


def message_text(content: Any) -> str:
    """The text of a message's content items (`input_text`, `output_text`, `text`)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))


def agent_text(content: Any) -> str:
    """The text of an agent message: a string (`inter_agent_communication`), or content items whose
    encrypted parts only the model's server can read (noted)."""
    if isinstance(content, str):
        return content
    items = [c for c in as_list(content) if isinstance(c, dict)]
    texts = [c["text"] for c in items if isinstance(c.get("text"), str)]
    if any(c.get("type") == "encrypted_content" for c in items):
        texts.append("[encrypted content not imported]")
    return "\n".join(texts)


def _envelope(text: str) -> dict[str, Any] | None:
    """An inter-agent message written as an assistant message holding its JSON (`author`,
    `recipient`, `content`, …): how Codex recorded one before `agent_message` items."""
    if not text.startswith("{") or '"recipient"' not in text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict) and {"author", "recipient", "content"} <= value.keys():
        return value
    return None


def output_text(output: Any) -> str:
    """A tool output as the model saw it: text as is, JSON `{"output": …}` unwrapped, content items joined."""
    if isinstance(output, str):
        if output.startswith('{"output"'):
            try:
                parsed = json.loads(output)
            except ValueError:
                return output
            if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
                return parsed["output"]
        return output
    if isinstance(output, dict) and isinstance(output.get("text"), str):
        return output["text"]
    if isinstance(output, dict) and isinstance(output.get("content"), (str, list)):
        return output_text(output["content"])
    if isinstance(output, list):
        return message_text(output)
    return "" if output is None else json.dumps(output, ensure_ascii=False)


def _failed(output: Any) -> bool:
    if isinstance(output, dict):
        return output.get("success") is False
    return False


def _arguments(raw: Any) -> Any:
    """Function-call arguments are JSON text: parsed when they parse, else kept as text."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _compaction_summary(payload: dict[str, Any]) -> str | None:
    """The summary a compaction left: its `message`, else (a remote compaction, whose summary is an
    encrypted `compaction` item) the messages its replacement history kept, without the instructions
    and environment context Codex puts back in front of them."""
    message = _str(payload.get("message"))
    if message:
        return message
    texts = [
        message_text(item.get("content"))
        for item in as_list(payload.get("replacement_history"))
        if isinstance(item, dict) and item.get("role") in ("user", "assistant")
    ]
    return "\n\n".join(t for t in texts if t and not is_injected(t)) or None


def _images(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for c in content if isinstance(c, dict) and c.get("type") == "input_image")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
