"""The event vocabulary: one frozen dataclass per kind, the union of them, and the records around them.

Every event of a session's log has a *body*: an instance of one of the classes below, which names
its kind (`kind`, kebab-case, as printed by `harnez run --json`) and holds its fields. Emitters build
bodies; consumers match on their types:

    match event.body:
        case TextDelta(text=text): ...
        case ToolCompleted(call_id=call_id, is_error=True): ...

`Event` is a body on its way into the log (the server assigns its sequence number); `StoredEvent` is
a body with its place in the log. Both turn into and out of JSON here and nowhere else
(`to_json`/`from_json`, `to_payload`/`body_from_payload`), so docs/events.md, the store, the
printers and the HTTP translation cannot drift apart: a test parses every example in the docs.

A field has one name across kinds: the tool of a call is `name` everywhere (stored events written
before that used `tool` in `approval-*` and `tool-arguments-delta`; they are read as `name`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, get_args

from harnez.outcome import Stop
from harnez.records import SharedMethods
from harnez.text import json_line

WARNING_CODES: dict[str, str] = {
    "unpublished-tool": "The model called a tool that was not offered; nothing ran.",
    "conversation-compacted": "The conversation was compacted to fit the model's window.",
    "summary-failed": "Compaction could not summarise; the elided form is kept.",
    "nothing-to-compact": "`/compact` found nothing to shorten; the conversation is unchanged.",
    "unpriced-model": "Neither settings nor the rate card price the model; its cost is unknown.",
    "unknown-stream-event": "The provider sent a stream item Harnez does not know; it is kept in the event.",
    "malformed-sse-line": "The provider sent a line that is not valid SSE; it was skipped.",
    "malformed-sse-data": "The provider sent an SSE event whose data is not valid JSON; it was skipped.",
    "misshapen-stream-item": "The provider sent a stream item of an unexpected shape; it was skipped.",
    "title-failed": "Automatic naming failed; the fallback title stays.",
    "opaque-items-dropped": "Switching wire or server dropped provider-specific items from the history.",
    "invalid-settings": "A settings value is invalid; a default is used instead.",
    "output-limit": "The model stopped at its output limit; its answer (or a tool call) is cut short.",
    "truncated-for-window": "A tool call's arguments were cut in the conversation to fit the model's window.",
    "untrusted-hooks": "The project's hooks are not trusted yet, so they did not run.",
    "invalid-agent": "A sub-agent's file could not be read as an agent; it is not offered.",
    "agent-tool-unknown": "A sub-agent's `tools` names an MCP tool the task does not offer; it goes without it.",
    "mcp-unavailable": "An MCP server of the harness is not connected; the task goes on without its tools.",
}

UserMessageMode = Literal["prompt", "steering", "command"]
Verdict = Literal["allow", "allow-session", "deny"]


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class EventBody(SharedMethods):
    """The fields of one event; subclasses name their `kind` and what it means (`about`).

    Kinds are declared `repr=False, eq=False`: they share `SharedMethods`' repr, equality and hash,
    which do what `dataclass` generates, for less import time (harnez/records.py).
    """

    kind: ClassVar[str]
    about: ClassVar[str]

    def to_payload(self) -> dict[str, Any]:
        """The fields as JSON values, in declaration order (shallow: JSON values are kept as they are)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


# conversation ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class UserMessage(EventBody):
    kind: ClassVar[str] = "user-message"
    about: ClassVar[str] = "A prompt the person submitted (mode: prompt, steering or command)."
    text: str
    mode: UserMessageMode = "prompt"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class PromptQueued(EventBody):
    kind: ClassVar[str] = "prompt-queued"
    about: ClassVar[str] = "A prompt typed while a task runs; it starts its own task afterwards."
    text: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class SteeringDelivered(EventBody):
    kind: ClassVar[str] = "steering-delivered"
    about: ClassVar[str] = "A steering message handed to the running task at its next model turn."
    text: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ShellLine(EventBody):
    kind: ClassVar[str] = "shell-line"
    about: ClassVar[str] = "A `!command` the person ran directly; not sent to the model unless shared."
    command: str
    output: str
    exit_code: int | None = None
    duration: float | None = None
    timed_out: bool = False
    cancelled: bool = False
    shared: bool = False


