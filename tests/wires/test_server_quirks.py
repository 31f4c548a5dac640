"""Streams from servers that bend the published formats (older Ollama, compatible gateways, simple
mock servers), sent as raw SSE over loopback: each still gives the answer, once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harnez.wires import collect
from tests.wires.helpers import READ_TOOL, request

SSE = {"content-type": "text/event-stream"}


def sse(*items: dict[str, Any] | str, named: bool = False) -> str:
    """An SSE body: each item as a `data:` line (with its `type` as the `event:` name when `named`)."""
    lines = []
    for item in items:
        if isinstance(item, str):
            lines.append(f"data: {item}\n\n")
        else:
            name = f"event: {item['type']}\n" if named and "type" in item else ""
            lines.append(f"{name}data: {json.dumps(item)}\n\n")
    return "".join(lines)


def chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
    return {"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **more}


async def _turn(scripted_model, make_wire, wire: str, body: str):
    scripted_model.add({"status": 200, "body": body, "headers": SSE})
    turn, events = await collect(make_wire(wire).stream(request(tools=(READ_TOOL,))))
    assert len(scripted_model.requests) == 1, turn.failure  # answered, not retried
    return turn, events


async def test_chat_tool_call_deltas_without_an_index_make_one_call(scripted_model, make_wire) -> None:
    body = sse(
        chunk(
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "read", "arguments": ""}}]}
        ),
        chunk({"tool_calls": [{"function": {"arguments": '{"path": '}}]}),
        chunk({"tool_calls": [{"function": {"arguments": '"a.py"}'}}]}),
        chunk({"tool_calls": [{"id": "c2", "function": {"name": "read", "arguments": '{"path": "b.py"}'}}]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
    turn, _ = await _turn(scripted_model, make_wire, "openai-chat", body)
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("c1", "read", {"path": "a.py"}),
        ("c2", "read", {"path": "b.py"}),
    ]
    assert turn.stop is not None and turn.stop.reason == "tool_use" and turn.failure is None


@pytest.mark.parametrize("with_call", [False, True])
async def test_chat_done_without_a_finish_reason_ends_the_answer(
    scripted_model, make_wire, with_call
) -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "read", "arguments": '{"path": "a.py"}'}}
    body = sse(
        chunk({"content": "Hello "}),
        chunk({"content": "there."}),
        *([chunk({"tool_calls": [call]})] if with_call else []),
        "[DONE]",
    )
    turn, _ = await _turn(scripted_model, make_wire, "openai-chat", body)
    assert turn.text == "Hello there." and turn.failure is None and turn.stop is not None
    assert turn.stop.reason == ("tool_use" if with_call else "end_turn") and turn.stop.raw is None
    assert [c.arguments for c in turn.tool_calls] == ([{"path": "a.py"}] if with_call else [])


async def test_chat_a_message_where_the_delta_belongs_is_read(scripted_model, make_wire) -> None:
    body = sse(
        {"model": "m", "choices": [{"index": 0, "message": {"content": "Whole."}, "finish_reason": "stop"}]}
    )
    turn, _ = await _turn(scripted_model, make_wire, "openai-chat", body + sse("[DONE]"))
    assert turn.text == "Whole." and turn.stop is not None and turn.stop.reason == "end_turn"


async def test_anthropic_a_stream_ending_after_its_stop_reason_is_complete(scripted_model, make_wire) -> None:
    body = sse(
        {
            "type": "message_start",
            "message": {"model": "claude-x", "usage": {"input_tokens": 9, "output_tokens": 1}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done here."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        named=True,
    )  # no message_stop
    turn, _ = await _turn(scripted_model, make_wire, "anthropic-messages", body)
    assert turn.text == "Done here." and turn.failure is None
    assert turn.stop is not None and turn.stop.reason == "end_turn" and turn.usage is not None
    assert (turn.usage.input, turn.usage.output) == (9, 3)


async def test_anthropic_a_stream_cut_inside_a_block_is_still_a_cut(scripted_model, make_wire) -> None:
    body = sse(
        {"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 9}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half"}},
        named=True,
    )
    scripted_model.add({"status": 200, "body": body, "headers": SSE}, {"reply": [{"text": "Whole."}]})
    turn, _ = await collect(make_wire("anthropic-messages").stream(request()))
    assert turn.text == "Whole." and len(turn.retries) == 1  # the cut one was retried


RESPONSE_OUTPUT = [
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "I'll read it."}],
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path": "a.py"}',
    },
]


async def test_responses_an_answer_given_only_in_the_completed_response_is_read(
    scripted_model, make_wire
) -> None:
    body = sse(
        {"type": "response.created", "response": {"model": "gpt-x"}},
        {
            "type": "response.completed",
            "response": {"model": "gpt-x", "status": "completed", "output": RESPONSE_OUTPUT},
        },
        named=True,
    )
    turn, _ = await _turn(scripted_model, make_wire, "openai-responses", body)
    assert turn.text == "I'll read it." and turn.failure is None
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [("call_1", {"path": "a.py"})]
    assert turn.stop is not None and turn.stop.reason == "tool_use"


async def test_responses_text_given_by_deltas_and_again_whole_is_shown_once(
    scripted_model, make_wire
) -> None:
    message, call = RESPONSE_OUTPUT
    body = sse(
        {"type": "response.created", "response": {"model": "gpt-x"}},
        {"type": "response.output_item.added", "item": {**message, "content": []}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "I'll "},
        {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "read it."},
        {"type": "response.output_text.done", "item_id": "msg_1", "text": "I'll read it."},
        {"type": "response.output_item.done", "item": message},
        {"type": "response.output_item.added", "item": {**call, "arguments": ""}},
        {"type": "response.output_item.done", "item": call},
        {
            "type": "response.completed",
            "response": {"model": "gpt-x", "status": "completed", "output": RESPONSE_OUTPUT},
        },
        named=True,
    )
    turn, _ = await _turn(scripted_model, make_wire, "openai-responses", body)
    assert turn.text == "I'll read it." and len(turn.tool_calls) == 1 and turn.failure is None


async def test_responses_text_given_only_when_its_part_is_done_is_shown_once(
    scripted_model, make_wire
) -> None:
    message = RESPONSE_OUTPUT[0]
    body = sse(
        {"type": "response.output_text.done", "item_id": "msg_1", "text": "I'll read it."},
        {"type": "response.output_item.done", "item": message},
        {
            "type": "response.completed",
            "response": {"model": "gpt-x", "status": "completed", "output": [message]},
        },
        named=True,
    )
    turn, _ = await _turn(scripted_model, make_wire, "openai-responses", body)
    assert turn.text == "I'll read it." and turn.stop is not None and turn.stop.reason == "end_turn"


async def test_chat_tool_arguments_sent_as_an_object_are_read(scripted_model, make_wire) -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "read", "arguments": {"path": "a.py"}}}
    body = sse(chunk({"tool_calls": [call]}), chunk({}, "tool_calls"), "[DONE]")
    turn, _ = await _turn(scripted_model, make_wire, "openai-chat", body)
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [("c1", {"path": "a.py"})]


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic-messages"])
async def test_items_of_an_unexpected_shape_are_skipped_with_a_warning(
    scripted_model, make_wire, wire
) -> None:
    if wire == "openai-chat":
        odd = [chunk({"tool_calls": [{"index": 0, "function": "read"}]}), "5"]
        body = sse(chunk({"content": "Still "}), *odd, chunk({"content": "here."}, "stop"), "[DONE]")
    else:
        body = sse(
            {"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 2}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1"}},
            {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": "Still here."},
            },
            {"type": "content_block_stop", "index": 1},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
            {"type": "message_stop"},
            named=True,
        )
    turn, _ = await _turn(scripted_model, make_wire, wire, body)
    assert turn.text == "Still here." and turn.failure is None and turn.stop is not None
    assert {w.code for w in turn.warnings} == {"misshapen-stream-item"}


async def test_anthropic_tool_input_given_whole_at_the_blocks_start_is_read(
    scripted_model, make_wire
) -> None:
    block = {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.py"}}
    body = sse(
        {"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 2}}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
        named=True,
    )
    turn, _ = await _turn(scripted_model, make_wire, "anthropic-messages", body)
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [("t1", {"path": "a.py"})]


async def test_chat_content_streamed_as_a_list_of_parts_is_text(scripted_model, make_wire) -> None:
    body = sse(
        chunk({"content": [{"type": "text", "text": "Parts "}]}),
        chunk({"content": [{"type": "text", "text": "join."}]}, "stop"),
        "[DONE]",
    )
    turn, _ = await _turn(scripted_model, make_wire, "openai-chat", body)
    assert turn.text == "Parts join." and turn.warnings == []


async def test_anthropic_text_given_in_the_blocks_start_is_kept(scripted_model, make_wire) -> None:
    body = sse(
        {"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 2}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "Hm. "},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Yes."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "Hello "}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "there."}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
        named=True,
    )
    turn, _ = await _turn(scripted_model, make_wire, "anthropic-messages", body)
    assert (turn.reasoning, turn.text) == ("Hm. Yes.", "Hello there.")
    assert turn.opaque[0].item["thinking"] == "Hm. Yes."  # sent back whole next turn
