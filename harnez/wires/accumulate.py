"""Folding a stream of wire events into the assistant's turn, honouring retries."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field

from harnez.wires.base import (
    Failure,
    OpaqueItem,
    ReasoningDelta,
    Retry,
    Stop,
    TextDelta,
    ToolCallEnd,
    Usage,
    UsageReport,
    WireEvent,
    WireWarning,
)
from harnez.wires.conversation import AssistantMessage, Opaque, ToolCall


@dataclass(slots=True)
class AssistantTurn:
    """What one model call produced, once its stream has ended."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallEnd] = field(default_factory=list)
    opaque: list[Opaque] = field(default_factory=list)
    usage: Usage | None = None
    stop: Stop | None = None
    failure: Failure | None = None
    warnings: list[WireWarning] = field(default_factory=list)
    retries: list[Retry] = field(default_factory=list)

    def apply(self, event: WireEvent) -> None:
        """Fold one event in; a `Retry` throws away everything the failed attempt produced."""
        if isinstance(event, TextDelta):
            self.text += event.text
        elif isinstance(event, ReasoningDelta):
            self.reasoning += event.text
        elif isinstance(event, ToolCallEnd):
            self.tool_calls.append(event)
        elif isinstance(event, OpaqueItem):
            self.opaque.append(event.opaque)
        elif isinstance(event, UsageReport):
            self.usage = event.usage
        elif isinstance(event, Stop):
            self.stop = event
        elif isinstance(event, Failure):
            self.failure = event
        elif isinstance(event, WireWarning):
            self.warnings.append(event)
        elif isinstance(event, Retry):
            self._discard_attempt()
            self.retries.append(event)

    def _discard_attempt(self) -> None:
        self.text, self.reasoning = "", ""
        self.tool_calls.clear()
        self.opaque.clear()
        self.usage, self.stop, self.failure = None, None, None

    @property
    def model(self) -> str | None:
        """The model the provider says served the call."""
        return self.stop.model if self.stop else None

    def to_message(self) -> AssistantMessage:
        """The turn as a conversation item, ready to append to the history."""
        calls = tuple(ToolCall(c.id, c.name, c.arguments) for c in self.tool_calls)
        return AssistantMessage(self.text, self.reasoning, calls, tuple(self.opaque))


def accumulate(events: Iterable[WireEvent]) -> AssistantTurn:
    """Fold a finished list of events into a turn."""
    turn = AssistantTurn()
    for event in events:
        turn.apply(event)
    return turn


async def collect(events: AsyncIterable[WireEvent]) -> tuple[AssistantTurn, list[WireEvent]]:
    """Drain a live stream: the folded turn, and every event as it came."""
    turn, seen = AssistantTurn(), []
    async for event in events:
        seen.append(event)
        turn.apply(event)
    return turn, seen