# lifecycle ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Started(EventBody):
    kind: ClassVar[str] = "started"
    about: ClassVar[str] = (
        "A task began: model, thinking level, wire, tools published and withheld, window, endpoint, "
        "operations, skills and agents offered."
    )
    model: str
    wire: str
    thinking: str | None = None
    tools: list[str] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)
    context_window: int | None = None
    base_url: str | None = None
    """The provider's endpoint, without credentials, user info or query (None in older events)."""
    operations: list[str] = field(default_factory=list)
    """The harness-neutral operations the published tools perform (read, edit, search, execute…)."""
    skills: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class TurnStarted(EventBody):
    kind: ClassVar[str] = "turn-started"
    about: ClassVar[str] = "A model turn began (turn number)."
    turn: int


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class TurnCompleted(EventBody):
    kind: ClassVar[str] = "turn-completed"
    about: ClassVar[str] = "A model turn ended (stop reason); its text is the text-deltas since turn-started."
    turn: int
    stop_reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Finished(EventBody):
    kind: ClassVar[str] = "finished"
    about: ClassVar[str] = (
        "A task ended: stop (completed, cancelled, failed, incomplete, interrupted), turns, error."
    )
    stop: Stop
    turns: int | None = None
    error: str | None = None


# streaming ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class TextDelta(EventBody):
    kind: ClassVar[str] = "text-delta"
    about: ClassVar[str] = "Assistant text as it streamed (coalesced into chunks of at most ~40 ms)."
    text: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ReasoningDelta(EventBody):
    kind: ClassVar[str] = "reasoning-delta"
    about: ClassVar[str] = "Reasoning text as it streamed."
    text: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ToolArgumentsDelta(EventBody):
    kind: ClassVar[str] = "tool-arguments-delta"
    about: ClassVar[str] = "A fragment of a tool call's JSON arguments."
    call_id: str
    name: str | None = None
    delta: str = ""


# tools -------------------------------------------------------------------------------------------


RAW_ARGUMENTS_KEPT = 4000
"""Characters of unparsable tool arguments a `tool-requested` event keeps (its streamed
`tool-arguments-delta` events hold them all until the turn's deltas are folded)."""


def kept_raw_arguments(raw: str) -> str:
    """Unparsable tool arguments as a `tool-requested` event keeps them: cut, with a marker, when long."""
    if len(raw) <= RAW_ARGUMENTS_KEPT:
        return raw
    return f"{raw[:RAW_ARGUMENTS_KEPT]} … [cut: {len(raw) - RAW_ARGUMENTS_KEPT:,} more characters]"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ToolRequested(EventBody):
    kind: ClassVar[str] = "tool-requested"
    about: ClassVar[str] = (
        "The model asked for a tool call (call id, tool name, arguments; "
        "the text it sent when that was not a JSON object)."
    )
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    """The parsed arguments; `{}` when what the model sent was not a JSON object (then see below)."""
    raw_arguments: str | None = None
    """What the model sent when it was not a JSON object, cut after `RAW_ARGUMENTS_KEPT` characters with
    a marker saying how many more there were; None when the arguments parsed."""
    arguments_error: str | None = None
    """Why those arguments could not be used (`the tool arguments are not valid JSON (…)`); None when they parsed."""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ApprovalRequired(EventBody):
    kind: ClassVar[str] = "approval-required"
    about: ClassVar[str] = "A tool call waits for the person's answer (why it asks, the diff it would make)."
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    diff: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ApprovalResolved(EventBody):
    kind: ClassVar[str] = "approval-resolved"
    about: ClassVar[str] = (
        "The answer: allow once, allow for the session (with the grant), or deny (with a reason)."
    )
    call_id: str
    name: str
    verdict: Verdict
    reason: str | None = None
    by: str = "user"
    grant: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ToolCompleted(EventBody):
    kind: ClassVar[str] = "tool-completed"
    about: ClassVar[str] = "A tool call's result: content for the model, details for the UI, error flag."
    call_id: str
    name: str
    content: str
    details: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    cancelled: bool = False


# accounting --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Usage(EventBody):
    kind: ClassVar[str] = "usage"
    about: ClassVar[str] = (
        "Tokens of one model call: input, output, cache read/write, reasoning (null = not reported)."
    )
    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    model: str | None = None
    context: int | None = None
    """For a call continued after pauses (several requests, their tokens added up above): what its
    last request left in the context; null when the fields' sum says it (docs/events.md)."""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Cost(EventBody):
    kind: ClassVar[str] = "cost"
    about: ClassVar[str] = "Cost of one model call in US dollars; null for an unpriced model, never zero."
    usd: float | None = None


