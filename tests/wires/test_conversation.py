"""The portable conversation: JSON round trips, opaque items replayed on their wire only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harnez.errors import HarnezError
from harnez.testing.scripted_model import ScriptedModel
from harnez.wires import WIRES, Endpoint, WireWarning, collect
from harnez.wires.base import WireRequest
from harnez.wires.catalogue import UNKNOWN_MODEL
from harnez.wires.conversation import (
    AssistantMessage,
    Conversation,
    Opaque,
    ToolCall,
    ToolResult,
    UserMessage,
    item_from_json,
)
from harnez.wires.http import origin_of
from tests.wires import sse_bodies as sse
from tests.wires.helpers import READ_TOOL, SECRET
from tests.wires.sse_bodies import SEARCH, anthropic, chunk, events, raw, text_block

THINKING = {
    "reply": [
        {"reasoning": "ponder", "signature": "SIG-1"},
        {"tool_call": {"id": "call_9", "name": "read", "arguments": {"path": "a"}}},
    ]
}


def test_every_item_survives_a_json_round_trip() -> None:
    conv = Conversation(
        "sys",
        (
            UserMessage("hi"),
            AssistantMessage(
                "t",
                "r",
                (ToolCall("c1", "read", {"path": "x", "n": [1, 2]}),),
                (Opaque("anthropic-messages", {"type": "thinking", "thinking": "r", "signature": "s"}),),
            ),
            ToolResult("c1", "out", is_error=True),
        ),
    )
    text = json.dumps(conv.to_json())
    assert Conversation.from_json(json.loads(text)) == conv
    assert [item_from_json(json.loads(json.dumps(i.to_json()))) for i in conv.items] == list(conv.items)


def test_an_unknown_item_type_is_an_error_that_says_why() -> None:
    with pytest.raises(HarnezError, match="unknown conversation item type 'image'"):
        item_from_json({"type": "image"})


async def turn_then_follow_up(scripted_model, make_wire, first: str, second: str):
    scripted_model.add(THINKING, {"reply": [{"text": "done"}]})
    start = Conversation("sys", (UserMessage("go"),))
    turn, _ = await collect(make_wire(first).stream(WireRequest("claude-sonnet-4-5", start, thinking="high")))
    history = Conversation.from_json(
        json.loads(json.dumps(start.append(turn.to_message(), ToolResult("call_9", "contents")).to_json()))
    )
    follow, events = await collect(
        # a tool loop's next request offers its tools (Anthropic refuses tool blocks without them)
        make_wire(second).stream(WireRequest("claude-sonnet-4-5", history, (READ_TOOL,), thinking="high"))
    )
    assert follow.text == "done"
    return scripted_model.requests[-1].body, [e for e in events if isinstance(e, WireWarning)]


async def test_anthropic_thinking_blocks_are_replayed_verbatim_with_their_signature(
    scripted_model, make_wire
) -> None:
    body, warnings = await turn_then_follow_up(
        scripted_model, make_wire, "anthropic-messages", "anthropic-messages"
    )
    assert warnings == []
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "ponder", "signature": "SIG-1"},
            {"type": "tool_use", "id": "call_9", "name": "read", "input": {"path": "a"}},
        ],
    }


async def test_responses_reasoning_items_are_replayed_before_the_call(scripted_model, make_wire) -> None:
    body, warnings = await turn_then_follow_up(
        scripted_model, make_wire, "openai-responses", "openai-responses"
    )
    assert warnings == []
    reasoning, call, output = body["input"][1:4]
    assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"] == "SIG-1"
    assert reasoning["summary"] == [{"type": "summary_text", "text": "ponder"}]
    assert call == {
        "type": "function_call",
        "call_id": "call_9",
        "name": "read",
        "arguments": '{"path": "a"}',
    }
    assert output == {"type": "function_call_output", "call_id": "call_9", "output": "contents"}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("anthropic-messages", "openai-chat"),
        ("anthropic-messages", "openai-responses"),
        ("openai-responses", "anthropic-messages"),
        ("openai-chat", "anthropic-messages"),
    ],
)
async def test_a_wire_switch_keeps_the_portable_history_and_warns_about_dropped_items(
    scripted_model, make_wire, first, second
) -> None:
    body, warnings = await turn_then_follow_up(scripted_model, make_wire, first, second)
    [warning] = warnings
    assert warning.code == "opaque-items-dropped" and first in warning.message and second in warning.message
    assert warning.raw[0]["wire"] == first
    sent = json.dumps(body)
    assert "SIG-1" not in sent and "ponder" not in sent
    assert "call_9" in sent and "contents" in sent


def chat_thinking_then_call(field: str) -> dict[str, object]:
    """A chat answer (DeepSeek's or Kimi's thinking mode) that reasons in `field`, then calls a tool."""
    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    return raw(
        events(
            chunk({"role": "assistant", field: "Let me "}),
            chunk({field: "read it."}),
            chunk({"tool_calls": [call]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        )
    )


@pytest.mark.parametrize(("field", "sent_back"), [("reasoning_content", True), ("reasoning", False)])
async def test_chat_reasoning_content_goes_back_with_its_message_in_the_tool_loop(
    scripted_model, make_wire, field, sent_back
) -> None:
    scripted_model.add(chat_thinking_then_call(field), {"reply": [{"text": "done"}]})
    start = Conversation("sys", (UserMessage("go"),))
    wire = make_wire("openai-chat")
    turn, _ = await collect(wire.stream(WireRequest("deepseek-v4", start, thinking="high")))
    assert turn.reasoning == "Let me read it."
    stored = json.loads(json.dumps(start.append(turn.to_message(), ToolResult("call_9", "x")).to_json()))
    await collect(wire.stream(WireRequest("deepseek-v4", Conversation.from_json(stored), thinking="high")))
    assistant = scripted_model.requests[-1].body["messages"][2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_9"
    assert assistant.get("reasoning_content") == ("Let me read it." if sent_back else None)
    assert "reasoning" not in assistant


def thinking(*texts: str) -> dict[str, object]:
    """A Mistral `thinking` content part holding text parts."""
    return {"type": "thinking", "thinking": [{"type": "text", "text": text} for text in texts]}


@pytest.mark.parametrize(
    ("base_url", "sent_back"), [("https://api.mistral.ai/v1", True), ("http://127.0.0.1:8000/v1", False)]
)
async def test_mistral_thinking_parts_go_back_as_a_thinking_part_of_their_message(
    scripted_model, make_wire, base_url, sent_back
) -> None:
    """Mistral streamed its reasoning as `thinking` parts; its API takes them back in the assistant
    message, before the text (other chat servers refuse a part they do not know: text only)."""
    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    scripted_model.add(
        raw(
            events(
                chunk({"role": "assistant", "content": [thinking("Let me ")]}),
                chunk({"content": [thinking(f"read it with {SECRET}.")]}),
                chunk({"content": [{"type": "text", "text": "Reading."}]}),
                chunk({"tool_calls": [call]}),
                chunk({}, "tool_calls"),
                "[DONE]",
            )
        )
    )
    start = Conversation("sys", (UserMessage("go"),))
    turn, _ = await collect(make_wire("openai-chat").stream(WireRequest("magistral-medium", start)))
    assert (turn.reasoning, turn.text) == ("Let me read it with [redacted].", "Reading.")
    text = json.dumps(start.append(turn.to_message(), ToolResult("call_9", "x")).to_json())
    assert SECRET not in text
    # as if the server at `base_url` had given the answer: its extras go back to it alone
    served = origin_of(scripted_model.base_url("openai-chat"))
    stored = json.loads(text.replace(json.dumps(served), json.dumps(origin_of(base_url))))
    wire = WIRES["openai-chat"](Endpoint("mistral", "openai-chat", base_url, None, None))
    try:
        follow = WireRequest("magistral-medium", Conversation.from_json(stored))
        assistant = wire.body(follow, UNKNOWN_MODEL)["messages"][2]
    finally:
        await wire.aclose()
    assert assistant["tool_calls"][0]["id"] == "call_9"
    if sent_back:
        assert assistant["content"] == [
            thinking("Let me read it with [redacted]."),
            {"type": "text", "text": "Reading."},
        ]
    else:
        assert assistant["content"] == "Reading."


def detail(kind: str, index: int, **fields: object) -> dict[str, object]:
    return {"type": f"reasoning.{kind}", "index": index, "format": "anthropic-claude-v1", **fields}


OPENROUTER_CALL = {
    "index": 0,
    "id": "call_9",
    "type": "function",
    "function": {"name": "read", "arguments": "{}"},
}
OPENROUTER_DETAILS = [
    detail("text", 0, text=f"Let me read it with {SECRET}.", signature="U0lH"),
    detail("encrypted", 1, data="RU5DUllQVEVE"),
]
"""What OpenRouter's reasoning details of `OPENROUTER_ANSWERS` are, whole (the key masked)."""
OPENROUTER_ANSWERS = {
    "streamed": raw(
        events(
            chunk(
                {
                    "role": "assistant",
                    "reasoning": "Let me ",
                    "reasoning_details": [detail("text", 0, text="Let me ")],
                }
            ),
            chunk(
                {
                    "reasoning": f"read it with {SECRET}.",
                    "reasoning_details": [detail("text", 0, text=f"read it with {SECRET}.")],
                }
            ),
            chunk({"reasoning_details": [detail("text", 0, text="", signature="U0lH")]}),
            chunk({"reasoning_details": [detail("encrypted", 1, data="RU5DUllQVEVE")]}),
            chunk({"tool_calls": [OPENROUTER_CALL]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        )
    ),
    "whole": raw(
        json.dumps(
            {
                "object": "chat.completion",
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "reasoning": f"Let me read it with {SECRET}.",
                            "reasoning_details": OPENROUTER_DETAILS,
                            "tool_calls": [OPENROUTER_CALL],
                        },
                        "finish_reason": "tool_calls",
                    }
                ],
            }
        ),
        headers={"content-type": "application/json"},
    ),
}


