"""How the scripted model frames a turn in each provider's published streaming format."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harnez.testing.script import Turn

CHAT_STOPS = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "content_filter": "content_filter",
}
ANTHROPIC_STOPS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "content_filter": "refusal",
}
RESPONSES_INCOMPLETE = {"max_tokens": "max_output_tokens", "content_filter": "content_filter"}


@dataclass(frozen=True, slots=True)
class Frame:
    """One SSE event: an optional `event:` name and its data (JSON, or a raw string)."""

    event: str | None
    data: dict[str, Any] | str

    def encode(self) -> bytes:
        data = self.data if isinstance(self.data, str) else json.dumps(self.data)
        head = f"event: {self.event}\n" if self.event else ""
        return f"{head}data: {data}\n\n".encode()


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


# --- chat completions ---------------------------------------------------------------------


def chat_usage(usage: dict[str, int]) -> dict[str, Any]:
    prompt = usage.get("input", 0) + usage.get("cache_read", 0) + usage.get("cache_write", 0)
    out: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": usage.get("output", 0)}
    out["total_tokens"] = prompt + out["completion_tokens"]
    if "cache_read" in usage:
        out["prompt_tokens_details"] = {"cached_tokens": usage["cache_read"]}
    if "reasoning" in usage:
        out["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning"]}
    return out


def chat_frames(turn: Turn, model: str, body: dict[str, Any]) -> list[Frame]:
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Frame:
        return Frame(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    frames = [chunk({"role": "assistant", "content": ""})]
    calls = 0
    for part in turn.parts:
        if part.kind == "tool_call":
            start = {
                "index": calls,
                "id": part.id,
                "type": "function",
                "function": {"name": part.name, "arguments": ""},
            }
            frames.append(chunk({"tool_calls": [start]}))
            frames += [
                chunk({"tool_calls": [{"index": calls, "function": {"arguments": c}}]}) for c in part.chunks
            ]
            calls += 1
        else:
            key = "content" if part.kind == "text" else "reasoning_content"
            frames += [chunk({key: c}) for c in part.chunks]
    frames.append(chunk({}, CHAT_STOPS[turn.stop]))
    if turn.usage is not None and (body.get("stream_options") or {}).get("include_usage"):
        frames.append(Frame(None, {**base, "choices": [], "usage": chat_usage(turn.usage)}))
    frames.append(Frame(None, "[DONE]"))
    return frames


def chat_body(turn: Turn, model: str) -> dict[str, Any]:
    text = "".join(c for p in turn.parts if p.kind == "text" for c in p.chunks)
    reasoning = "".join(c for p in turn.parts if p.kind == "reasoning" for c in p.chunks)
    calls = [
        {"id": p.id, "type": "function", "function": {"name": p.name, "arguments": "".join(p.chunks)}}
        for p in turn.parts
        if p.kind == "tool_call"
    ]
    message = _drop_none(
        {
            "role": "assistant",
            "content": text or None,
            "reasoning_content": reasoning or None,
            "tool_calls": calls or None,
        }
    )
    choice = {"index": 0, "message": message, "finish_reason": CHAT_STOPS[turn.stop]}
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
    }
    if turn.usage is not None:
        body["usage"] = chat_usage(turn.usage)
    return body


# --- anthropic messages -------------------------------------------------------------------


def anthropic_usage(usage: dict[str, int] | None) -> dict[str, Any]:
    usage = usage or {}
    return _drop_none(
        {
            "input_tokens": usage.get("input", 0),
            "cache_creation_input_tokens": usage.get("cache_write"),
            "cache_read_input_tokens": usage.get("cache_read"),
            "output_tokens": usage.get("output", 0),
        }
    )


def _anthropic_block(part: Any) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """A part as (opening block, deltas, finished block)."""
    joined = "".join(part.chunks)
    if part.kind == "text":
        return (
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": c} for c in part.chunks],
            {"type": "text", "text": joined},
        )
    if part.kind == "reasoning":
        deltas = [{"type": "thinking_delta", "thinking": c} for c in part.chunks]
        deltas.append({"type": "signature_delta", "signature": part.signature})
        return (
            {"type": "thinking", "thinking": ""},
            deltas,
            {"type": "thinking", "thinking": joined, "signature": part.signature},
        )
    opening = {"type": "tool_use", "id": part.id, "name": part.name, "input": {}}
    deltas = [{"type": "input_json_delta", "partial_json": c} for c in part.chunks]
    try:
        finished = json.loads(joined or "{}")
    except json.JSONDecodeError:
        finished = {}  # a script may send broken arguments on purpose; the stream carries them as-is
    return opening, deltas, {**opening, "input": finished}


def anthropic_frames(turn: Turn, model: str, body: dict[str, Any]) -> list[Frame]:
    usage = anthropic_usage(turn.usage)
    message: dict[str, Any] = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    frames = [
        Frame("message_start", {"type": "message_start", "message": message}),
        Frame("ping", {"type": "ping"}),
    ]
    for index, part in enumerate(turn.parts):
        opening, deltas, _ = _anthropic_block(part)
        frames.append(
            Frame(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        frames += [
            Frame("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        frames.append(Frame("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": ANTHROPIC_STOPS[turn.stop], "stop_sequence": None}
    frames.append(
        Frame(
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}},
        )
    )
    frames.append(Frame("message_stop", {"type": "message_stop"}))
    return frames


def anthropic_body(turn: Turn, model: str) -> dict[str, Any]:
    content = [_anthropic_block(p)[2] for p in turn.parts]
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": model,
        "stop_reason": ANTHROPIC_STOPS[turn.stop],
        "stop_sequence": None,
        "usage": anthropic_usage(turn.usage),
    }


# --- responses ----------------------------------------------------------------------------


def responses_usage(usage: dict[str, int]) -> dict[str, Any]:
    prompt = usage.get("input", 0) + usage.get("cache_read", 0) + usage.get("cache_write", 0)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage.get("cache_read", 0)},
        "output_tokens": usage.get("output", 0),
        "output_tokens_details": {"reasoning_tokens": usage.get("reasoning", 0)},
        "total_tokens": prompt + usage.get("output", 0),
    }


def _responses_item(
    part: Any, n: int
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """A part as (added item, [(delta event, fields)], done item)."""
    if part.kind == "text":
        return _responses_message(part, n)
    if part.kind == "reasoning":
        return _responses_reasoning(part, n)
    return _responses_call(part, n)


def _responses_message(
    part: Any, n: int
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    added = {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "in_progress", "content": []}
    deltas = [
        ("response.output_text.delta", {"item_id": f"msg_{n}", "content_index": 0, "delta": c})
        for c in part.chunks
    ]
    text = {"type": "output_text", "text": "".join(part.chunks), "annotations": []}
    return added, deltas, {**added, "status": "completed", "content": [text]}


def _responses_reasoning(
    part: Any, n: int
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    added = {"id": f"rs_{n}", "type": "reasoning", "summary": []}
    deltas = [
        ("response.reasoning_summary_text.delta", {"item_id": f"rs_{n}", "summary_index": 0, "delta": c})
        for c in part.chunks
    ]
    summary = [{"type": "summary_text", "text": "".join(part.chunks)}]
    return added, deltas, {**added, "summary": summary, "encrypted_content": part.signature}


def _responses_call(
    part: Any, n: int
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    added = {
        "id": f"fc_{n}",
        "type": "function_call",
        "status": "in_progress",
        "call_id": part.id,
        "name": part.name,
        "arguments": "",
    }
    deltas = [
        ("response.function_call_arguments.delta", {"item_id": f"fc_{n}", "delta": c}) for c in part.chunks
    ]
    return added, deltas, {**added, "status": "completed", "arguments": "".join(part.chunks)}


def _responses_final(turn: Turn, model: str, output: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    response: dict[str, Any] = {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "output": output,
        "incomplete_details": None,
    }
    if turn.usage is not None:
        response["usage"] = responses_usage(turn.usage)
    if turn.stop in RESPONSES_INCOMPLETE:
        response.update(status="incomplete", incomplete_details={"reason": RESPONSES_INCOMPLETE[turn.stop]})
        return "response.incomplete", response
    return "response.completed", response


def responses_frames(turn: Turn, model: str, body: dict[str, Any]) -> list[Frame]:
    created = {
        "id": "resp_scripted",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    events: list[tuple[str, dict[str, Any]]] = [("response.created", {"response": created})]
    output = []
    for n, part in enumerate(turn.parts):
        added, deltas, done = _responses_item(part, n)
        events.append(("response.output_item.added", {"output_index": n, "item": added}))
        events += [(name, {"output_index": n, **fields}) for name, fields in deltas]
        events.append(("response.output_item.done", {"output_index": n, "item": done}))
        output.append(done)
    name, response = _responses_final(turn, model, output)
    events.append((name, {"response": response}))
    return [
        Frame(name, {"type": name, "sequence_number": i, **fields}) for i, (name, fields) in enumerate(events)
    ]


def responses_body(turn: Turn, model: str) -> dict[str, Any]:
    output = [_responses_item(p, n)[2] for n, p in enumerate(turn.parts)]
    return _responses_final(turn, model, output)[1]


# --- errors -------------------------------------------------------------------------------

_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(kind: str, status: int) -> dict[str, Any]:
    """The provider's error shape for a status, with a message naming it."""
    message = f"scripted error {status}"
    if kind == "anthropic":
        return {
            "type": "error",
            "error": {"type": _ANTHROPIC_ERRORS.get(status, "api_error"), "message": message},
        }
    return {"error": {"message": message, "type": "scripted_error", "code": status}}


RENDERERS = {
    "chat": (chat_frames, chat_body),
    "responses": (responses_frames, responses_body),
    "anthropic": (anthropic_frames, anthropic_body),
}
