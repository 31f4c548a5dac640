"""Tools a provider runs itself, and calls named in other ways: Anthropic's server tools (their blocks
sent back in place, a `pause_turn` continued), a Responses call given only its item `id`. Each model
call is a real exchange with the scripted model over loopback; what is sent back is read from the
next request's body."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from harnez.wires import WIRES, Endpoint, Retry, Stop, UsageReport, collect
from harnez.wires.anthropic import CONTAINER_MARGIN, MAX_PAUSES
from harnez.wires.base import WireRequest
from harnez.wires.catalogue import UNKNOWN_MODEL
from harnez.wires.conversation import AssistantMessage, Conversation, ToolResult, UserMessage
from harnez.wires.http import sent_back
from tests.wires import sse_bodies as sse
from tests.wires.helpers import READ_TOOL
from tests.wires.sse_bodies import PAUSED, PAUSED_CONTENT, RESUMED, SEARCH, anthropic, text_block


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
    assert turn.usage.context == turn.usage.context_tokens == 9 + 5  # the last call's prompt and answer
    assert not turn.warnings


async def test_a_continued_answer_is_replayed_block_for_block_in_the_next_request(
    scripted_model, make_wire
) -> None:
    scripted_model.add(
        PAUSED, RESUMED, anthropic(sse.message_start(), *text_block(0, "ok"), *sse.message_end())
    )
    wire = make_wire("anthropic-messages")
    turn, _ = await collect(wire.stream(ask()))
    stored = json.loads(json.dumps(ask().conversation.append(turn.to_message()).to_json()))
    history = Conversation.from_json(stored).append(UserMessage("and then?"))
    await collect(wire.stream(WireRequest("claude-sonnet-4-5", history)))
    assistant = scripted_model.requests[-1].body["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [*PAUSED_CONTENT, {"type": "text", "text": "Found it.", "citations": [sse.CITATION]}],
    }


async def test_server_tool_blocks_are_kept_beside_a_client_call_for_the_next_request(
    scripted_model, make_wire
) -> None:
    scripted_model.add(
        anthropic(
            sse.message_start(),
            *text_block(0, "Searching. "),
            *sse.block(1, sse.server_tool_use(), sse.json_delta('{"query": "x"}')),
            *sse.block(2, sse.search_result()),
            *sse.block(3, sse.tool_use(), sse.json_delta('{"path": "a.py"}')),
            *sse.message_end("tool_use"),
        ),
        anthropic(sse.message_start(), *text_block(0, "Read."), *sse.message_end()),
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
        sse.search_result(),
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


CONTAINER = {"id": "container_011CQ", "expires_at": "2999-12-06T01:00:00Z"}
CODE_RUN = {"type": "server_tool_use", "id": "srvtoolu_2", "name": "code_execution", "input": {"code": "1"}}
CODE_RESULT = {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": {"stdout": "1"}}


async def test_a_continuation_goes_on_in_the_container_the_paused_call_ran_its_code_in(
    scripted_model, make_wire
) -> None:
    """Anthropic names the container in `message_delta` (streamed) or on the message (whole): the
    continuation sends its id, so the code goes on where its files are; it is no content block."""
    streamed = anthropic(
        sse.message_start(),
        *sse.block(0, CODE_RUN),
        *sse.block(1, CODE_RESULT),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "pause_turn", "stop_sequence": None, "container": CONTAINER},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    )
    whole = {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [CODE_RUN, CODE_RESULT],
        "stop_reason": "pause_turn",
        "container": {**CONTAINER, "id": "container_whole"},
        "usage": {"input_tokens": 9, "output_tokens": 5},
    }
    answered_whole = {"status": 200, "headers": {"content-type": "application/json"}, "body": whole}
    scripted_model.add(streamed, RESUMED, answered_whole, RESUMED)
    wire = make_wire("anthropic-messages")
    for _ in range(2):
        turn, _ = await collect(wire.stream(ask()))
        assert turn.failure is None and turn.text == "Found it."
        assert [o.item["type"] for o in turn.opaque] == [
            "server_tool_use",
            "code_execution_tool_result",
            "container",  # kept for the requests that follow (no content block)
            "text",
        ]
    first, continued, first_whole, continued_whole = (r.body for r in scripted_model.requests)
    assert "container" not in first and "container" not in first_whole
    assert continued["container"] == "container_011CQ"
    assert continued_whole["container"] == "container_whole"
    assert continued["messages"][-1]["content"] == [CODE_RUN, CODE_RESULT]


LIVES = "2999-12-06T01:00:00.123456Z"
DONE = anthropic(sse.message_start(), *text_block(0, "Done."), *sse.message_end())


def code_then_read(expires_at: str) -> dict[str, object]:
    """An answer that ran code in a container (named on its message, expiring at `expires_at`) and
    then calls read."""
    start = sse.message_start()
    start["message"]["container"] = {"id": "container_loop", "expires_at": expires_at}
    return anthropic(
        start,
        *sse.block(0, CODE_RUN),
        *sse.block(1, CODE_RESULT),
        *sse.block(2, sse.tool_use(), sse.json_delta('{"path": "a.py"}')),
        *sse.message_end("tool_use"),
    )


def from_now(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize(
    ("expires_at", "reused"),
    [(LIVES, True), (from_now(-3600), False), (from_now(CONTAINER_MARGIN / 2), False)],
    ids=["alive", "expired", "expiring"],
)
async def test_the_tool_loop_and_later_tasks_go_on_in_the_container_while_it_lives(
    scripted_model, make_wire, expires_at, reused
) -> None:
    """The files the model's code made stay where it made them: the next request of the tool loop, and
    the session's next task (its history read back from JSON), name the container; once it has
    expired (or is about to), none is named and Anthropic makes a new one."""
    scripted_model.add(code_then_read(expires_at), DONE, DONE)
    wire = make_wire("anthropic-messages")
    turn, _ = await collect(wire.stream(ask()))
    loop = ask().conversation.append(turn.to_message(), ToolResult("t1", "contents"))
    follow, _ = await collect(wire.stream(WireRequest("claude-sonnet-4-5", loop, (READ_TOOL,))))
    stored = json.loads(json.dumps(loop.append(follow.to_message()).to_json()))
    later = Conversation.from_json(stored).append(UserMessage("and the file?"))
    await collect(wire.stream(WireRequest("claude-sonnet-4-5", later, (READ_TOOL,))))
    first, in_loop, next_task = (r.body for r in scripted_model.requests)
    expected = "container_loop" if reused else None
    assert "container" not in first
    assert (in_loop.get("container"), next_task.get("container")) == (expected, expected)
    assert next_task["messages"][1]["content"] == [
        CODE_RUN,
        CODE_RESULT,
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.py"}},
    ]


async def test_a_container_is_named_only_to_the_server_that_made_it(scripted_model, make_wire) -> None:
    """A session moved to another Anthropic-compatible server: it never made the container (a strict
    one refuses the field), so none is named to it, nor are the blocks of the code run in it."""
    scripted_model.add(code_then_read(LIVES))
    turn, _ = await collect(make_wire("anthropic-messages").stream(ask()))
    loop = ask().conversation.append(turn.to_message(), ToolResult("t1", "contents"))
    elsewhere = WIRES["anthropic-messages"](
        Endpoint("proxy", "anthropic-messages", "http://127.0.0.1:9/proxy", None)
    )
    try:
        body = elsewhere.body(WireRequest("claude-sonnet-4-5", loop, (READ_TOOL,)), UNKNOWN_MODEL)
    finally:
        await elsewhere.aclose()
    assert "container" not in body
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.py"}}
    ]


async def test_a_request_offering_no_tools_names_no_container_but_for_its_own_paused_call(
    scripted_model, make_wire
) -> None:
    """A request that offers no tools (a compaction's summary) runs no code: Anthropic documents the
    container for code execution only, so the live one is not named to it. A paused call of such a
    request that ran code all the same (the server offered code execution) goes on in its container."""
    start = sse.message_start()
    start["message"]["container"] = {"id": "container_paused", "expires_at": LIVES}
    paused = anthropic(
        start, *sse.block(0, CODE_RUN), *sse.block(1, CODE_RESULT), *sse.message_end("pause_turn")
    )
    scripted_model.add(code_then_read(LIVES), DONE, paused, DONE)
    wire = make_wire("anthropic-messages")
    turn, _ = await collect(wire.stream(ask()))
    # the code run's blocks and container kept, its tool call not (Anthropic refuses tool_use blocks in
    # a request that offers no tools: a compaction's summary sends the conversation as text)
    ran = AssistantMessage(turn.text, opaque=turn.to_message().opaque)
    loop = ask().conversation.append(ran)
    summary = WireRequest("claude-sonnet-4-5", loop.append(UserMessage("Summarise the conversation.")))
    for _ in range(2):
        answered, _ = await collect(wire.stream(summary))
        assert answered.failure is None and answered.text == "Done."
    assert len(scripted_model.requests) == 4
    _, summarised, first, continued = (r.body for r in scripted_model.requests)
    assert "container" not in summarised and "container" not in first
    assert continued["container"] == "container_paused"


async def test_a_container_the_server_refuses_is_left_out_of_the_request_sent_again(
    scripted_model, make_wire
) -> None:
    """Anthropic refuses a container it has ended (its clock ahead of ours, or deleted): the request
    goes once more without it (a new container), instead of failing every later request."""
    refused = {
        "status": 400,
        "body": {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "Container container_loop has expired"},
        },
    }
    scripted_model.add(code_then_read(LIVES), refused, DONE)
    wire = make_wire("anthropic-messages")
    turn, _ = await collect(wire.stream(ask()))
    loop = ask().conversation.append(turn.to_message(), ToolResult("t1", "contents"))
    follow, _ = await collect(wire.stream(WireRequest("claude-sonnet-4-5", loop, (READ_TOOL,))))
    assert follow.failure is None and follow.text == "Done."
    named, again = (r.body for r in scripted_model.requests[1:])
    assert named["container"] == "container_loop" and "container" not in again
    assert again["messages"] == named["messages"]


async def test_a_continuation_that_fails_in_passing_is_tried_again_by_itself(
    scripted_model, make_wire
) -> None:
    """The server tools of the paused call are not run again: only the continuation is sent again,
    and after its `Retry` the paused call's text is given again, so the turn reads as one answer."""
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    scripted_model.add(PAUSED, anthropic(sse.message_start(), *text_block(0, "Fou"), overloaded), RESUMED)
    turn, seen = await collect(make_wire("anthropic-messages", base_delay=0.01).stream(ask()))
    assert turn.failure is None and len(scripted_model.requests) == 3
    _, continued, again = (r.body for r in scripted_model.requests)
    assert again == continued and continued["messages"][-1]["content"] == PAUSED_CONTENT
    assert [e.attempt for e in seen if isinstance(e, Retry)] == [2]
    assert turn.text == "Let me look. Found it."
    assert [sent_back(o.item) for o in turn.opaque][:3] == PAUSED_CONTENT
    assert turn.usage is not None and (turn.usage.input, turn.usage.output) == (18, 10)


async def test_a_responses_call_named_only_by_its_item_id_is_answered_under_that_id(
    scripted_model, make_wire
) -> None:
    call = {"type": "function_call", "id": "fc_7", "name": "read", "arguments": '{"path": "a.py"}'}
    scripted_model.add(
        sse.raw(
            sse.events(
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