# recovery ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class TurnRetried(EventBody):
    kind: ClassVar[str] = "turn-retried"
    about: ClassVar[str] = "A model call is retried: discard the deltas since its turn-started."
    turn: int | None = None
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Compacted(EventBody):
    kind: ClassVar[str] = "compacted"
    about: ClassVar[str] = "Older context was elided or summarised (tokens before and after)."
    before_tokens: int | None = None
    after_tokens: int | None = None
    summarised: bool = False


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class WarningEvent(EventBody):
    """A warning (named so as not to shadow Python's `Warning`)."""

    kind: ClassVar[str] = "warning"
    about: ClassVar[str] = "Something went wrong but the work goes on (a stable code and a message)."
    code: str
    message: str
    call_id: str | None = None
    raw: Any = None
    """The provider's item or line it is about, when there is one (credentials masked)."""

    def __post_init__(self) -> None:
        if self.code not in WARNING_CODES:
            raise ValueError(f"Unknown warning code {self.code!r}; add it to harnez.events.WARNING_CODES.")


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Error(EventBody):
    kind: ClassVar[str] = "error"
    about: ClassVar[str] = "Something failed (a message the person can act on)."
    message: str


# session -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class TitleChanged(EventBody):
    kind: ClassVar[str] = "title-changed"
    about: ClassVar[str] = (
        "The session's title changed (title, source: keywords, model, excerpt, imported or user)."
    )
    title: str
    source: str


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ModelChanged(EventBody):
    kind: ClassVar[str] = "model-changed"
    about: ClassVar[str] = "The session's model selection changed."
    model: str


# answers and hooks (the "answers" part: structured answers, docs/hooks.md) -------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Answered(EventBody):
    kind: ClassVar[str] = "answered"
    about: ClassVar[str] = "The model gave the task's structured answer through the answer tool (valid JSON)."
    call_id: str
    answer: Any = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class AnswerNudged(EventBody):
    kind: ClassVar[str] = "answer-nudged"
    about: ClassVar[str] = "The model ended in prose; it is told once more to answer through the answer tool."
    message: str
    forced: bool = False
    """Whether the next turn is held to the answer tool (the wire can force a tool)."""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class HookRan(EventBody):
    kind: ClassVar[str] = "hook-ran"
    about: ClassVar[str] = "A hook command ran: the hook, the command, its exit code, decision and reason."
    hook: str
    command: str
    exit_code: int | None = None
    decision: str = "allow"
    reason: str | None = None
    context: str | None = None
    duration: float | None = None
    call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class HookFailed(EventBody):
    kind: ClassVar[str] = "hook-failed"
    about: ClassVar[str] = "A hook command crashed, timed out or answered nonsense; the task ends failed."
    hook: str
    command: str
    message: str
    exit_code: int | None = None
    timed_out: bool = False
    call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class StopHookExhausted(EventBody):
    kind: ClassVar[str] = "stop-hook-exhausted"
    about: ClassVar[str] = (
        "The stop hooks kept sending the work back past their limit; the task ends incomplete."
    )
    limit: int
    command: str
    reason: str | None = None


# sub-agents (the "subagents" part: harnez/agents/, docs/agents.md) --------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class DelegateStarted(EventBody):
    kind: ClassVar[str] = "delegate-started"
    about: ClassVar[str] = (
        "A delegate call started a sub-agent in a child session (agent, child session, model, tools)."
    )
    call_id: str
    agent: str
    child: str
    model: str | None = None
    tools: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Delegated(EventBody):
    kind: ClassVar[str] = "delegated"
    about: ClassVar[str] = "A sub-agent's result: the text the delegate call returns to the model."
    call_id: str
    agent: str
    child: str
    text: str
    is_error: bool = False


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class DelegateFinished(EventBody):
    kind: ClassVar[str] = "delegate-finished"
    about: ClassVar[str] = (
        "A sub-agent's task ended: stop, turns, error, and its usage and cost (rolled up into the parent's)."
    )
    call_id: str
    agent: str
    child: str
    stop: Stop
    turns: int | None = None
    error: str | None = None
    input: int = 0
    output: int = 0
    usd: float | None = None
    calls: int = 0
    reported: int = 0
    unpriced: bool = False


# headless: rates and declared programs (issue #16 points 2 and 7) -----------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class Rates(EventBody):
    kind: ClassVar[str] = "rates"
    about: ClassVar[str] = (
        "The prices a task's costs use (source: settings or the card; null: unpriced), per million tokens."
    )
    model: str
    source: Literal["settings", "card"] | None = None
    key: str | None = None
    """The settings key, or the card's `<provider>/<model>`, that priced the model."""
    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    tiers: list[dict[str, Any]] = field(default_factory=list)
    """Prices for calls whose prompt holds more than `above` tokens: {above, input, output, cache_read, cache_write}."""
    card: str | None = None
    """The rate card's version (`genai-prices 0.2.3`) when it priced the model."""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class ProgramRefused(EventBody):
    kind: ClassVar[str] = "program-refused"
    about: ClassVar[str] = "A shell call started no program: it named one outside the declared set."
    call_id: str
    program: str | None
    """The program that is not declared; null when the command line could not be checked at all."""
    declared: list[str] = field(default_factory=list)
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False, eq=False)
class UnknownEvent(EventBody):
    """A stored event this Harnez cannot read as one of its kinds (written by a newer one, or damaged):
    kept as it is, printed as it is, rendered by nobody."""

    kind: ClassVar[str] = "unknown"
    about: ClassVar[str] = "Not a kind: a stored event this version cannot read, kept verbatim."
    stored_kind: str
    payload: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        return dict(self.payload)


