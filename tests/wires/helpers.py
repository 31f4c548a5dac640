"""Shared pieces of the wire tests: endpoints at the scripted model, requests, a recording sleep."""

from __future__ import annotations

from harnez.testing.scripted_model import ScriptedModel
from harnez.wires import WIRES, Endpoint
from harnez.wires.base import ToolSpec, WireRequest
from harnez.wires.conversation import Conversation, UserMessage

SECRET = "sk-test-SECRET-0123456789"
ALL_WIRES = tuple(WIRES)
READ_TOOL = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def endpoint(server: ScriptedModel, wire: str, key: str | None = SECRET) -> Endpoint:
    return Endpoint("scripted", wire, server.base_url(wire), key, "SCRIPTED_KEY" if key else None)  # type: ignore[arg-type]


def request(text: str = "hi", **fields: object) -> WireRequest:
    model = str(fields.pop("model", "claude-sonnet-4-5"))
    return WireRequest(model, Conversation("You are terse.", (UserMessage(text),)), **fields)  # type: ignore[arg-type]


class Delays:
    """A sleep that records what the retrying wire asked for, and returns at once."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.asked.append(delay)