@pytest.mark.parametrize("shape", list(OPENROUTER_ANSWERS))
async def test_openrouter_reasoning_details_go_back_unchanged_with_their_message(
    scripted_model, make_wire, shape
) -> None:
    """OpenRouter asks for `reasoning_details` to be sent back as they came on the assistant message
    of a tool loop: streamed fragments of one detail (same type and index) are joined, the signature
    sent last kept, the encrypted detail untouched; the key, were the model to write it, masked."""
    scripted_model.add(OPENROUTER_ANSWERS[shape], {"reply": [{"text": "done"}]})
    start = Conversation("sys", (UserMessage("go"),))
    wire = make_wire("openai-chat")
    turn, _ = await collect(wire.stream(WireRequest("anthropic/claude-sonnet-4.5", start, thinking="high")))
    assert turn.reasoning == "Let me read it with [redacted]."
    stored = json.loads(json.dumps(start.append(turn.to_message(), ToolResult("call_9", "x")).to_json()))
    assert SECRET not in json.dumps(stored)
    await collect(wire.stream(WireRequest("anthropic/claude-sonnet-4.5", Conversation.from_json(stored))))
    assistant = scripted_model.requests[-1].body["messages"][2]
    assert assistant["tool_calls"][0]["id"] == "call_9"
    assert assistant["reasoning_details"] == json.loads(
        json.dumps(OPENROUTER_DETAILS).replace(SECRET, "[redacted]")
    )


