"""The normalized session every importer reads into, and the tally that summarises one in one pass.

A reader turns a harness's records into a stream of *entries* (user messages, assistant turns,
tool results, compactions, notices, turn marks) plus a `SessionInfo` it fills as it goes. The same
stream feeds a `Tally` (the summary, constant memory) or is kept whole (`Session`, full fidelity).
Nothing here imports the store or the wires: readers stay pure and fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

HARNESSES = ("claude-code", "codex", "opencode", "pi")
ENDINGS = ("completed", "error", "aborted", "open")


@dataclass(slots=True)
class Usage:
    """Tokens of a model call as the harness recorded them; None = not recorded (never a made-up 0).

    `input` excludes cache reads and writes, which have their own fields. `cost` is in US dollars,
    only when the harness recorded one.
    """

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    cost: float | None = None

    def add(self, other: Usage) -> None:
        """Add another call's usage in place; a field stays None only while nobody reported it."""
        for name in ("input", "output", "cache_read", "cache_write", "reasoning", "cost"):
            theirs = getattr(other, name)
            if theirs is not None:
                mine = getattr(self, name)
                setattr(self, name, theirs if mine is None else mine + theirs)

    def to_json(self) -> dict[str, Any]:
        cost = None if self.cost is None else round(self.cost, 10)
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "reasoning": self.reasoning,
            "cost": cost,
        }


@dataclass(slots=True)
class ModelCall:
    """One call to a model: the model that served it (from the response or the session record) and its usage."""

    model: str | None
    usage: Usage | None
    time: str | None = None
    response_id: str | None = None
    stop_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "usage": self.usage.to_json() if self.usage else None,
            "time": self.time,
            "response_id": self.response_id,
            "stop_reason": self.stop_reason,
        }


PROMPTS = ("prompt", "attachment", "agent")
"""User message kinds that start a task of their own in the transcript."""


@dataclass(slots=True)
class UserMessage:
    """Something said on the user's side. `kind`: `prompt` (typed or sent as the task, counted; slash
    commands included), `attachment` (a prompt of attachments only, no text: a task like a prompt,
    not counted, as the harness's counting rules leave it out: a Claude Code PDF alone), `agent` (a
    message another agent or a program sent that started a turn, Codex multi-agent messages and
    timers: a task like a prompt, not counted), `context`
    (read by the model, not a counted prompt: pi extension messages, Claude Code queued prompts) or
    `meta` (injected by the harness: reminders, environment context, caveats). `images` and
    `documents` count what it carried that is not imported."""

    text: str
    time: str | None = None
    kind: str = "prompt"
    images: int = 0
    source_id: str | None = None
    documents: int = 0

    @property
    def shown_text(self) -> str:
        """The text, with the attachments that were not imported noted."""
        notes = [f"[{self.images} image(s) not imported]"] if self.images else []
        notes += [f"[{self.documents} document(s) not imported]"] if self.documents else []
        return "\n".join([self.text, *notes]) if self.text else "\n".join(notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "user",
            "kind": self.kind,
            "text": self.text,
            "images": self.images,
            "documents": self.documents,
            "time": self.time,
        }


@dataclass(slots=True)
class ToolCall:
    """A tool call the model made; `arguments` is the input as recorded (an object, or text for freeform tools)."""

    id: str
    name: str
    arguments: Any

    def to_json(self) -> dict[str, Any]:
        return {"type": "tool_call", "id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(slots=True)
class Text:
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(slots=True)
class Reasoning:
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "reasoning", "text": self.text}


Part = Text | Reasoning | ToolCall


@dataclass(slots=True)
class AssistantTurn:
    """What the model produced in one response, in order; `call` is None when the harness recorded no
    model call for it. `opaque` holds provider items kept verbatim as (wire, item): signed thinking,
    encrypted reasoning — replayable only on that wire."""

    parts: list[Part] = field(default_factory=list)
    call: ModelCall | None = None
    time: str | None = None
    opaque: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    source_id: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def reasoning(self) -> str:
        return "\n\n".join(p.text for p in self.parts if isinstance(p, Reasoning))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "assistant",
            "parts": [p.to_json() for p in self.parts],
            "call": self.call.to_json() if self.call else None,
            "time": self.time,
            "opaque": [{"wire": wire, "item": item} for wire, item in self.opaque],
        }


@dataclass(slots=True)
class ToolResult:
    """The result of a tool call, as the model saw it; `details` keeps the harness's richer record."""

    call_id: str
    content: str
    is_error: bool = False
    time: str | None = None
    name: str | None = None
    details: Any = None
    source_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "call_id": self.call_id,
            "name": self.name,
            "content": self.content,
            "is_error": self.is_error,
            "time": self.time,
            "details": self.details,
        }


