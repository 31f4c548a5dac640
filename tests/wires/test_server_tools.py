"""Tools a provider runs itself, and calls named in other ways: Anthropic's server tools (their blocks
sent back in place, a `pause_turn` continued), a Responses call given only its item `id`. Each model
call is a real exchange with the scripted model over loopback; what is sent back is read from the
next request's body."""

from __future__ import annotations

import json
from typing import Any

from harnez.wires import Stop, UsageReport, collect
from harnez.wires.anthropic import MAX_PAUSES
from harnez.wires.base import WireRequest
from harnez.wires.conversation import Conversation, ToolResult, UserMessage
from tests.wires.helpers import READ_TOOL
from tests.wires.sse_bodies import (
    CITATION,
    block,
    events,
    json_delta,
    message_end,
    message_start,
    raw,
    search_result,
    server_tool_use,
    tool_use,
)

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}


def text_block(index: int, text: str, *more: dict[str, Any]) -> list[dict[str, Any]]:
    return block(index, {"type": "text", "text": ""}, {"type": "text_delta", "text": text}, *more)


def anthropic(*items: dict[str, Any]) -> dict[str, Any]:
    return raw(events(*items, named=True))


PAUSED = anthropic(
    message_start(),
    *text_block(0, "Let me look. "),
    *block(1, server_tool_use(), json_delta('{"query": '), json_delta('"x"}')),
    *block(2, search_result()),
    *message_end("pause_turn"),
)
PAUSED_CONTENT = [
    {"type": "text", "text": "Let me look. "},
    SEARCH,
    search_result(),
]
RESUMED = anthropic(
    message_start(),
    *text_block(0, "Found it.", {"type": "citations_delta", "citation": CITATION}),
    *message_end("end_turn"),
)


def ask(text: str = "search") -> WireRequest:
    return WireRequest("claude-sonnet-4-5", Conversation("sys", (UserMessage(text),)), (READ_TOOL,))


async def test_a_paused_turn_is_continued_with_its_content_sent_back_unchanged(
    scripted_model, make_wire
) -> None:
    scripted_model.add(PAUSED, RESUMED)
    turn, seen = await collect(make_wire("anthropic-messages").stream(ask()))
    assert turn.failure is None and len(scripted_model.requests) == 2
    first, second = (r.body for r in scripted_model.requests)
    # the request again, the paused content as the last assistant message, block for block
    assert second["messages"][:-1] == first["messages"]
    assert second["messages"][-1] == {"role": "assistant", "content": PAUSED_CONTENT}
    assert {k: v for k, v in second.items() if k != "messages"} == {
        k: v for k, v in first.items() if k != "messages"
    }
    # one answer: its text goes on, one stop (the last call's), the usage of both calls
    assert turn.text == "Let me look. Found it."
    assert [e.raw for e in seen if isinstance(e, Stop)] == ["end_turn"]
    assert turn.stop is not None and turn.stop.reason == "end_turn"
    assert len([e for e in seen if isinstance(e, UsageReport)]) == 1
    assert turn.usage is not None and (turn.usage.input, turn.usage.output) == (18, 10)
    assert not turn.warnings


async def test_a_continued_answer_is_replayed_block_for_block_in_the_next_request(
    scripted_model, make_wire
) -> None:
    scripted_model.add(PAUSED, RESUMED, anthropic(message_start(), *text_block(0, "ok"), *message_end()))
    wire = make_wire("anthropic-messages")
    turn, _ = await collect(wire.stream(ask()))
    stored = json.loads(json.dumps(ask().conversation.append(turn.to_message()).to_json()))
    history = Conversation.from_json(stored).append(UserMessage("and then?"))
    await collect(wire.stream(WireRequest("claude-sonnet-4-5", history)))
    assistant = scripted_model.requests[-1].body["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [*PAUSED_CONTENT, {"type": "text", "text": "Found it.", "citations": [CITATION]}],
    }


async def test_server_tool_blocks_are_kept_beside_a_client_call_for_the_next_request(
    scripted_model, make_wire
) -> None:
    scripted_model.add(
        anthropic(
            message_start(),
            *text_block(0, "Searching. "),
            *block(1, server_tool_use(), json_delta('{"query": "x"}')),
            *block(2, search_result()),
            *block(3, tool_use(), json_delta('{"path": "a.py"}')),
            *message_end("tool_use"),
        ),
        anthropic(message_start(), *text_block(0, "Read."), *message_end()),
    )
    wire = make_wire("anthropic-messages")
    turn, _ = await collect(wire.stream(ask()))
    assert [c.id for c in turn.tool_calls] == ["t1"] and turn.text == "Searching. "
    history = ask().conversation.append(turn.to_message(), ToolResult("t1", "contents"))
    await collect(wire.stream(WireRequest("claude-sonnet-4-5", history, (READ_TOOL,))))
    assert len(scripted_model.requests) == 2
    assert scripted_model.requests[-1].body["messages"][1]["content"] == [
        {"type": "text", "text": "Searching. "},
        SEARCH,
        search_result(),
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.py"}},
    ]


async def test_a_turn_paused_again_and_again_ends_after_the_last_continuation(
    scripted_model, make_wire
) -> None:
    scripted_model.add(*[PAUSED] * (MAX_PAUSES + 1))
    turn, _ = await collect(make_wire("anthropic-messages").stream(ask()))
    assert len(scripted_model.requests) == MAX_PAUSES + 1 and turn.failure is None
    assert turn.stop is not None and (turn.stop.reason, turn.stop.raw) == ("other", "pause_turn")
    # each continuation sends back everything paused so far, as one assistant turn
    _, assistant = scripted_model.requests[-1].body["messages"]
    assert assistant["content"] == PAUSED_CONTENT * MAX_PAUSES


async def test_a_responses_call_named_only_by_its_item_id_is_answered_under_that_id(
    scripted_model, make_wire
) -> None:
    call = {"type": "function_call", "id": "fc_7", "name": "read", "arguments": '{"path": "a.py"}'}
    scripted_model.add(
        raw(
            events(
                {"type": "response.output_item.added", "item": {**call, "arguments": ""}},
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": "fc_7",
                    "delta": call["arguments"],
                },
                {"type": "response.output_item.done", "item": call},
                {"type": "response.completed", "response": {"status": "completed"}},
                named=True,
            )
        ),
        {"reply": [{"text": "done"}]},
    )
    wire = make_wire("openai-responses")
    turn, _ = await collect(wire.stream(ask()))
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [("fc_7", {"path": "a.py"})]
    assert not turn.warnings
    history = ask().conversation.append(turn.to_message(), ToolResult("fc_7", "contents"))
    follow, _ = await collect(wire.stream(WireRequest("gpt-5", history, (READ_TOOL,))))
    assert follow.text == "done"
    sent = scripted_model.requests[-1].body["input"]
    assert {"type": "function_call_output", "call_id": "fc_7", "output": "contents"} in sent
    assert [i["call_id"] for i in sent if i.get("type") == "function_call"] == ["fc_7"]
