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


# -- public mock servers, byte for byte (docs/wires.md, "Mock servers run") -----------------------


def compact(item: dict[str, Any]) -> str:
    """JSON without blanks, as pydantic's `model_dump_json` and llmock write it."""
    return json.dumps(item, separators=(",", ":"))


def mockllm_chat(*texts: str) -> str:
    """mockllm 0.0.8's chat stream: a role chunk whose content is null, a chunk per piece with
    `role: null` (every chunk its own id), a last chunk of nulls finishing `stop`, then `[DONE]`."""

    def piece(role: str | None, content: str | None, finish: str | None = None) -> str:
        delta = {"role": role, "content": content}
        choice = {"delta": delta, "index": 0, "finish_reason": finish}
        return compact(
            {
                "id": "mock-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "gpt-4",
                "choices": [choice],
            }
        )

    return events(
        piece("assistant", None), *(piece(None, t) for t in texts), piece(None, None, "stop"), "[DONE]"
    )


def mockllm_anthropic(*texts: str) -> str:
    """mockllm 0.0.8's "Anthropic" stream: no event names, no message_start or message_stop, each
    piece a `message_delta` whose delta is a content_block_delta of `{"text": …}`, then `[DONE]`."""
    deltas = (
        {
            "type": "message_delta",
            "id": "mock-1",
            "delta": {"type": "content_block_delta", "index": 0, "delta": {"text": t}},
            "usage": None,
        }
        for t in texts
    )
    return events(*(compact(d) for d in deltas), "[DONE]")


def ai_mock_chat(*texts: str, call: tuple[str, str, str] | None = None) -> str:
    """ai-mock 0.3.1's chat stream: every chunk repeats `role: assistant` and, for a call, its id, type
    and name (no `index`), the text or arguments one character a chunk, no `finish_reason` at all, then
    `[DONE]`; served without a content-type."""

    def piece(content: str | None, args: str | None) -> dict[str, Any]:
        calls = None
        if call is not None:
            calls = [{"id": call[0], "type": "function", "function": {"name": call[1], "arguments": args}}]
        delta = {"role": "assistant", "content": content, "tool_calls": calls}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-4o",
            "system_fingerprint": "mock",
            "choices": [choice],
        }

    pieces = [piece(c, None) for c in "".join(texts)] if call is None else [piece(None, a) for a in call[2]]
    return events(*pieces, "[DONE]")


def llmock_chat(*texts: str, usage: bool = True) -> str:
    """llmock 0.2.2's chat stream: `usage: null` on every chunk when usage was asked for, a first chunk
    with empty content, the pieces, the finish, a usage chunk with no choices, then `[DONE]`."""

    def piece(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
        return compact({**head, "system_fingerprint": None, "choices": [choice], "usage": None})

    tail = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    counts = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    usage_chunk = compact({**tail, "system_fingerprint": None, "choices": [], "usage": counts})
    pieces = [piece({"role": "assistant", "content": ""}), *(piece({"content": t}) for t in texts)]
    return events(*pieces, piece({}, "stop"), *([usage_chunk] if usage else []), "[DONE]")


def llmock_anthropic(*texts: str) -> str:
    """llmock 0.2.2's Anthropic stream: named events, JSON without blanks, a ping after the text block
    starts, the text a piece an event."""
    items = [
        message_start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
            for t in texts
        ),
        {"type": "content_block_stop", "index": 0},
        *message_end(),
    ]
    return "".join(f"event: {item['type']}\ndata: {compact(item)}\n\n" for item in items)


def garbled(body: str, index: int) -> str:
    """`body` with the JSON of its event `index` cut in half, its framing kept: llmock's `malformed`
    stream fault (a chunk garbled or cut short on the way)."""
    parts = body.split("\n\n")
    head, _, data = parts[index].rpartition("data: ")
    parts[index] = f"{head}data: {data[: len(data) // 2]}"
    return "\n\n".join(parts)
