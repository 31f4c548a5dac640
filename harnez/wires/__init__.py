"""Talking to models: the Wire protocol, its events, the three wires, retries and the catalogue."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

# httpcore asks sniffio which async library runs, importing it each time it sets up a lock (four
# times a request); anyio 4 no longer brings sniffio along, and a failed import searches every
# folder of sys.path again (~85 µs each). When it is not installed, say so once.
if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
    sys.modules["sniffio"] = None  # type: ignore[assignment]

import httpx

from harnez.settings import RetrySettings
from harnez.wires.accumulate import AssistantTurn, accumulate, collect
from harnez.wires.anthropic import AnthropicWire, lasting_containers
from harnez.wires.base import (
    Failure,
    ModelSpec,
    OpaqueItem,
    ReasoningDelta,
    Retry,
    Stop,
    StopReason,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolSpec,
    Usage,
    UsageReport,
    Wire,
    WireEvent,
    WireRequest,
    WireWarning,
)
from harnez.wires.catalogue import (
    Endpoint,
    ResolvedModel,
    cost_of,
    endpoint_for,
    forces_tools,
    resolve_model,
    resolve_ref,
)
from harnez.wires.clients import HttpClients
from harnez.wires.conversation import (
    AssistantMessage,
    Conversation,
    Item,
    Opaque,
    ToolCall,
    ToolResult,
    UserMessage,
    item_from_json,
)
from harnez.wires.http import HttpWire
from harnez.wires.openai_chat import OpenAIChatWire
from harnez.wires.openai_responses import OpenAIResponsesWire
from harnez.wires.retry import RetryingWire

WIRES: dict[str, type[HttpWire]] = {
    "openai-chat": OpenAIChatWire,
    "openai-responses": OpenAIResponsesWire,
    "anthropic-messages": AnthropicWire,
}


def lasting_opaque(items: Sequence[Item]) -> tuple[Opaque, ...]:
    """The opaque items of `items` that keep their meaning without the messages that carried them: a
    compaction that drops those messages carries them onto the conversation it makes. Anthropic's
    newest live container of each server is one (`lasting_containers`): its files are still there."""
    return lasting_containers(items, datetime.now(UTC))


def open_wire(
    endpoint: Endpoint, retry: RetrySettings | None = None, *, client: httpx.AsyncClient | None = None
) -> RetryingWire:
    """The wire for an endpoint, wrapped in retries; close it with `aclose()`."""
    settings = retry or RetrySettings()
    return RetryingWire(WIRES[endpoint.wire](endpoint, retry=settings, client=client), settings)


__all__ = [
    "WIRES",
    "AnthropicWire",
    "AssistantMessage",
    "AssistantTurn",
    "Conversation",
    "Endpoint",
    "Failure",
    "HttpClients",
    "Item",
    "ModelSpec",
    "Opaque",
    "OpaqueItem",
    "OpenAIChatWire",
    "OpenAIResponsesWire",
    "ReasoningDelta",
    "ResolvedModel",
    "Retry",
    "RetryingWire",
    "Stop",
    "StopReason",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "UsageReport",
    "UserMessage",
    "Wire",
    "WireEvent",
    "WireRequest",
    "WireWarning",
    "accumulate",
    "collect",
    "cost_of",
    "endpoint_for",
    "forces_tools",
    "item_from_json",
    "lasting_opaque",
    "open_wire",
    "resolve_model",
    "resolve_ref",
]
