"""A small Server-Sent Events parser over an async iterator of lines."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

_KNOWN_FIELDS = frozenset(("event", "data", "id", "retry"))


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its `event:` name ("message" when absent) and its joined data."""

    event: str
    data: str


@dataclass(frozen=True, slots=True)
class SseMalformed:
    """A line that is no SSE field; the stream goes on after it."""

    line: str


SseItem = SseEvent | SseMalformed


async def iter_sse(lines: AsyncIterable[str]) -> AsyncIterator[SseItem]:
    """Yield the events of an SSE stream, and the lines that break the format.

    Lines arrive without their line ending (as httpx's `aiter_lines` gives them). An event is
    dispatched at a blank line, or at the end of the stream when data is pending. A byte order mark
    opening the stream is no part of its first line (the SSE format allows one; some servers send it).
    """
    event = ""
    data: list[str] = []
    first = True
    async for line in lines:
        if first:
            line, first = line.removeprefix("\ufeff"), False
        if not line:
            if data:
                yield SseEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line[0] == ":":
            continue
        name, colon, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif not colon or name not in _KNOWN_FIELDS:
            yield SseMalformed(line)
    if data:
        yield SseEvent(event or "message", "\n".join(data))