Body = (
    UserMessage
    | PromptQueued
    | SteeringDelivered
    | ShellLine
    | Started
    | TurnStarted
    | TurnCompleted
    | Finished
    | TextDelta
    | ReasoningDelta
    | ToolArgumentsDelta
    | ToolRequested
    | ApprovalRequired
    | ApprovalResolved
    | ToolCompleted
    | Usage
    | Cost
    | TurnRetried
    | Compacted
    | WarningEvent
    | Error
    | TitleChanged
    | ModelChanged
    | Answered
    | AnswerNudged
    | HookRan
    | HookFailed
    | StopHookExhausted
    | DelegateStarted
    | Delegated
    | DelegateFinished
    | Rates
    | ProgramRefused
    | UnknownEvent
)
"""Every event body: the tagged union consumers match on."""

BODIES: dict[str, type[EventBody]] = {cls.kind: cls for cls in get_args(Body) if cls is not UnknownEvent}
"""Each kind's class, by kind."""

KINDS: dict[str, str] = {kind: cls.about for kind, cls in BODIES.items()}
"""Each kind and what it means (documented in docs/events.md; a test checks both agree)."""

_RENAMED = {
    "approval-required": {"tool": "name"},
    "approval-resolved": {"tool": "name"},
    "tool-arguments-delta": {"tool": "name"},
}
"""Fields stored under an older name, by kind: old name → the one name the field has now."""


def body_from_payload(kind: str, payload: dict[str, Any]) -> EventBody:
    """The body of a stored or printed event; an unknown kind, or one missing a field it needs, is
    kept whole as `UnknownEvent` (never an error: a reader must get through any log)."""
    cls = BODIES.get(kind)
    if cls is None:
        return UnknownEvent(stored_kind=kind, payload=dict(payload))
    renamed = _RENAMED.get(kind)
    if renamed:
        payload = {renamed.get(key, key): value for key, value in payload.items()}
    known = {f.name for f in dataclasses.fields(cls)}
    try:
        return cls(**{key: value for key, value in payload.items() if key in known})
    except (TypeError, ValueError):
        return UnknownEvent(stored_kind=kind, payload=dict(payload))


def kind_of(body: EventBody) -> str:
    """The kind as stored and printed (an unknown event keeps the kind it was stored with)."""
    return body.stored_kind if isinstance(body, UnknownEvent) else body.kind


@dataclass(frozen=True, slots=True)
class Event:
    """An event on its way into a session's log: the server assigns its sequence number."""

    body: EventBody
    task: int | None = None
    search_text: str | None = None
    """Text to add to the full-text index with this event (not stored in the payload)."""

    @property
    def kind(self) -> str:
        return kind_of(self.body)


ENVELOPE = ("kind", "session", "seq", "task", "time")
"""The fields every printed event starts with; the body's fields follow."""


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event with its place in the session's log."""

    session: str
    seq: int
    task: int | None
    time: float
    body: EventBody

    @property
    def kind(self) -> str:
        return kind_of(self.body)

    def to_json(self) -> dict[str, Any]:
        """The JSON Lines form: kind, session, seq, task, time, then the body's fields."""
        return {
            "kind": self.kind,
            "session": self.session,
            "seq": self.seq,
            "task": self.task,
            "time": round(self.time, 6),
            **self.body.to_payload(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoredEvent:
        """An event from its JSON Lines form (as `to_json` writes it)."""
        payload = {key: value for key, value in data.items() if key not in ENVELOPE}
        return cls(
            str(data["session"]),
            int(data["seq"]),
            data.get("task"),
            float(data.get("time", 0.0)),
            body_from_payload(str(data["kind"]), payload),
        )

    def dumps(self) -> str:
        """One line of JSON, safe to print (`harnez.text.json_line`)."""
        return json_line(self.to_json())


def warning(code: str, message: str, task: int | None = None, **extra: Any) -> Event:
    """A `warning` event with a stable code (extra: `call_id`, `raw`)."""
    return Event(WarningEvent(code=code, message=message, **extra), task=task)


@dataclass(frozen=True, slots=True)
class LiveOutput:
    """What a running command of a task's tool call printed, as it arrives: for showing it live,
    never stored and never in a session's log (its `tool-completed` keeps what the model saw)."""

    session: str
    call_id: str
    text: str
