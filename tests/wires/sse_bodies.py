"""SSE bodies as third-party model servers send them, for the scripted model's `raw` turns."""

from __future__ import annotations

import json
from typing import Any

NL = "\n"


def events(*items: dict[str, Any] | str, named: bool = False, eol: str = NL, space: str = " ") -> str:
    """An SSE body: each item a `data:` line (JSON, or a string as is), its `type` as the `event:` name
    when `named`, lines ended by `eol`, `space` after each field's colon."""
    out = []
    for item in items:
        data = item if isinstance(item, str) else json.dumps(item)
        name = f"event:{space}{item['type']}{eol}" if named and isinstance(item, dict) else ""
        out.append(f"{name}data:{space}{data}{eol}{eol}")
    return "".join(out)


def chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
    return {
        "id": "c",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **more,
    }


def call(
    index: int | None, id: str | None = None, name: str | None = None, args: Any = None
) -> dict[str, Any]:
    out: dict[str, Any] = {} if index is None else {"index": index}
    function: dict[str, Any] = {}
    if id is not None:
        out |= {"id": id, "type": "function"}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    return {**out, "function": function}


USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
CHAT_HELLO = [chunk({"role": "assistant", "content": "Hel"}), chunk({"content": "lo."}), chunk({}, "stop")]


def message_start(**usage: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "usage": {"input_tokens": 9, "output_tokens": 1, **usage},
        },
    }


def block(index: int, content_block: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": content_block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def tool_use(id: str = "t1", name: str = "read", input: dict[str, Any] | None = None) -> dict[str, Any]:
    """An Anthropic tool_use block as it starts (its input empty, or whole for servers that give it)."""
    return {"type": "tool_use", "id": id, "name": name, "input": input or {}}


def server_tool_use(id: str = "srvtoolu_1", input: dict[str, Any] | None = None) -> dict[str, Any]:
    """A web search Anthropic runs itself, as its block starts (its input streams in)."""
    return {"type": "server_tool_use", "id": id, "name": "web_search", "input": input or {}}


def search_result(tool_use_id: str = "srvtoolu_1") -> dict[str, Any]:
    """The result of a web search, given whole in its block's start."""
    return {
        "type": "web_search_tool_result",
        "tool_use_id": tool_use_id,
        "content": [
            {
                "type": "web_search_result",
                "url": "https://example.org/",
                "title": "Example",
                "encrypted_content": "RU5D",
                "page_age": None,
            }
        ],
    }


CITATION = {
    "type": "web_search_result_location",
    "url": "https://example.org/",
    "title": "Example",
    "encrypted_index": "SU5E",
    "cited_text": "Hello",
}


def json_delta(text: str) -> dict[str, Any]:
    return {"type": "input_json_delta", "partial_json": text}


def message_end(stop: str = "end_turn") -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]


TEXT_BLOCK = block(
    0,
    {"type": "text", "text": ""},
    {"type": "text_delta", "text": "Hel"},
    {"type": "text_delta", "text": "lo."},
)


def raw(body: str, **more: Any) -> dict[str, Any]:
    return {"raw": body, **more}


SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
"""The web search of `server_tool_use()`, whole, as it is sent back."""


def text_block(index: int, text: str, *more: dict[str, Any]) -> list[dict[str, Any]]:
    return block(index, {"type": "text", "text": ""}, {"type": "text_delta", "text": text}, *more)


def anthropic(*items: dict[str, Any]) -> dict[str, Any]:
    """A raw turn of Anthropic stream items, each under its `event:` name."""
    return raw(events(*items, named=True))


PAUSED = anthropic(
    message_start(),
    *text_block(0, "Let me look. "),
    *block(1, server_tool_use(), json_delta('{"query": '), json_delta('"x"}')),
    *block(2, search_result()),
    *message_end("pause_turn"),
)
"""A turn Anthropic paused in the middle of a web search (`pause_turn`)."""
PAUSED_CONTENT = [{"type": "text", "text": "Let me look. "}, SEARCH, search_result()]
"""The paused content, as it is sent back."""
RESUMED = anthropic(
    message_start(),
    *text_block(0, "Found it.", {"type": "citations_delta", "citation": CITATION}),
    *message_end("end_turn"),
)
"""The continuation of `PAUSED`: the answer, citing what was found."""