@dataclass(slots=True)
class Compaction:
    """The harness compacted the conversation: later turns start from `summary` (plus, for pi, the
    entries from `kept_from` on)."""

    summary: str | None = None
    time: str | None = None
    tokens_before: int | None = None
    trigger: str | None = None
    kept_from: str | None = None
    source_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "compaction",
            "summary": self.summary,
            "time": self.time,
            "tokens_before": self.tokens_before,
            "trigger": self.trigger,
            "kept_from": self.kept_from,
        }


@dataclass(slots=True)
class Notice:
    """Not conversation: an API error (`error`), an interruption (`aborted`), the output of a command the
    harness ran itself without the model (`local`), or information (`info`)."""

    kind: str
    text: str
    time: str | None = None
    source_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"type": "notice", "kind": self.kind, "text": self.text, "time": self.time}


@dataclass(slots=True)
class TurnMark:
    """A harness's own record of a turn's state: `started`, `completed` or `aborted` (Codex task events)."""

    state: str
    time: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"type": "turn", "state": self.state, "time": self.time}


Entry = UserMessage | AssistantTurn | ToolResult | Compaction | Notice | TurnMark


@dataclass(slots=True)
class Integrity:
    """How the source read: records seen, records that did not parse, and a cut-off last record."""

    records: int = 0
    unparsed_records: int = 0
    torn_tail: bool = False
    unparsed_lines: list[int] = field(default_factory=list)
    """Line numbers of the first unparsable records (at most 20 kept)."""
    line: int = 0
    """The line of the record being read (what an error about a record names)."""
    oversized: list[tuple[int, int]] = field(default_factory=list)
    """(line, bytes) of each line too long to read as a record (`jsonl.MAX_RECORD_BYTES`), skipped
    unread; each is also one of `unparsed_records`."""
    oversized_records: list[tuple[str, int]] = field(default_factory=list)
    """(name, bytes) of each record of a store or database (an OpenCode message or part, or its file)
    too large to read (`jsonl.MAX_RECORD_BYTES`), skipped unread; each is also one of `unparsed_records`."""

    def to_json(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "unparsed_records": self.unparsed_records,
            "torn_tail": self.torn_tail,
            "oversized_lines": [{"line": line, "bytes": size} for line, size in self.oversized],
            "oversized_records": [{"record": name, "bytes": size} for name, size in self.oversized_records],
        }


def as_object(value: Any) -> dict[str, Any]:
    """A JSON object read from a record, or an empty one when the record holds something else there."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A JSON array read from a record, or an empty one when the record holds something else there."""
    return value if isinstance(value, list) else []


def time_key(stamp: Any) -> float | None:
    """A recorded time as Unix seconds (ISO text or epoch milliseconds); None when it is not a time."""
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return stamp / 1000.0 if stamp > 1e11 else float(stamp)
    if not isinstance(stamp, str) or len(stamp) < 10:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00") if stamp.endswith("Z") else stamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def iso_from_ms(millis: Any) -> str | None:
    """Epoch milliseconds (OpenCode, pi) as ISO 8601 UTC text with milliseconds."""
    if not isinstance(millis, (int, float)) or isinstance(millis, bool):
        return None
    moment = datetime.fromtimestamp(millis / 1000.0, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(millis) % 1000:03d}Z"


@dataclass(slots=True)
class TimeSpan:
    """The earliest and latest recorded times, kept as the text the harness wrote."""

    first: str | None = None
    last: str | None = None
    _width: int = 0
    """The length of `first` and `last` while both are ISO text of one layout ending in "Z"."""

    def see(self, stamp: Any) -> None:
        if stamp.__class__ is str and len(stamp) == self._width and stamp[-1:] == "Z":
            # ISO text of one layout orders as text: no parsing per record.
            if stamp > self.last:  # type: ignore[operator]
                self.last = stamp
            elif stamp < self.first:  # type: ignore[operator]
                self.first = stamp
            return
        key = time_key(stamp)
        if key is None:
            return
        text = stamp if isinstance(stamp, str) else iso_from_ms(stamp)
        first, last = time_key(self.first), time_key(self.last)
        if first is None or key < first:
            self.first = text
        if last is None or key > last:
            self.last = text
        same = (
            self.first
            and self.last
            and len(self.first) == len(self.last)
            and self.first[-1] == self.last[-1] == "Z"
        )
        self._width = len(self.first) if same else 0  # type: ignore[arg-type]


