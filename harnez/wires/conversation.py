"""The portable conversation: what was said, independent of the wire that will carry it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harnez.errors import HarnezError
from harnez.records import SharedMethods


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Opaque(SharedMethods):
    """A provider item kept verbatim, tagged with the wire that produced it."""

    wire: str
    item: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"wire": self.wire, "item": self.item}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Opaque:
        return cls(wire=data["wire"], item=data["item"])


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ToolCall(SharedMethods):
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class UserMessage(SharedMethods):
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "user", "text": self.text}


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class AssistantMessage(SharedMethods):
    """What the model said; `opaque` items are replayed before the text on their own wire."""

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    opaque: tuple[Opaque, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "assistant",
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "opaque": [o.to_json() for o in self.opaque],
        }


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class ToolResult(SharedMethods):
    call_id: str
    content: str
    is_error: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "call_id": self.call_id,
            "content": self.content,
            "is_error": self.is_error,
        }


Item = UserMessage | AssistantMessage | ToolResult


def call_as_text(call: ToolCall) -> str:
    """A tool call written out, for a request that may not hold it as a call (no tools offered)."""
    return f"(calls {call.name} {json.dumps(call.arguments, ensure_ascii=False)})"


def result_as_text(result: ToolResult, names: dict[str, str]) -> str:
    """A tool result written out under its call's tool name (`tool_names`), as `call_as_text` writes
    its call."""
    outcome = "failed" if result.is_error else "result"
    return f"[{names.get(result.call_id, 'tool')} {outcome}]\n{result.content}"


def tool_names(items: Iterable[Item]) -> dict[str, str]:
    """The tool name of each call in `items`, by call id."""
    return {
        call.id: call.name for item in items if isinstance(item, AssistantMessage) for call in item.tool_calls
    }


def item_from_json(data: dict[str, Any]) -> Item:
    """Rebuild one conversation item from its `to_json` form."""
    kind = data.get("type")
    if kind == "user":
        return UserMessage(text=data["text"])
    if kind == "tool_result":
        return ToolResult(call_id=data["call_id"], content=data["content"], is_error=bool(data["is_error"]))
    if kind == "assistant":
        calls = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in data.get("tool_calls", ()))
        opaque = tuple(Opaque.from_json(o) for o in data.get("opaque", ()))
        return AssistantMessage(data.get("text", ""), data.get("reasoning", ""), calls, opaque)
    raise HarnezError(
        f"unknown conversation item type {kind!r}: the record was written by a newer Harnez or is corrupt"
    )


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Conversation(SharedMethods):
    """A system text and the items of the conversation, oldest first."""

    system: str = ""
    items: tuple[Item, ...] = field(default_factory=tuple)

    def append(self, *items: Item) -> Conversation:
        return Conversation(self.system, self.items + items)

    def to_json(self) -> dict[str, Any]:
        return {"system": self.system, "items": [item.to_json() for item in self.items]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Conversation:
        return cls(data.get("system", ""), tuple(item_from_json(i) for i in data.get("items", ())))

    def opaque(self) -> list[Opaque]:
        """Every opaque item of the assistant messages, oldest first."""
        return [o for item in self.items if isinstance(item, AssistantMessage) for o in item.opaque]
