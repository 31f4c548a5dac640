"""The scripted model's script: turns of replies and faults, read from JSON (or YAML)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnez.errors import HarnezError

STOPS = ("end_turn", "tool_use", "max_tokens", "content_filter")
_TURN_KEYS = {
    "path",
    "answers",
    "reply",
    "usage",
    "stop",
    "model",
    "status",
    "body",
    "headers",
    "cut_after_chunks",
    "delay_per_chunk",
    "malformed_line",
    "unknown_item",
    "hold",
    "hold_after_chunks",
    "whole",
    "raw",
    "raw_bytes",
    "framing",
    "gzip",
}
FRAMINGS = ("chunked", "length", "close")
ANSWERS = ("prompt", "tool-result")
"""What a request's last message can be, for a turn's `answers`: a tool's result, or anything else."""


class ScriptError(HarnezError):
    """A script for the scripted model is malformed."""


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of a reply: text, reasoning or a tool call, already cut into streamed chunks."""

    kind: str
    chunks: tuple[str, ...]
    name: str = ""
    id: str = ""
    signature: str = ""
    """Anthropic's thinking signature, or the Responses reasoning item's encrypted content."""


@dataclass(frozen=True, slots=True)
class Turn:
    """The answer to one request: a reply, possibly shaped by faults, or an HTTP error."""

    parts: tuple[Part, ...] = ()
    path: str | None = None
    answers: str | None = None
    """Only a request whose last message is this (`prompt` or `tool-result`): a looping script then
    stays in step with each conversation, whatever other clients or a cancelled task took before."""
    usage: dict[str, int] | None = None
    stop: str = "end_turn"
    model: str | None = None
    status: int | None = None
    body: Any = None
    headers: dict[str, str | None] = field(default_factory=dict)
    """Response headers to add or replace; one given as null is not sent."""
    cut_after_chunks: int | None = None
    delay_per_chunk: float = 0.0
    malformed_line: str | None = None
    unknown_item: dict[str, Any] | None = None
    hold: str | None = None
    hold_after_chunks: int = 0
    whole: bool = False
    """Answer with one JSON object even when the request asks for a stream (as some proxies and
    mock servers do, ignoring `"stream": true`)."""
    raw: str | None = None
    """A 200 body sent exactly as given instead of a rendered reply (`text/event-stream` unless
    `headers` say otherwise): a third party's framing, fields and line ends, byte for byte."""
    raw_bytes: int | None = None
    """Send the raw body this many bytes per write (a line, or a UTF-8 character, split across
    reads); each write counts as a chunk for `cut_after_chunks`, `hold_after_chunks`, `delay_per_chunk`."""
    framing: str = "chunked"
    """How the raw body is delimited: `chunked`, `length` (content-length) or `close` (neither: the
    body ends when the server closes the connection)."""
    gzip: bool = False
    """Send the raw body gzip-compressed (`content-encoding: gzip`)."""


def split_words(text: str) -> tuple[str, ...]:
    """Cut text into word-sized deltas that join back to the text."""
    return tuple(re.findall(r"\s*\S+\s*|\s+", text)) or ("",)


def split_even(text: str, count: int) -> tuple[str, ...]:
    """Cut text into `count` pieces of near-equal length (fewer when it is short)."""
    count = max(1, min(count, len(text) or 1))
    size = -(-len(text) // count) or 1
    return tuple(text[i : i + size] for i in range(0, len(text), size)) or ("",)


def parse_part(raw: dict[str, Any], index: int) -> Part:
    for kind in ("text", "reasoning"):
        if kind in raw:
            value = raw[kind]
            chunks = tuple(value) if isinstance(value, list) else split_words(str(value))
            return Part(kind, chunks, signature=str(raw.get("signature", f"sig-{index}")))
    if "tool_call" in raw:
        call = raw["tool_call"]
        args = call.get("arguments", {})
        text = args if isinstance(args, str) else json.dumps(args)
        chunks = (
            tuple(call["chunks"])
            if isinstance(call.get("chunks"), list)
            else split_even(text, call.get("chunks", 3))
        )
        return Part("tool_call", chunks, name=call["name"], id=str(call.get("id", f"call_{index}")))
    raise ScriptError(f"reply part {index} has none of text, reasoning, tool_call: {raw!r}")


def parse_turn(raw: dict[str, Any]) -> Turn:
    unknown = set(raw) - _TURN_KEYS
    if unknown:
        raise ScriptError(f"unknown turn key(s) {sorted(unknown)}; known: {sorted(_TURN_KEYS)}")
    parts = tuple(parse_part(p, i) for i, p in enumerate(raw.get("reply", ())))
    default_stop = "tool_use" if any(p.kind == "tool_call" for p in parts) else "end_turn"
    stop = raw.get("stop", default_stop)
    if stop not in STOPS:
        raise ScriptError(f"stop {stop!r} is not one of {', '.join(STOPS)}")
    if raw.get("framing", "chunked") not in FRAMINGS:
        raise ScriptError(f"framing {raw['framing']!r} is not one of {', '.join(FRAMINGS)}")
    if raw.get("answers", "prompt") not in ANSWERS:
        raise ScriptError(f"answers {raw['answers']!r} is not one of {', '.join(ANSWERS)}")
    fields = {k: v for k, v in raw.items() if k not in ("reply", "stop")}
    return Turn(parts=parts, stop=stop, **fields)


@dataclass(slots=True)
class Script:
    """Turns consumed in order; a turn with a `path` only answers requests to that path."""

    turns: list[Turn] = field(default_factory=list)
    loop: bool = False
    """Start again from the first turn when all are used (for trying Harnez by hand)."""

    @classmethod
    def from_data(cls, data: dict[str, Any] | list[Any]) -> Script:
        if isinstance(data, list):
            data = {"turns": data}
        return cls([parse_turn(t) for t in data.get("turns", ())], bool(data.get("loop", False)))

    @classmethod
    def from_file(cls, path: Path) -> Script:
        text = path.read_text(encoding="utf-8")
        if path.suffix in (".yaml", ".yml"):
            try:
                import yaml  # type: ignore[import-untyped]
            except ImportError as exc:
                raise ScriptError(
                    f"{path}: YAML scripts need PyYAML installed; or write the script as JSON"
                ) from exc
            return cls.from_data(yaml.safe_load(text))
        try:
            return cls.from_data(json.loads(text))
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path}: not valid JSON ({exc})") from exc

    def take(self, path: str, last: str = "prompt") -> Turn | None:
        """Remove and return the next turn for `path` and a request whose last message is `last`
        (one of ANSWERS); None when the script has none left."""
        for i, turn in enumerate(self.turns):
            if (turn.path is None or path.endswith(turn.path)) and turn.answers in (None, last):
                if self.loop:
                    self.turns.append(self.turns[i])
                return self.turns.pop(i)
        return None