@dataclass(slots=True)
class SessionInfo:
    """What a reader learns about a session besides its entries; filled while reading."""

    harness: str
    source: str
    session_id: str | None = None
    agent_id: str | None = None
    parent_session_id: str | None = None
    agent_type: str | None = None
    cwd: str | None = None
    title: str | None = None
    versions: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    span: TimeSpan = field(default_factory=TimeSpan)
    integrity: Integrity = field(default_factory=Integrity)
    review_starts: list[str] = field(default_factory=list)
    """When a Codex session entered review mode (`/review`): its review sub-agent's rollout, which
    does not name this session, started then."""
    active_path: set[str] | None = None
    """For a harness whose entries form a tree (pi), the ids on the path to the last entry: what a
    continued session's context holds. None when every entry is on it. Only a full read fills it."""
    copied: int = 0
    """How many of the first entries are a copy of the session this one resumed (a Claude Code file
    written by `--resume`/`--continue` starts with the resumed conversation's records): calls that
    session made, not this one. Counted and shown all the same (the counting rules count records)."""

    def add_model(self, model: str | None) -> None:
        if model and model not in self.models:
            self.models.append(model)

    def add_version(self, version: Any) -> None:
        if isinstance(version, str) and version and version not in self.versions:
            self.versions.append(version)

    def header_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "session_id": self.session_id,
            "agent_id": self.agent_id,
            "parent_session_id": self.parent_session_id,
            "source": self.source,
            "cwd": self.cwd,
            "title": self.title,
        }


class Tally:
    """Folds entries into the summary figures and the ending, in constant memory."""

    def __init__(self) -> None:
        self.user_messages = 0
        self.model_calls = 0
        self.tool_calls = 0
        self.tool_results = 0
        self.compactions = 0
        self.usage: Usage | None = None
        self.models: list[str] = []
        self.first_prompt: str | None = None
        self._last: str | None = None
        """The last conversational step: prompt, answer, pending (calls unanswered), result, error, aborted."""
        self._open_calls = 0
        self._turn_state: str | None = None

    def add(self, entry: Entry) -> None:
        if isinstance(entry, AssistantTurn):
            self._assistant(entry)
        elif isinstance(entry, ToolResult):
            self.tool_results += 1
            self._open_calls = max(0, self._open_calls - 1)
            self._last = "result"
        elif isinstance(entry, UserMessage):
            if entry.kind == "prompt":
                self.user_messages += 1
                if self.first_prompt is None:
                    self.first_prompt = entry.text
            if entry.kind in PROMPTS:
                self._last = "prompt"
        elif isinstance(entry, Notice) and entry.kind in ("error", "aborted", "local"):
            self._last = "answer" if entry.kind == "local" else entry.kind
        elif isinstance(entry, TurnMark):
            self._turn_state = entry.state
        elif isinstance(entry, Compaction):
            self.compactions += 1

    def _assistant(self, turn: AssistantTurn) -> None:
        calls = sum(1 for part in turn.parts if isinstance(part, ToolCall))
        self.tool_calls += calls
        self._open_calls = calls
        if turn.parts or turn.call is not None:
            self._last = "pending" if calls else "answer"
        if turn.call is None:
            return
        self.model_calls += 1
        if turn.call.model and turn.call.model not in self.models:
            self.models.append(turn.call.model)
        if turn.call.usage is not None:
            if self.usage is None:
                self.usage = Usage()
            self.usage.add(turn.call.usage)

    def ending(self) -> str:
        """`completed`, `error`, `aborted`, or `open` (the records stop mid-turn)."""
        if self._last in ("error", "aborted"):
            return self._last
        if self._turn_state == "started":
            return "open"
        if self._turn_state == "aborted":
            return "aborted"
        if self._last in ("prompt", "result", "pending"):
            return "open"
        return "completed"


@dataclass(slots=True)
class Summary:
    """The figures of one session (`harnez read --summary`)."""

    info: SessionInfo
    tally: Tally

    def to_json(self) -> dict[str, Any]:
        info, tally = self.info, self.tally
        models = list(info.models) + [m for m in tally.models if m not in info.models]
        return {
            **info.header_json(),
            "user_messages": tally.user_messages,
            "model_calls": tally.model_calls,
            "tool_calls": tally.tool_calls,
            "tool_results": tally.tool_results,
            "usage": tally.usage.to_json() if tally.usage else None,
            "models": models,
            "compactions": tally.compactions,
            "ending": {"status": tally.ending()},
            "integrity": info.integrity.to_json(),
            "started_at": info.span.first,
            "ended_at": info.span.last,
            "versions": info.versions,
        }


@dataclass(slots=True)
class Session:
    """A whole session at full fidelity."""

    info: SessionInfo
    entries: list[Entry]

    def summary(self) -> Summary:
        tally = Tally()
        for entry in self.entries:
            tally.add(entry)
        return Summary(self.info, tally)

    @property
    def title(self) -> str | None:
        """The harness's title, else the first prompt (whitespace collapsed, at most 80 characters)."""
        if self.info.title:
            return self.info.title
        first = next(
            (e.text for e in self.entries if isinstance(e, UserMessage) and e.kind == "prompt"), None
        )
        if not first:
            return None
        flat = " ".join(first.split())
        return flat if len(flat) <= 80 else flat[:79].rstrip() + "…"

    def to_json(self) -> dict[str, Any]:
        return {**self.summary().to_json(), "entries": [entry.to_json() for entry in self.entries]}
