"""The Wire protocol: one model call as a request in and a stream of typed events out."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from harnez.records import SharedMethods
from harnez.settings import WireName
from harnez.wires.conversation import Conversation, Opaque

StopReason = Literal["end_turn", "tool_use", "max_tokens", "content_filter", "other"]


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Usage(SharedMethods):
    """Tokens of one model call; each field is None when the provider did not report it.

    `input` excludes cache reads and writes, which are counted apart.
    """

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    context: int | None = None
    """For a call of several requests (continued after pauses), whose tokens the other fields add up:
    what its last request left in the context, its prompt (cached parts included) plus its answer,
    since each request sent the one before again. None for a call of one request: the sum says it."""

    @property
    def context_tokens(self) -> int:
        """What the call leaves in the context, the start of the next call: `context`, else the
        prompt (cached parts included) plus the answer."""
        if self.context is not None:
            return self.context
        return sum(value or 0 for value in (self.input, self.cache_read, self.cache_write, self.output))

    def to_json(self) -> dict[str, int | None]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "reasoning": self.reasoning,
            "context": self.context,
        }


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ToolSpec(SharedMethods):
    """A tool as published to the model: a name, a description and a JSON schema of its input."""

    name: str
    description: str
    schema: dict[str, Any]


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ModelSpec(SharedMethods):
    """What Harnez knows of one model: its window, its output cap and its thinking levels."""

    context_window: int
    max_output: int
    thinking_levels: tuple[str, ...] = ()
    """The levels above `off` the model accepts, lowest first; empty when it cannot think."""


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class WireRequest(SharedMethods):
    """One model call, independent of the wire that carries it."""

    model: str
    conversation: Conversation
    tools: tuple[ToolSpec, ...] = ()
    max_output: int | None = None
    """None uses the model's own cap from `spec`."""
    thinking: str = "off"
    temperature: float | None = None
    spec: ModelSpec | None = None
    """None looks the model up in the built-in catalogue (or uses conservative defaults)."""
    force_tool: str | None = None
    """A tool the model must call in this turn (`tool_choice`), where the wire can hold it to one."""
    cache_key: str | None = None
    """What stays the same across a conversation's requests (its session), for a provider that
    routes requests sharing a prompt prefix to the same cache by it (OpenAI's `prompt_cache_key`)."""


# --- events -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class TextDelta(SharedMethods):
    text: str


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ReasoningDelta(SharedMethods):
    text: str


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ToolCallStart(SharedMethods):
    id: str
    name: str


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ToolCallDelta(SharedMethods):
    id: str
    arguments: str
    """A fragment of the JSON text of the arguments."""


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ToolCallEnd(SharedMethods):
    id: str
    name: str
    arguments: dict[str, Any]
    """The parsed arguments; empty when they were not a JSON object (see `error`)."""
    raw_arguments: str
    error: str | None = None


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class UsageReport(SharedMethods):
    usage: Usage


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class OpaqueItem(SharedMethods):
    """A provider item kept verbatim and replayed on the same wire (e.g. signed thinking)."""

    opaque: Opaque


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Stop(SharedMethods):
    """The model finished this call normally."""

    reason: StopReason
    raw: str | None
    model: str | None
    """The model the provider says served the call."""


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Failure(SharedMethods):
    """The call failed. Inside a retrying wire, only the final failure reaches the caller."""

    message: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Retry(SharedMethods):
    """The previous attempt failed and another starts: discard that attempt's deltas."""

    attempt: int
    """The number of the attempt about to start (2 for the first retry)."""
    delay: float
    reason: str


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class WireWarning(SharedMethods):
    """Something odd that did not stop the call; `code` is stable, `raw` keeps the item."""

    code: str
    message: str
    raw: Any = field(default=None)


WireEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageReport
    | OpaqueItem
    | Stop
    | Failure
    | Retry
    | WireWarning
)


class Wire(Protocol):
    """A way of talking to models: `stream` never raises for HTTP or network trouble."""

    @property
    def name(self) -> WireName: ...

    def stream(self, request: WireRequest) -> AsyncGenerator[WireEvent, None]: ...

    async def aclose(self) -> None: ...