GEMINI_CALL = {
    "index": 0,
    "id": "function-call-1",
    "type": "function",
    "function": {"name": "read", "arguments": '{"path": "a"}'},
    "extra_content": {"google": {"thought_signature": "U0lHTkVE"}},
}
GEMINI_ANSWERS = {
    "streamed": raw(
        events(chunk({"role": "assistant", "tool_calls": [GEMINI_CALL]}), chunk({}, "tool_calls"))
    ),
    "whole": raw(
        json.dumps(
            {
                "object": "chat.completion",
                "choices": [
                    {
                        "message": {"role": "assistant", "tool_calls": [GEMINI_CALL]},
                        "finish_reason": "tool_calls",
                    }
                ],
            }
        ),
        headers={"content-type": "application/json"},
    ),
}


@pytest.mark.parametrize("shape", list(GEMINI_ANSWERS))
async def test_a_chat_tool_calls_extra_content_goes_back_with_it(scripted_model, make_wire, shape) -> None:
    """Gemini's OpenAI-compatible API signs a call in its `extra_content`; Gemini 3 refuses (400) the
    next request of the tool loop when the signature is not sent back with the call."""
    scripted_model.add(GEMINI_ANSWERS[shape], {"reply": [{"text": "done"}]})
    start = Conversation("sys", (UserMessage("go"),))
    wire = make_wire("openai-chat")
    turn, _ = await collect(wire.stream(WireRequest("gemini-3-pro", start)))
    assert [c.id for c in turn.tool_calls] == ["function-call-1"]
    stored = json.loads(
        json.dumps(start.append(turn.to_message(), ToolResult("function-call-1", "x")).to_json())
    )
    await collect(wire.stream(WireRequest("gemini-3-pro", Conversation.from_json(stored))))
    (sent,) = scripted_model.requests[-1].body["messages"][2]["tool_calls"]
    assert sent["id"] == "function-call-1"
    assert sent["extra_content"] == {"google": {"thought_signature": "U0lHTkVE"}}


