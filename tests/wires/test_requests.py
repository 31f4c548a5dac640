"""What Harnez puts on the wire: the exact bodies and headers each provider receives."""

from __future__ import annotations

from dataclasses import replace

from harnez.settings import BASE_URL_IN_SETTINGS
from harnez.wires import WIRES, collect
from harnez.wires.anthropic import anthropic_messages
from harnez.wires.base import WireRequest
from harnez.wires.conversation import AssistantMessage, Conversation, ToolCall, ToolResult, UserMessage
from tests.wires.helpers import READ_TOOL, SECRET, endpoint, request
from tests.wires.sse_bodies import raw

HISTORY = Conversation(
    "You are terse.",
    (
        UserMessage("read app.py"),
        AssistantMessage("Reading.", "", (ToolCall("call_1", "read", {"path": "app.py"}),)),
        ToolResult("call_1", "no such file", is_error=True),
        UserMessage("try src/app.py"),
    ),
)
SCHEMA = READ_TOOL.schema
CACHED = {"type": "ephemeral"}


async def send(scripted_model, make_wire, wire: str, **fields: object):
    scripted_model.add({"reply": [{"text": "ok"}]})
    turn, _ = await collect(
        make_wire(wire).stream(WireRequest(conversation=HISTORY, tools=(READ_TOOL,), **fields))
    )
    assert turn.text == "ok"
    return scripted_model.requests[-1]


async def test_chat_completions_request(scripted_model, make_wire) -> None:
    sent = await send(
        scripted_model,
        make_wire,
        "openai-chat",
        model="gpt-5",
        thinking="xhigh",
        max_output=2048,
        temperature=0.2,
    )
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.body == {
        "model": "gpt-5",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "read app.py"},
            {
                "role": "assistant",
                "content": "Reading.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "app.py"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "[error] no such file"},
            {"role": "user", "content": "try src/app.py"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {"name": "read", "description": "Read a file", "parameters": SCHEMA},
            }
        ],
        "max_tokens": 2048,
        "reasoning_effort": "high",
        "temperature": 0.2,
    }


async def test_responses_request(scripted_model, make_wire) -> None:
    sent = await send(
        scripted_model, make_wire, "openai-responses", model="o3", thinking="minimal", max_output=999
    )
    assert (sent.method, sent.path) == ("POST", "/v1/responses")
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.body == {
        "model": "o3",
        "instructions": "You are terse.",
        "input": [
            {"role": "user", "content": "read app.py"},
            {"role": "assistant", "content": "Reading."},
            {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path": "app.py"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "[error] no such file"},
            {"role": "user", "content": "try src/app.py"},
        ],
        "stream": True,
        "store": False,
        "tools": [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": SCHEMA,
                "strict": False,
            }
        ],
        "max_output_tokens": 999,
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }


async def test_anthropic_messages_request(scripted_model, make_wire) -> None:
    sent = await send(
        scripted_model,
        make_wire,
        "anthropic-messages",
        model="claude-sonnet-4-5",
        thinking="medium",
        max_output=20_000,
        temperature=0.5,
    )
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == SECRET
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 20_000,
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "read app.py", "cache_control": CACHED}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "app.py"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "content": "no such file",
                        "is_error": True,
                    },
                    {"type": "text", "text": "try src/app.py", "cache_control": CACHED},
                ],
            },
        ],
        "stream": True,
        "tools": [{"name": "read", "description": "Read a file", "input_schema": SCHEMA}],
        "thinking": {"type": "enabled", "budget_tokens": 8192},
    }


def test_anthropic_caches_up_to_the_two_newest_user_turns_on_a_block_with_content() -> None:
    """Each request marks where it ends and where the one before it ended: the conversation's prefix
    is written to Anthropic's prompt cache once and read by every later request."""
    longer = Conversation(
        "system",
        (
            *HISTORY.items,
            AssistantMessage("Found it.", "", (ToolCall("call_2", "read", {"path": "src/app.py"}),)),
            ToolResult("call_2", "print('hi')"),
            UserMessage(""),
        ),
    )
    messages = anthropic_messages(
        WireRequest(model="claude", conversation=longer, tools=(READ_TOOL,)), lambda _opaque: True
    )
    marked = [
        (index, block.get("text") or block.get("tool_use_id"))
        for index, message in enumerate(messages)
        for block in message["content"]
        if block.get("cache_control") == CACHED
    ]
    assert marked == [(2, "try src/app.py"), (4, "call_2")]
    assert messages[4]["content"][-1] == {"type": "text", "text": ""}


async def test_anthropic_uses_the_model_cap_and_temperature_without_thinking(
    scripted_model, make_wire
) -> None:
    sent = await send(
        scripted_model,
        make_wire,
        "anthropic-messages",
        model="claude-3-5-haiku-latest",
        thinking="high",
        temperature=0.5,
    )
    assert sent.body["max_tokens"] == 8_192
    assert "thinking" not in sent.body and sent.body["temperature"] == 0.5


async def test_a_provider_without_a_key_sends_no_auth_header(scripted_model, make_wire) -> None:
    for wire in ("openai-chat", "anthropic-messages"):
        scripted_model.add({"reply": [{"text": "ok"}]})
        await collect(make_wire(wire, key=None).stream(WireRequest("llama3.1", HISTORY)))
        headers = scripted_model.requests[-1].headers
        assert "authorization" not in headers and "x-api-key" not in headers


async def test_a_model_that_cannot_think_gets_no_reasoning_parameter(scripted_model, make_wire) -> None:
    sent = await send(scripted_model, make_wire, "openai-chat", model="gpt-4o", thinking="high")
    assert "reasoning_effort" not in sent.body and "max_tokens" not in sent.body


async def test_a_json_body_that_is_no_answer_names_where_the_base_url_came_from(scripted_model) -> None:
    """A 200 whose JSON is no answer of the wire points at the base URL: at settings.json, or at
    `--base-url` when `harnez run` was given the URL by that flag."""
    said = []
    for origin in (BASE_URL_IN_SETTINGS, "--base-url"):
        scripted_model.add(raw('{"hello": "world"}', headers={"content-type": "application/json"}))
        given = replace(endpoint(scripted_model, "openai-chat"), base_url_origin=origin)
        wire = WIRES["openai-chat"](given)
        try:
            turn, _ = await collect(wire.stream(request(model="m")))
        finally:
            await wire.aclose()
        assert turn.failure is not None
        said.append(turn.failure.message)
    assert said[0].endswith("check the provider's base_url and wire in settings.json")
    assert (
        said[1].endswith("check --base-url and the wire it is used with") and "settings.json" not in said[1]
    )