async def test_thinking_written_in_the_content_goes_back_as_it_was_written(scripted_model, make_wire) -> None:
    """MiniMax (and reasoning models on servers without a parser) think in `<think>` tags in the
    content: shown as reasoning, and sent back in the content as written."""
    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    scripted_model.add(
        raw(
            events(
                *(chunk({"content": part}) for part in ["<think>\nPl", "an.\n</thi", "nk>\n\nCalling."]),
                chunk({"tool_calls": [call]}, "tool_calls"),
            )
        ),
        {"reply": [{"text": "done"}]},
    )
    start = Conversation("sys", (UserMessage("go"),))
    wire = make_wire("openai-chat")
    turn, _ = await collect(wire.stream(WireRequest("minimax-m2", start)))
    assert (turn.text, turn.reasoning.strip()) == ("Calling.", "Plan.")
    stored = json.loads(json.dumps(start.append(turn.to_message(), ToolResult("call_9", "x")).to_json()))
    await collect(wire.stream(WireRequest("minimax-m2", Conversation.from_json(stored))))
    assistant = scripted_model.requests[-1].body["messages"][2]
    assert assistant["content"] == "<think>\nPlan.\n</think>\n\nCalling."


SIGNED_CALL = {**GEMINI_CALL, "id": "call_9", "function": {"name": "read", "arguments": "{}"}}
EVERY_CHAT_EXTRA = raw(
    events(
        chunk({"role": "assistant", "reasoning_content": "Let me read it."}),
        chunk({"reasoning_details": [detail("encrypted", 0, data="RU5DUllQVEVE")]}),
        chunk({"content": "<think>Plan.</think>Reading."}),
        chunk({"tool_calls": [SIGNED_CALL]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
)
"""A chat answer with every extra the wire keeps to send back: `reasoning_content`,
`reasoning_details`, thinking written in the content and a call's `extra_content`."""


async def on_another_server(wire: str, history: WireRequest) -> tuple[dict[str, Any], list[WireWarning]]:
    """The body of the request a session moved (`/model`) to another server of `wire` sends there (a
    second scripted model, which answers it), and the warnings its stream gave."""
    with ScriptedModel() as other:
        other.add({"reply": [{"text": "done"}]})
        elsewhere = WIRES[wire](Endpoint("other", wire, other.base_url(wire), None))  # type: ignore[arg-type]
        try:
            follow, seen = await collect(elsewhere.stream(history))
        finally:
            await elsewhere.aclose()
    assert follow.text == "done"
    return other.requests[-1].body, [e for e in seen if isinstance(e, WireWarning)]


async def test_chat_extras_go_back_only_to_the_server_that_gave_them(scripted_model, make_wire) -> None:
    """A session moved (`/model`) from one chat server to another: the extras the first one gave are
    not sent to the second (a strict server refuses a field it does not know), and go back to the
    first when the session returns to it. An extra kept before items named their server goes to any
    chat server, as it did."""
    scripted_model.add(EVERY_CHAT_EXTRA, {"reply": [{"text": "done"}]})
    older = AssistantMessage("Earlier.", opaque=(Opaque("openai-chat", {"reasoning_content": "Old."}),))
    start = Conversation("sys", (UserMessage("before"), older, UserMessage("go")))
    turn, _ = await collect(make_wire("openai-chat").stream(WireRequest("deepseek-v4", start)))
    stored = json.loads(json.dumps(start.append(turn.to_message(), ToolResult("call_9", "x")).to_json()))
    history = WireRequest("deepseek-v4", Conversation.from_json(stored))
    plain_call = {"id": "call_9", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    messages = (await on_another_server("openai-chat", history))[0]["messages"]
    assert messages[2] == {"role": "assistant", "content": "Earlier.", "reasoning_content": "Old."}
    assert messages[4] == {"role": "assistant", "content": "Reading.", "tool_calls": [plain_call]}
    await collect(make_wire("openai-chat").stream(history))
    again = scripted_model.requests[-1].body["messages"][4]
    assert again["reasoning_content"] == "Let me read it."
    assert again["reasoning_details"] == [detail("encrypted", 0, data="RU5DUllQVEVE")]
    assert again["content"] == "<think>Plan.</think>Reading."
    assert again["tool_calls"] == [{**plain_call, "extra_content": GEMINI_CALL["extra_content"]}]


SIGNED_SEARCH = anthropic(
    sse.message_start(),
    *sse.block(
        0,
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "thinking_delta", "thinking": "Look it up."},
        {"type": "signature_delta", "signature": "SIG-A"},
    ),
    *sse.block(1, {"type": "redacted_thinking", "data": "REDACTED-A"}),
    *sse.block(2, sse.server_tool_use(), sse.json_delta('{"query": "x"}')),
    *sse.block(3, sse.search_result()),
    *text_block(4, "Found it. "),
    *sse.block(5, sse.tool_use("call_9"), sse.json_delta('{"path": "a"}')),
    *sse.message_end("tool_use"),
)
"""An Anthropic answer with every block the wire keeps to send back: signed thinking, redacted
thinking, a server tool's call and result (and so its text block, in place), then a client call."""
READ_CALL = {"type": "tool_use", "id": "call_9", "name": "read", "input": {"path": "a"}}


async def test_anthropic_blocks_go_back_only_to_the_server_that_gave_them(scripted_model, make_wire) -> None:
    """A session moved (`/model`) from one Anthropic-compatible server to another (a proxy, a
    compatible server): the signed thinking and server tools' blocks the first one gave are not sent
    to the second, which cannot check their signatures and refuses the request; the stream says so
    (`opaque-items-dropped`), and the message goes as its text and calls. Back on the first server they
    go again, as they were given (without the name of their server, a field the API does not know). A
    block kept before items named their server goes to any Anthropic server, as it did."""
    scripted_model.add(SIGNED_SEARCH, {"reply": [{"text": "done"}]})
    old = {"type": "thinking", "thinking": "Old.", "signature": "SIG-OLD"}
    older = AssistantMessage("Earlier.", opaque=(Opaque("anthropic-messages", old),))
    start = Conversation("sys", (UserMessage("before"), older, UserMessage("go")))
    first = make_wire("anthropic-messages")
    turn, _ = await collect(first.stream(WireRequest("claude-sonnet-4-5", start)))
    stored = json.loads(json.dumps(start.append(turn.to_message(), ToolResult("call_9", "x")).to_json()))
    history = WireRequest("claude-sonnet-4-5", Conversation.from_json(stored), (READ_TOOL,))
    body, [warning] = await on_another_server("anthropic-messages", history)
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [old, {"type": "text", "text": "Earlier."}],
    }
    assert body["messages"][3] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Found it. "}, READ_CALL],
    }
    sent = json.dumps(body)
    assert "SIG-A" not in sent and "REDACTED-A" not in sent and "srvtoolu_1" not in sent
    served = origin_of(scripted_model.base_url("anthropic-messages"))
    assert warning.code == "opaque-items-dropped"
    assert f"5 anthropic-messages item(s) given by another server ({served})" in warning.message
    await collect(first.stream(history))
    again = scripted_model.requests[-1].body
    assert again["messages"][3]["content"] == [
        {"type": "thinking", "thinking": "Look it up.", "signature": "SIG-A"},
        {"type": "redacted_thinking", "data": "REDACTED-A"},
        SEARCH,
        sse.search_result(),
        {"type": "text", "text": "Found it. "},
        READ_CALL,
    ]
    assert '"origin"' not in json.dumps(again) and '"origin"' not in sent


async def test_responses_items_go_back_only_to_the_server_that_gave_them(scripted_model, make_wire) -> None:
    """A session moved (`/model`) from one Responses server to another (OpenAI to Azure, or to a
    compatible server): the encrypted reasoning the first one gave cannot be read by the second, which
    refuses the request, so it is not sent there; back on the first server it goes again, as it was
    given (without the name of its server, a field the API does not know). An item kept before items
    named their server is sent to none (docs/wires.md says why)."""
    scripted_model.add(THINKING, {"reply": [{"text": "done"}]})
    older = AssistantMessage(
        "Earlier.", opaque=(Opaque("openai-responses", {"type": "reasoning", "encrypted_content": "OLD"}),)
    )
    start = Conversation("sys", (UserMessage("before"), older, UserMessage("go")))
    first = make_wire("openai-responses")
    turn, _ = await collect(first.stream(WireRequest("gpt-5", start, thinking="high")))
    stored = json.loads(json.dumps(start.append(turn.to_message(), ToolResult("call_9", "x")).to_json()))
    history = WireRequest("gpt-5", Conversation.from_json(stored), thinking="high")
    sent = (await on_another_server("openai-responses", history))[0]["input"]
    assert [item.get("type", item.get("role")) for item in sent] == [
        "user",
        "assistant",
        "user",
        "function_call",
        "function_call_output",
    ]
    await collect(first.stream(history))
    again = scripted_model.requests[-1].body["input"]
    assert [item.get("type", item.get("role")) for item in again] == [
        "user",
        "assistant",
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert again[3]["encrypted_content"] == "SIG-1" and "origin" not in again[3]


ELSEWHERE = origin_of("http://127.0.0.1:9/elsewhere")
"""The server that gave the items of `OTHER_SERVERS`: not the one the session now uses."""
OTHER_SERVERS = {
    "openai-chat": {"reasoning_content": "Old.", "origin": ELSEWHERE},
    "openai-responses": {"type": "reasoning", "encrypted_content": "OLD", "origin": ELSEWHERE},
    "anthropic-messages": {
        "type": "container",
        "id": "container_old",
        "expires_at": "2999-12-06T01:00:00Z",
        "origin": ELSEWHERE,
    },
}
"""An item of each wire that another server of that wire gave (its opaque item kinds that name one)."""


@pytest.mark.parametrize("wire", list(OTHER_SERVERS))
async def test_items_of_another_server_left_out_are_named_in_a_warning(
    scripted_model, make_wire, wire
) -> None:
    """A session moved to another server of the same wire: the items the first server gave are left
    out, and the stream says so as a wire switch does (`opaque-items-dropped`, the items in `raw`);
    the agent shows it once per task. Items of the server now used are sent without a word."""
    given = (
        json.dumps(OTHER_SERVERS[wire]).replace("Old", "Mine").replace("OLD", "MINE").replace("_old", "_mine")
    )
    mine = {**json.loads(given), "origin": origin_of(scripted_model.base_url(wire))}
    older = AssistantMessage("Earlier.", opaque=(Opaque(wire, OTHER_SERVERS[wire]),))
    ours = AssistantMessage("Later.", opaque=(Opaque(wire, mine),))
    history = Conversation(
        "sys", (UserMessage("before"), older, UserMessage("then"), ours, UserMessage("go"))
    )
    scripted_model.add({"reply": [{"text": "done"}]})
    asked = WireRequest("claude-sonnet-4-5", history, (READ_TOOL,))  # a container goes with tools
    turn, events = await collect(make_wire(wire).stream(asked))
    assert turn.text == "done"
    [warning] = [e for e in events if isinstance(e, WireWarning)]
    assert warning.code == "opaque-items-dropped"
    assert f"1 {wire} item(s) given by another server ({ELSEWHERE})" in warning.message
    assert warning.raw == [{"wire": wire, "item": OTHER_SERVERS[wire]}]
    sent = json.dumps(scripted_model.requests[-1].body)
    assert "Old." not in sent and "OLD" not in sent and "container_old" not in sent
    assert {"openai-chat": "Mine.", "openai-responses": "MINE", "anthropic-messages": "container_mine"}[
        wire
    ] in sent


async def test_a_responses_item_that_names_no_server_is_left_out_without_a_warning(
    scripted_model, make_wire
) -> None:
    """A Responses item kept before items named their server (or imported) goes to none, unsaid: a
    warning would come back in every task of an old session, naming no server to act on."""
    older = AssistantMessage(
        "Earlier.", opaque=(Opaque("openai-responses", {"type": "reasoning", "encrypted_content": "OLD"}),)
    )
    history = Conversation("sys", (UserMessage("before"), older, UserMessage("go")))
    scripted_model.add({"reply": [{"text": "done"}]})
    _, events = await collect(make_wire("openai-responses").stream(WireRequest("gpt-5", history)))
    assert not [e for e in events if isinstance(e, WireWarning)]
    assert "OLD" not in json.dumps(scripted_model.requests[-1].body)


async def test_an_anthropic_request_offering_no_tools_writes_earlier_tool_calls_out_as_text(
    scripted_model, make_wire
) -> None:
    """Anthropic refuses tool_use / tool_result blocks in a request that defines no tools (the
    scripted model does too): a session that used tools, continued with none offered (a harness that
    disables them all), sends its calls and results as text instead."""
    called = AssistantMessage("Reading it.", tool_calls=(ToolCall("call_1", "read", {"path": "a.py"}),))
    history = Conversation(
        "sys", (UserMessage("look"), called, ToolResult("call_1", "print(1)"), UserMessage("and now?"))
    )
    scripted_model.add({"reply": [{"text": "done"}]})
    turn, _ = await collect(make_wire("anthropic-messages").stream(WireRequest("claude-sonnet-4-5", history)))
    assert turn.failure is None and turn.text == "done"
    sent = scripted_model.requests[-1].body
    assert (
        "tools" not in sent and "tool_use" not in json.dumps(sent) and "tool_result" not in json.dumps(sent)
    )
    assistant, results = sent["messages"][1], sent["messages"][2]
    assert [b["text"] for b in assistant["content"]] == ["Reading it.", '(calls read {"path": "a.py"})']
    assert results["content"][0]["text"] == "[read result]\nprint(1)"
