"""Legal variations of third-party model servers (mock servers of SDK test suites, LiteLLM, Ollama,
vLLM, llama.cpp, LM Studio), each a small data case sent byte for byte over loopback by the scripted
model's `raw` turns: every one gives its answer once, or fails saying what the server said."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from harnez.settings import RetrySettings
from harnez.wires import WIRES, Endpoint, ToolCallDelta, ToolCallStart, ToolResult, WireRequest, collect
from harnez.wires.http import origin_of
from tests.wires.helpers import READ_TOOL, request
from tests.wires.sse_bodies import (
    CHAT_HELLO,
    CITATION,
    TEXT_BLOCK,
    USAGE,
    ai_mock_chat,
    block,
    call,
    chunk,
    events,
    garbled,
    json_delta,
    llmock_anthropic,
    llmock_chat,
    message_end,
    message_start,
    mockllm_anthropic,
    mockllm_chat,
    raw,
    search_result,
    server_tool_use,
    tool_use,
)


@dataclass(frozen=True)
class Case:
    """One server variation: the turn the server answers with, and what the turn must hold."""

    wire: str
    turn: dict[str, Any]
    text: str = "Hello."
    reasoning: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    stop: str | None = "end_turn"
    failure: str | None = None
    warnings: set[str] = field(default_factory=set)
    usage: tuple[int | None, int | None] | None = None
    requests: int = 1


READ_A = ("c1", "read", {"path": "a.py"})
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Hm."}],
    "encrypted_content": "RU5DUllQVEVE",
}
HELLO_ITEM = {"type": "message", "id": "m1", "content": [{"type": "output_text", "text": "Hello."}]}


MISTRAL_THINKING = {
    "type": "thinking",
    "thinking": [{"type": "text", "text": "Hm"}, {"type": "text", "text": "."}],
}


def chat_answer(message: dict[str, Any], **expected: Any) -> Case:
    """A whole `chat.completion` (200, JSON) holding `message`, finished with `stop`."""
    body = {
        "object": "chat.completion",
        "model": "m",
        "choices": [{"message": message, "finish_reason": "stop"}],
    }
    return Case(
        "openai-chat",
        {"status": 200, "headers": {"content-type": "application/json"}, "body": body},
        **expected,
    )


def json_body(wire: str, body: str) -> Case:
    """A whole answer sent byte for byte (200, JSON, content-length) saying "Hello." for 11 and 7 tokens."""
    return Case(
        wire, raw(body, headers={"content-type": "application/json"}, framing="length"), usage=(11, 7)
    )


def chat_calls(
    *fragments: list[dict[str, Any]], calls: list[Any] | None = None, finish: str = "tool_calls"
) -> Case:
    """A chat answer made of tool calls only: a chunk per list of call fragments, then its end."""
    body = events(*(chunk({"tool_calls": f}) for f in fragments), chunk({}, finish), "[DONE]")
    return Case("openai-chat", raw(body), text="", calls=calls or [READ_A], stop="tool_use")


def named(wire: str, *items: dict[str, Any], **expected: Any) -> Case:
    """A stream of typed items, each under its `event:` name (Anthropic, Responses)."""
    return Case(wire, raw(events(*items, named=True)), **expected)


A_ARGS = '{"path": "a.py"}'
LEGACY_CALL: dict[str, Any] = {
    "text": "",
    "calls": [("call_0", "read", {"path": "a.py"})],
    "stop": "tool_use",
}
"""What a chat answer holding one legacy `function_call` to read a.py gives (its id made up)."""
FC_A = ("fc_1", "read", {"path": "a.py"})


def function_call(**fields: Any) -> dict[str, Any]:
    """A Responses function_call item `fc_1` calling read (no `call_id` unless given)."""
    return {"type": "function_call", "id": "fc_1", "name": "read", **fields}


def added(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "item": item}


def done(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "item": item}


def arguments_delta(text: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": text}


def at_index(index: int, text: str) -> dict[str, Any]:
    """An arguments delta naming its call only by `output_index` (no `item_id`)."""
    return {"type": "response.function_call_arguments.delta", "output_index": index, "delta": text}


def completed(*output: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.completed", "response": {"status": "completed", "output": list(output)}}


def reasoned_hello(*before: dict[str, Any]) -> Case:
    """A Responses answer: its reasoning item `REASONING` done (no summary deltas), then "Hello."."""
    return named(
        "openai-responses",
        *before,
        done(REASONING),
        {"type": "response.output_text.delta", "item_id": "m1", "delta": "Hello."},
        completed(REASONING, HELLO_ITEM),
        reasoning="Hm.",
    )


def nested_error(kind: str, code: str | None, message: str, tries: int) -> Case:
    """A Responses `error` event with its fields in an `error` object, failing after `tries` requests."""
    error = {"type": "error", "sequence_number": 2, "error": {"type": kind, "code": code, "message": message}}
    said = f"({code or kind}): {message}" + (f" (gave up after {tries} attempts)" if tries > 1 else "")
    return named("openai-responses", error, text="", stop=None, failure=said, requests=tries)


def anthropic_call(*blocks: dict[str, Any]) -> Case:
    """An Anthropic answer whose blocks end with a call to read a.py (`t1`)."""
    return named(
        "anthropic-messages",
        message_start(),
        *blocks,
        *message_end("tool_use"),
        text="",
        calls=[("t1", "read", {"path": "a.py"})],
        stop="tool_use",
    )


def responses_call(*items: dict[str, Any], calls: list[Any] | None = None) -> Case:
    """A Responses answer made of one call to read a.py: its items, then `response.completed`."""
    return named(
        "openai-responses",
        *items,
        completed(),
        text="",
        calls=calls or [("call_1", "read", {"path": "a.py"})],
        stop="tool_use",
    )


CASES: dict[str, Case] = {
    # --- SSE framing -------------------------------------------------------------------------
    "sse-no-space-after-colon": Case("openai-chat", raw(events(*CHAT_HELLO, "[DONE]", space=""))),
    "sse-crlf": Case("openai-chat", raw(events(*CHAT_HELLO, "[DONE]", eol="\r\n"))),
    "sse-cr": Case(
        "anthropic-messages", raw(events(message_start(), *TEXT_BLOCK, *message_end(), named=True, eol="\r"))
    ),
    "sse-comments-ids-retry": Case(
        "openai-chat",
        raw(
            ": ping\n\nretry: 3000\n\n"
            + "".join(f"id: {i}\n: note\n" + events(c) for i, c in enumerate(CHAT_HELLO))
            + "data: [DONE]\n\n"
        ),
    ),
    "sse-multiline-data": Case(
        "openai-chat",
        raw(
            "".join("data: " + json.dumps(c, indent=1).replace("\n", "\ndata: ") + "\n\n" for c in CHAT_HELLO)
            + "data: [DONE]\n\n"
        ),
    ),
    "sse-empty-data-keep-alives": Case(
        "anthropic-messages",
        raw(
            "data:\n\nevent: ping\ndata: \n\n"
            + events(message_start(), *TEXT_BLOCK, *message_end(), named=True)
        ),
    ),
    "sse-no-final-blank-line": Case("openai-chat", raw(events(*CHAT_HELLO, "[DONE]").rstrip("\n"))),
    "sse-last-event-unterminated-close-framing": Case(
        "anthropic-messages",
        raw(events(message_start(), *TEXT_BLOCK, *message_end(), named=True).rstrip("\n"), framing="close"),
    ),
    "sse-bom": Case("openai-chat", raw("\ufeff" + events(*CHAT_HELLO, "[DONE]"))),
    "chat-no-done-after-finish": Case("openai-chat", raw(events(*CHAT_HELLO))),
    "chat-no-done-content-length": Case("openai-chat", raw(events(*CHAT_HELLO), framing="length")),
    "split-every-byte-mid-utf8": Case(
        "openai-chat",
        raw(events(chunk({"content": "Héllo ✓ 🌍"}), chunk({}, "stop"), "[DONE]", eol="\r\n"), raw_bytes=1),
        text="Héllo ✓ 🌍",
    ),
    "split-every-3-bytes-anthropic": Case(
        "anthropic-messages",
        raw(
            events(
                message_start(),
                *block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Ünïcödé 🚀"}),
                *message_end(),
                named=True,
            ),
            raw_bytes=3,
        ),
        text="Ünïcödé 🚀",
    ),
    "gzip-sse-chat": Case("openai-chat", raw(events(*CHAT_HELLO, "[DONE]"), gzip=True, raw_bytes=40)),
    "gzip-sse-anthropic": Case(
        "anthropic-messages", raw(events(message_start(), *TEXT_BLOCK, *message_end(), named=True), gzip=True)
    ),
    # --- OpenAI chat ---------------------------------------------------------------------------
    "chat-usage-only-last-chunk": Case(
        "openai-chat",
        raw(events(*CHAT_HELLO, {"id": "c", "model": "m", "choices": [], "usage": USAGE}, "[DONE]")),
        usage=(11, 7),
    ),
    **{
        f"chat-usage-cache-hits-as-{field}": Case(
            "openai-chat",
            raw(
                events(
                    *CHAT_HELLO, chunk({}, usage={"prompt_tokens": 100, "completion_tokens": 7, field: 89})
                )
            ),
            usage=(11, 7),
        )
        for field in ("prompt_cache_hit_tokens", "cached_tokens")  # DeepSeek's, Moonshot's
    },
    "chat-usage-in-x-groq": Case(
        "openai-chat",
        raw(
            events(
                *CHAT_HELLO[:2],
                {**CHAT_HELLO[2], "x_groq": {"id": "req_1", "usage": {**USAGE, "queue_time": 0.07}}},
                "[DONE]",
            )
        ),
        usage=(11, 7),
    ),
    "chat-usage-null-choices": Case(
        "openai-chat",
        raw(events(*CHAT_HELLO, {"id": "c", "model": "m", "choices": None, "usage": USAGE}, "[DONE]")),
        usage=(11, 7),
    ),
    "chat-usage-extra-nested": Case(
        "openai-chat",
        raw(
            events(
                *CHAT_HELLO[:2],
                chunk(
                    {},
                    "stop",
                    usage={
                        **USAGE,
                        "prompt_tokens_details": {"cached_tokens": 1, "audio_tokens": 0},
                        "completion_tokens_details": {
                            "reasoning_tokens": 2,
                            "accepted_prediction_tokens": 0,
                            "rejected_prediction_tokens": 0,
                        },
                        "queue_time": 0.01,
                        "prompt_time": {"ms": 3},
                    },
                ),
                "[DONE]",
            )
        ),
        usage=(10, 7),
    ),
    "chat-usage-details-null": Case(
        "openai-chat",
        raw(
            events(
                *CHAT_HELLO,
                {
                    "choices": [],
                    "usage": {**USAGE, "prompt_tokens_details": None, "completion_tokens_details": None},
                },
                "[DONE]",
            )
        ),
        usage=(11, 7),
    ),
    "chat-empty-and-null-deltas": Case(
        "openai-chat",
        raw(
            events(
                chunk({}),
                chunk({"role": "assistant", "content": None}),
                chunk({"content": "Hello."}),
                chunk({"content": None}, "stop"),
                "[DONE]",
            )
        ),
    ),
    "chat-role-in-every-chunk-finish-with-content": Case(
        "openai-chat",
        raw(
            events(
                chunk({"role": "assistant", "content": "Hel"}),
                chunk({"role": "assistant", "content": "lo."}, "stop"),
                "[DONE]",
            )
        ),
    ),
    "chat-tool-id-name-first-args-later": chat_calls(
        [call(0, "c1", "read", "")], [call(0, args='{"path"')], [call(0, args=': "a.py"}')]
    ),
    "chat-tool-calls-interleaved": chat_calls(
        [call(0, "c1", "read", ""), call(1, "c2", "read", "")],
        [call(1, args='{"path": "b.py"}')],
        [call(0, args='{"path": ')],
        [call(0, args='"a.py"}')],
        calls=[READ_A, ("c2", "read", {"path": "b.py"})],
    ),
    "chat-tool-no-index-single": chat_calls(
        [call(None, "c1", "read", '{"path":')], [call(None, args=' "a.py"}')]
    ),
    "chat-tool-index-0-for-every-call": chat_calls(  # Ollama: each call whole, every one at index 0
        [call(0, "c1", "read", '{"path": "a.py"}')],
        [call(0, "c2", "read", '{"path": "b.py"}')],
        calls=[READ_A, ("c2", "read", {"path": "b.py"})],
    ),
    "chat-tool-index-0-for-every-call-streamed": chat_calls(
        [call(0, "c1", "read", '{"path": ')],
        [call(0, args='"a.py"}')],
        [call(0, "c2", "read", '{"path": ')],
        [call(0, args='"b.py"}')],
        calls=[READ_A, ("c2", "read", {"path": "b.py"})],
    ),
    "chat-tool-whole-calls-without-index-or-id": chat_calls(
        [call(None, name="read", args='{"path": "a.py"}')],
        [call(None, name="read", args='{"path": "b.py"}')],
        calls=[("call_0", "read", {"path": "a.py"}), ("call_1", "read", {"path": "b.py"})],
    ),
    "chat-tool-several-whole-calls-in-one-delta-without-index-or-id": chat_calls(
        [call(None, name="read", args='{"path": "a.py"}'), call(None, name="read", args='{"path": "b.py"}')],
        calls=[("call_0", "read", {"path": "a.py"}), ("call_1", "read", {"path": "b.py"})],
    ),
    "chat-tool-no-index-no-id-name-repeated-each-fragment": chat_calls(
        [call(None, name="read", args='{"path":')],
        [call(None, name="read", args=' "a.py"}')],
        [call(None, name="read", args="")],
        calls=[("call_0", "read", {"path": "a.py"})],
    ),
    "chat-legacy-function-call": Case(
        "openai-chat",
        raw(
            events(
                chunk(
                    {"role": "assistant", "content": None, "function_call": {"name": "read", "arguments": ""}}
                ),
                chunk({"function_call": {"arguments": '{"path": '}}),
                chunk({"function_call": {"arguments": '"a.py"}'}}),
                chunk({}, "function_call"),
                "[DONE]",
            )
        ),
        **LEGACY_CALL,
    ),
    "chat-json-answer-with-a-legacy-function-call": Case(
        "openai-chat",
        raw(
            json.dumps(
                {
                    "object": "chat.completion",
                    "choices": [
                        {
                            "message": {
                                "role": "assistant",
                                "content": None,
                                "function_call": {"name": "read", "arguments": '{"path": "a.py"}'},
                            },
                            "finish_reason": "function_call",
                        }
                    ],
                }
            ),
            headers={"content-type": "application/json"},
        ),
        **LEGACY_CALL,
    ),
    "chat-tool-args-whole-and-finish-stop": Case(
        "openai-chat",
        raw(
            events(
                chunk(
                    {"content": "Hello.", "tool_calls": [call(0, "c1", "read", '{"path": "a.py"}')]}, "stop"
                ),
                "[DONE]",
            )
        ),
        calls=[READ_A],
    ),
    "chat-tool-name-repeated-each-fragment": chat_calls(
        [call(0, "c1", "read", '{"path":')], [call(0, "c1", "read", ' "a.py"}')]
    ),
    "chat-reasoning-content": Case(
        "openai-chat",
        raw(
            events(chunk({"reasoning_content": "Think"}), chunk({"reasoning": "ing."}), *CHAT_HELLO, "[DONE]")
        ),
        reasoning="Thinking.",
    ),
    "chat-reasoning-details-without-reasoning": Case(  # OpenRouter's structured reasoning alone
        "openai-chat",
        raw(
            events(
                chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": "Hm", "index": 0}]}),
                chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": ".", "index": 0}]}),
                chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": "RU5D", "index": 1}]}),
                *CHAT_HELLO,
                "[DONE]",
            )
        ),
        reasoning="Hm.",
    ),
    "chat-thinking-content-parts": Case(  # Mistral's thinking models
        "openai-chat",
        raw(
            events(
                chunk({"role": "assistant", "content": [MISTRAL_THINKING]}),
                chunk({"content": [{"type": "text", "text": "Hel"}]}),
                chunk({"content": "lo."}),
                chunk({}, "stop"),
                "[DONE]",
            )
        ),
        reasoning="Hm.",
    ),
    "chat-json-answer-with-thinking-content-parts": chat_answer(
        {"role": "assistant", "content": [MISTRAL_THINKING, {"type": "text", "text": "Hello."}]},
        reasoning="Hm.",
    ),
    "chat-think-tags-in-the-content": Case(  # a reasoning model on a server without a reasoning parser
        "openai-chat",
        raw(
            events(
                *(
                    chunk({"content": part})
                    for part in ["<thi", "nk>\nLet me", " think.</th", "ink>\n\n", "Hel"]
                ),
                chunk({"content": "lo."}, "stop"),
                "[DONE]",
            )
        ),
        reasoning="Let me think.",
    ),
    "chat-think-tags-whole-in-one-chunk": Case(
        "openai-chat",
        raw(events(chunk({"content": "<think>Hm.</think>Hello."}, "stop"), "[DONE]")),
        reasoning="Hm.",
    ),
    "chat-think-never-closed": Case(
        "openai-chat",
        raw(events(chunk({"content": "<think>Hm."}), chunk({}, "length"), "[DONE]")),
        text="",
        reasoning="Hm.",
        stop="max_tokens",
    ),
    "chat-text-that-starts-like-the-think-tag-is-text": Case(
        "openai-chat",
        raw(
            events(chunk({"content": " <thin"}), chunk({"content": "g> Hello."}), chunk({}, "stop"), "[DONE]")
        ),
        text=" <thing> Hello.",
    ),
    "chat-refusal": Case(
        "openai-chat",
        raw(
            events(
                chunk({"role": "assistant", "content": None, "refusal": "I can't "}),
                chunk({"refusal": "help with that."}),
                chunk({}, "stop"),
                "[DONE]",
            )
        ),
        text="I can't help with that.",
        stop="content_filter",
    ),
    "chat-json-answer-to-a-stream-request": Case(
        "openai-chat",
        {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": {
                "id": "x",
                "object": "chat.completion",
                "model": "m",
                "usage": USAGE,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "Hello."},
                        "finish_reason": "stop",
                    }
                ],
            },
        },
        usage=(11, 7),
    ),
    "chat-200-error-body": Case(
        "openai-chat",
        {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": {"error": {"message": "model is loading", "type": "invalid_request_error"}},
        },
        text="",
        stop=None,
        failure="model is loading",
    ),
    "chat-error-in-stream": Case(
        "openai-chat",
        raw(
            events(chunk({"content": "Hel"}), {"error": {"message": "context length exceeded", "code": 400}})
        ),
        text="Hel",
        stop=None,
        failure="context length exceeded",
    ),
    "chat-named-error-event": Case(
        "openai-chat",
        raw(
            events(chunk({"content": "Hel"}))
            + 'event: error\ndata: {"message": "upstream exploded", "type": "invalid_request_error"}\n\n'
        ),
        text="Hel",
        stop=None,
        failure="upstream exploded",
    ),
    "chat-unknown-finish-reason": Case(
        "openai-chat", raw(events(chunk({"content": "Hello."}), chunk({}, "abort"), "[DONE]")), stop="other"
    ),
    **{
        f"chat-finish-reason-{said}": Case(
            "openai-chat", raw(events(chunk({"content": "Hello."}), chunk({}, said), "[DONE]")), stop=meant
        )
        for said, meant in [
            ("eos", "end_turn"),
            ("eos_token", "end_turn"),
            ("stop_sequence", "end_turn"),
            ("end_turn", "end_turn"),
            ("max_tokens", "max_tokens"),
            ("model_length", "max_tokens"),
        ]
    },
    "chat-finish-reason-error-is-retried": Case(
        "openai-chat",
        raw(events(chunk({"content": "Hel"}), chunk({}, "error"), "[DONE]")),
        text="Hel",
        stop=None,
        failure='with finish_reason "error" (gave up after 3 attempts)',
        requests=3,
    ),
    "chat-finish-reason-tool_use": chat_calls([call(0, "c1", "read", A_ARGS)], finish="tool_use"),
    # --- Anthropic -----------------------------------------------------------------------------
    "anthropic-ping-and-start-usage": named(
        "anthropic-messages",
        message_start(cache_read_input_tokens=3),
        {"type": "ping"},
        *TEXT_BLOCK,
        {"type": "ping"},
        *message_end(),
        usage=(9, 5),
    ),
    "anthropic-unnamed-events": Case(
        "anthropic-messages", raw(events(message_start(), *TEXT_BLOCK, *message_end()))
    ),
    "anthropic-text-in-block-start": named(
        "anthropic-messages",
        message_start(),
        *block(0, {"type": "text", "text": "Hel"}, {"type": "text_delta", "text": "lo."}),
        *message_end(),
    ),
    "anthropic-thinking-signature-redacted": named(
        "anthropic-messages",
        message_start(),
        *block(
            0,
            {"type": "thinking", "thinking": ""},
            {"type": "thinking_delta", "thinking": "Hm."},
            {"type": "signature_delta", "signature": "c2ln"},
        ),
        *block(1, {"type": "redacted_thinking", "data": "ZW5j"}),
        *block(2, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Hello."}),
        *message_end(),
        reasoning="Hm.",
    ),
    "anthropic-tool-empty-partial-json": named(
        "anthropic-messages",
        message_start(),
        *block(
            0,
            tool_use(),
            json_delta(""),
            json_delta('{"path": "a.py"}'),
        ),
        *message_end("tool_use"),
        text="",
        calls=[("t1", "read", {"path": "a.py"})],
        stop="tool_use",
    ),
    "anthropic-tool-no-arguments": named(
        "anthropic-messages",
        message_start(),
        *block(
            0,
            tool_use(),
            json_delta(""),
        ),
        *message_end("tool_use"),
        text="",
        calls=[("t1", "read", {})],
        stop="tool_use",
    ),
    "anthropic-tool-input-whole-at-start": named(
        "anthropic-messages",
        message_start(),
        *block(0, tool_use(input={"path": "a.py"})),
        *message_end("tool_use"),
        text="",
        calls=[("t1", "read", {"path": "a.py"})],
        stop="tool_use",
    ),
    "anthropic-max-tokens": Case(
        "anthropic-messages",
        raw(events(message_start(), *TEXT_BLOCK, *message_end("max_tokens"), named=True)),
        stop="max_tokens",
    ),
    "anthropic-context-window-exceeded": Case(
        "anthropic-messages",
        raw(events(message_start(), *TEXT_BLOCK, *message_end("model_context_window_exceeded"), named=True)),
        stop="max_tokens",
    ),
    "anthropic-refusal": Case(
        "anthropic-messages",
        raw(events(message_start(), *TEXT_BLOCK, *message_end("refusal"), named=True)),
        stop="content_filter",
    ),
    "anthropic-overloaded-mid-stream": named(
        "anthropic-messages",
        message_start(),
        TEXT_BLOCK[0],
        TEXT_BLOCK[1],
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        text="Hel",
        stop=None,
        failure="Overloaded",
        requests=3,
    ),
    "anthropic-invalid-request-mid-stream": named(
        "anthropic-messages",
        message_start(),
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long"},
        },
        text="",
        stop=None,
        failure="prompt is too long",
    ),
    "anthropic-unknown-event": named(
        "anthropic-messages",
        message_start(),
        {"type": "message_annotation", "note": "x"},
        *TEXT_BLOCK,
        *message_end(),
        warnings={"unknown-stream-event"},
    ),
    "anthropic-unknown-delta": named(
        "anthropic-messages",
        message_start(),
        *block(
            0,
            {"type": "text", "text": ""},
            {"type": "text_delta", "text": "Hello."},
            {"type": "future_delta", "future": {"x": 1}},
        ),
        *message_end(),
        warnings={"unknown-stream-event"},
    ),
    "anthropic-citations-delta": named(
        "anthropic-messages",
        message_start(),
        *block(
            0,
            {"type": "text", "text": "", "citations": []},
            {"type": "text_delta", "text": "Hello."},
            {"type": "citations_delta", "citation": CITATION},
        ),
        *message_end(),
    ),
    "anthropic-unknown-block": named(
        "anthropic-messages",
        message_start(),
        *block(
            0,
            {"type": "future_block", "id": "f1", "input": {}},
            json_delta('{"query": "x"}'),
        ),
        *block(1, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Hello."}),
        *message_end(),
        warnings={"unknown-stream-event"},
    ),
    "anthropic-server-tool-blocks": named(
        "anthropic-messages",
        message_start(),
        *block(0, server_tool_use(), json_delta('{"query": '), json_delta('"x"}')),
        *block(1, search_result()),
        *block(2, {"type": "text", "text": ""}, {"type": "text_delta", "text": "Hello."}),
        *message_end(),
    ),
    "anthropic-server-tool-then-a-client-tool": anthropic_call(
        *block(0, server_tool_use(), json_delta('{"query": "x"}')),
        *block(1, search_result()),
        *block(2, tool_use(), json_delta(A_ARGS)),
    ),
    "anthropic-json-answer-to-a-stream-request": Case(
        "anthropic-messages",
        {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "stop_reason": "tool_use",
                "content": [
                    {"type": "text", "text": "Hello."},
                    tool_use(input={"path": "a.py"}),
                ],
                "usage": {"input_tokens": 9, "output_tokens": 5},
            },
        },
        calls=[("t1", "read", {"path": "a.py"})],
        stop="tool_use",
        usage=(9, 5),
    ),
    # --- Responses -----------------------------------------------------------------------------
    "responses-text-done-only": named(
        "openai-responses",
        {
            "type": "response.created",
            "response": {"model": "gpt-x", "status": "in_progress", "output": []},
        },
        {
            "type": "response.output_text.done",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "text": "Hello.",
        },
        {
            "type": "response.completed",
            "response": {"model": "gpt-x", "status": "completed", "output": []},
        },
    ),
    "responses-arguments-done-without-deltas": named(
        "openai-responses",
        {
            "type": "response.output_item.added",
            "item": {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "read",
                "arguments": "",
            },
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "arguments": '{"path": "a.py"}',
        },
        {
            "type": "response.output_item.done",
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read"},
        },
        {"type": "response.completed", "response": {"model": "gpt-x", "status": "completed"}},
        text="",
        calls=[("call_1", "read", {"path": "a.py"})],
        stop="tool_use",
    ),
    "responses-completed-with-output": named(
        "openai-responses",
        {
            "type": "response.completed",
            "response": {
                "model": "gpt-x",
                "status": "completed",
                "output": [
                    {
                        "type": "message",
                        "id": "m1",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "Hello."}],
                    },
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_1",
                        "name": "read",
                        "arguments": '{"path": "a.py"}',
                    },
                ],
                "usage": {"input_tokens": 11, "output_tokens": 7},
            },
        },
        calls=[("call_1", "read", {"path": "a.py"})],
        stop="tool_use",
        usage=(11, 7),
    ),
    "responses-call-arguments-whole-in-its-added-item": responses_call(
        added(function_call(call_id="call_1", arguments=A_ARGS)), done(function_call(call_id="call_1"))
    ),
    "responses-arguments-by-output-index-only": responses_call(
        {**added(function_call(call_id="call_1", arguments="")), "output_index": 0},
        {**added(function_call(id="fc_2", call_id="call_2", arguments="")), "output_index": 1},
        at_index(1, '{"path": '),
        at_index(0, A_ARGS),
        at_index(1, '"b.py"}'),
        done(function_call(call_id="call_1")),
        done(function_call(id="fc_2", call_id="call_2")),
        calls=[("call_1", "read", {"path": "a.py"}), ("call_2", "read", {"path": "b.py"})],
    ),
    "responses-arguments-done-by-output-index-only": responses_call(
        {**added(function_call(call_id="call_1", arguments="")), "output_index": 3},
        {"type": "response.function_call_arguments.done", "output_index": 3, "arguments": A_ARGS},
        done(function_call(call_id="call_1")),
    ),
    "responses-call-with-only-an-item-id": responses_call(
        added(function_call(arguments="")),
        arguments_delta('{"path": '),
        arguments_delta('"a.py"}'),
        done(function_call(arguments=A_ARGS)),
        calls=[FC_A],
    ),
    "responses-call-with-only-an-item-id-in-the-completed-response": named(
        "openai-responses",
        completed(function_call(arguments=A_ARGS)),
        text="",
        calls=[FC_A],
        stop="tool_use",
    ),
    "responses-json-answer-with-a-call-with-only-an-item-id": Case(
        "openai-responses",
        raw(
            json.dumps(
                {"object": "response", "status": "completed", "output": [function_call(arguments=A_ARGS)]}
            ),
            headers={"content-type": "application/json"},
        ),
        text="",
        calls=[FC_A],
        stop="tool_use",
    ),
    "responses-call-id-only-in-its-done-item": responses_call(
        added(function_call(arguments="")),
        arguments_delta(A_ARGS),
        done(function_call(call_id="call_1", arguments=A_ARGS)),
        calls=[FC_A],
    ),
    "responses-reasoning-only-in-the-completed-response": named(
        "openai-responses",
        {
            "type": "response.completed",
            "response": {"status": "completed", "output": [REASONING, HELLO_ITEM]},
        },
        reasoning="Hm.",
    ),
    "responses-reasoning-streamed-and-again-in-the-completed-response": named(
        "openai-responses",
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "Hm."},
        {"type": "response.output_item.done", "item": REASONING},
        {"type": "response.output_text.delta", "item_id": "m1", "delta": "Hello."},
        {
            "type": "response.completed",
            "response": {"status": "completed", "output": [REASONING, HELLO_ITEM]},
        },
        reasoning="Hm.",
    ),
    "responses-reasoning-only-in-its-done-item": reasoned_hello(),
    "responses-reasoning-only-in-its-done-events": reasoned_hello(
        {"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "summary_index": 0, "text": "Hm."}
    ),
    "responses-failed": named(
        "openai-responses",
        {
            "type": "response.failed",
            "response": {
                "status": "failed",
                "error": {"code": "invalid_prompt", "message": "bad prompt"},
            },
        },
        text="",
        stop=None,
        failure="bad prompt",
    ),
    "responses-failed-without-its-error": named(
        "openai-responses",
        {"type": "response.failed", "response": {"status": "failed", "error": None}},
        text="",
        stop=None,
        failure="a failed response mid-stream without saying why",
    ),
    "responses-error-event": named(
        "openai-responses",
        {"type": "error", "code": "invalid_request_error", "message": "no such model", "param": None},
        text="",
        stop=None,
        failure="no such model",
    ),
    # what OpenAI sends, unlike its documentation: the error's fields nested (its code may be null)
    "responses-nested-error-event-is-retried": nested_error(
        "too_many_requests", "too_many_requests", "Too Many Requests", tries=3
    ),
    "responses-nested-error-event-with-a-null-code": nested_error(
        "service_unavailable_error", None, "Unable to verify model access right now.", tries=3
    ),
    "responses-nested-quota-error-is-not-retried": nested_error(
        "insufficient_quota", "credit_balance_exhausted", "You have no credits remaining.", tries=1
    ),
    "responses-incomplete": named(
        "openai-responses",
        {"type": "response.output_text.delta", "item_id": "m1", "delta": "Hello."},
        {
            "type": "response.incomplete",
            "response": {
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
            },
        },
        stop="max_tokens",
    ),
    "responses-refusal": named(
        "openai-responses",
        {
            "type": "response.output_item.added",
            "item": {"type": "message", "id": "m1", "content": []},
        },
        {"type": "response.refusal.delta", "item_id": "m1", "delta": "I can't "},
        {"type": "response.refusal.delta", "item_id": "m1", "delta": "help with that."},
        {"type": "response.refusal.done", "item_id": "m1", "refusal": "I can't help with that."},
        {
            "type": "response.output_item.done",
            "item": {
                "type": "message",
                "id": "m1",
                "content": [{"type": "refusal", "refusal": "I can't help with that."}],
            },
        },
        {"type": "response.completed", "response": {"status": "completed"}},
        text="I can't help with that.",
        stop="content_filter",
    ),
    "responses-refusal-only-in-the-completed-response": named(
        "openai-responses",
        {
            "type": "response.completed",
            "response": {
                "status": "completed",
                "output": [
                    {
                        "type": "message",
                        "id": "m1",
                        "content": [{"type": "refusal", "refusal": "No."}],
                    }
                ],
            },
        },
        text="No.",
        stop="content_filter",
    ),
    "responses-json-answer-with-a-refusal": Case(
        "openai-responses",
        {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": {
                "object": "response",
                "status": "completed",
                "model": "gpt-x",
                "output": [
                    {"type": "message", "id": "m1", "content": [{"type": "refusal", "refusal": "No."}]}
                ],
            },
        },
        text="No.",
        stop="content_filter",
    ),
    "chat-json-answer-with-a-refusal": chat_answer(
        {"role": "assistant", "content": None, "refusal": "No."}, text="No.", stop="content_filter"
    ),
    "chat-unwrapped-error-object-mid-stream": Case(
        "openai-chat",
        raw(
            events(
                chunk({"content": "Hel"}),
                {
                    "object": "error",
                    "message": "prompt too long",
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                },
                "[DONE]",
            )
        ),
        text="Hel",
        stop=None,
        failure="prompt too long",
    ),
    "chat-unwrapped-error-object-as-the-answer": Case(
        "openai-chat",
        {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": {
                "object": "error",
                "message": "model is loading",
                "type": "ServiceUnavailable",
                "code": 503,
            },
        },
        text="",
        stop=None,
        failure="model is loading (gave up after 3 attempts)",
        requests=3,
    ),
    "chat-server-error-mid-stream-is-retried": Case(
        "openai-chat",
        raw(
            events(
                chunk({"content": "Hel"}),
                {"error": {"message": "The server had an error", "type": "server_error", "code": None}},
            )
        ),
        text="Hel",
        stop=None,
        failure="The server had an error (gave up after 3 attempts)",
        requests=3,
    ),
    "chat-error-code-as-text-is-a-status": Case(
        "openai-chat",
        raw(events({"error": {"message": "Rate limit reached", "code": "429"}})),
        text="",
        stop=None,
        failure="Rate limit reached (gave up after 3 attempts)",
        requests=3,
    ),
    "chat-quota-error-is-not-retried": Case(
        "openai-chat",
        raw(
            events(
                {
                    "error": {
                        "message": "You exceeded your quota",
                        "type": "insufficient_quota",
                        "code": "insufficient_quota",
                    }
                }
            )
        ),
        text="",
        stop=None,
        failure="You exceeded your quota",
    ),
    "anthropic-blocks-never-stopped-end-with-the-message": named(
        "anthropic-messages",
        message_start(),
        *TEXT_BLOCK[:-1],  # no content_block_stop for either block
        *block(1, tool_use(), json_delta('{"path": "a.py"}'))[:-1],
        *message_end("tool_use"),
        calls=[("t1", "read", {"path": "a.py"})],
        stop="tool_use",
    ),
    "responses-call-never-done-ends-with-the-response": named(
        "openai-responses",
        {
            "type": "response.output_item.added",
            "item": {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "read",
                "arguments": "",
            },
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "delta": '{"path": "a.py"}',
        },
        {"type": "response.completed", "response": {"status": "completed"}},
        text="",
        calls=[("call_1", "read", {"path": "a.py"})],
        stop="tool_use",
    ),
    # --- more of the same kinds ------------------------------------------------------------------
    "chat-tool-name-in-a-later-fragment": chat_calls(
        [call(0, "c1", args="")], [call(0, name="read", args='{"path": "a.py"}')]
    ),
    "chat-tool-id-in-a-later-fragment": chat_calls(
        [call(0, name="read", args="")], [call(0, "c1")], [call(0, args='{"path": "a.py"}')]
    ),
    "chat-tool-id-with-the-last-arguments": chat_calls(
        [call(0, name="read", args='{"path": ')], [call(0, "c1", args='"a.py"}')]
    ),
    "chat-sse-labelled-json": Case(
        "openai-chat", raw(events(*CHAT_HELLO, "[DONE]"), headers={"content-type": "application/json"})
    ),
    "chat-sse-labelled-plain-text-no-charset": Case(
        "openai-chat", raw(events(*CHAT_HELLO, "[DONE]"), headers={"content-type": "text/plain"})
    ),
    "chat-json-answer-with-charset": Case(
        "openai-chat",
        raw(
            json.dumps(
                {
                    "object": "chat.completion",
                    "model": "m",
                    "choices": [
                        {"message": {"role": "assistant", "content": "Hello."}, "finish_reason": "stop"}
                    ],
                }
            ),
            headers={"content-type": "application/json; charset=utf-8"},
            framing="length",
        ),
    ),
    "anthropic-named-events-without-type": Case(
        "anthropic-messages",
        raw(
            "".join(
                f"event: {item['type']}\ndata: {json.dumps({k: v for k, v in item.items() if k != 'type'})}\n\n"
                for item in [message_start(), *TEXT_BLOCK, *message_end()]
            )
        ),
    ),
    "anthropic-error-without-its-wrapper": Case(
        "anthropic-messages",
        raw(events(message_start(), {"type": "error", "message": "quota exhausted"}, named=True)),
        text="",
        stop=None,
        failure="quota exhausted",
    ),
    "anthropic-message-delta-with-cumulative-usage": named(
        "anthropic-messages",
        message_start(),
        *TEXT_BLOCK,
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"input_tokens": 12, "output_tokens": 6, "cache_read_input_tokens": None},
        },
        {"type": "message_stop"},
        usage=(12, 6),
    ),
    # Public mock servers (docs/wires.md, "Mock servers run"), each as it answers a stream request.
    "mockllm-chat-stream": Case("openai-chat", raw(mockllm_chat("Hel", "lo."))),
    "mockllm-chat-whole-answer": json_body(  # what it answers a request without `stream`
        "openai-chat",
        '{"id":"mock-1","object":"chat.completion","created":1,"model":"gpt-4","choices":[{"index":0,'
        '"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],'
        '"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}',
    ),
    "mockllm-anthropic-whole-answer": json_body(
        "anthropic-messages",
        '{"id":"mock-1","type":"message","role":"assistant","model":"claude-3-haiku-20240307",'
        '"content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn","stop_sequence":null,'
        '"usage":{"input_tokens":11,"output_tokens":7,"total_tokens":18}}',
    ),
    "mockllm-anthropic-is-no-anthropic-stream": Case(
        "anthropic-messages",
        raw(mockllm_anthropic("Hel", "lo.")),
        text="",
        stop=None,
        failure="a stream that is not a anthropic-messages answer",
    ),
    "ai-mock-chat-stream-without-finish-reason-or-content-type": Case(
        "openai-chat", raw(ai_mock_chat("Hello."), headers={"content-type": None})
    ),
    "ai-mock-chat-call-without-index-one-character-a-chunk": Case(
        "openai-chat",
        raw(ai_mock_chat(call=("5065f4e5", "read", A_ARGS)), headers={"content-type": None}),
        text="",
        calls=[("5065f4e5", "read", {"path": "a.py"})],
        stop="tool_use",
    ),
    "ai-mock-anthropic-stream-without-content-type": Case(
        "anthropic-messages",
        raw(
            events(
                message_start(),
                {"type": "ping"},
                *block(
                    0, {"type": "text", "text": ""}, *({"type": "text_delta", "text": c} for c in "Hello.")
                ),
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 0},
                },
                {"type": "message_stop"},
                named=True,
            ),
            headers={"content-type": None},
        ),
    ),
    "anthropic-stream-on-the-chat-wire": Case(  # a provider given the wrong wire
        "openai-chat",
        raw(llmock_anthropic("Hel", "lo.")),
        text="",
        stop=None,
        failure="a stream that is not a openai-chat answer",
        warnings={"unknown-stream-event"},
    ),
    "llmock-chat-stream-usage-null-on-every-chunk": Case(
        "openai-chat", raw(llmock_chat("Hel", "lo.")), usage=(11, 7)
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_a_third_party_variation_is_read(scripted_model, make_wire, name) -> None:
    case = CASES[name]
    turn_script = case.turn
    scripted_model.add(*([turn_script] * case.requests))
    turn, _ = await collect(make_wire(case.wire).stream(request(tools=(READ_TOOL,))))
    assert len(scripted_model.requests) == case.requests, turn.failure
    if case.failure is None:
        assert turn.failure is None, turn.failure.message
    else:
        assert turn.failure is not None and case.failure in turn.failure.message, turn.failure
    assert (turn.text, turn.reasoning) == (case.text, case.reasoning)
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == case.calls
    assert (turn.stop.reason if turn.stop else None) == case.stop
    assert {w.code for w in turn.warnings} == case.warnings, turn.warnings
    if case.usage is not None:
        assert turn.usage is not None and (turn.usage.input, turn.usage.output) == case.usage


GARBLED = {
    "openai-chat": garbled(llmock_chat("Hel", "lo."), 2),
    "anthropic-messages": garbled(llmock_anthropic("Hel", "lo."), 4),
    "openai-responses": garbled(
        events(
            {"type": "response.output_text.delta", "item_id": "m1", "delta": "Hel"},
            {"type": "response.output_text.delta", "item_id": "m1", "delta": "lo."},
            completed(HELLO_ITEM),
            named=True,
        ),
        1,
    ),
}
"""A stream whose item carrying "lo." is cut short (llmock's `malformed` fault), per wire."""
WHOLE = {
    "openai-chat": llmock_chat("Hel", "lo."),
    "anthropic-messages": llmock_anthropic("Hel", "lo."),
    "openai-responses": events(
        {"type": "response.output_text.delta", "item_id": "m1", "delta": "Hello."},
        completed(HELLO_ITEM),
        named=True,
    ),
}


@pytest.mark.parametrize("wire", list(GARBLED))
async def test_a_stream_item_cut_short_is_asked_again_whole(scripted_model, make_wire, wire) -> None:
    """An item that opens as JSON but does not parse lost what it carried (here a piece of the text):
    skipping it would give the answer without it, unsaid; the call is tried again and comes whole."""
    scripted_model.add(raw(GARBLED[wire]), raw(WHOLE[wire]))
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.text == "Hello." and turn.failure is None and not turn.warnings
    [retry] = turn.retries
    assert "not valid JSON" in retry.reason and len(scripted_model.requests) == 2


async def test_a_stream_garbled_every_time_fails_saying_so(scripted_model, make_wire) -> None:
    scripted_model.add(*[raw(GARBLED["openai-chat"])] * 3)
    turn, _ = await collect(make_wire("openai-chat").stream(request()))
    assert turn.failure is not None and "not valid JSON" in turn.failure.message
    assert "gave up after 3 attempts" in turn.failure.message


@pytest.mark.parametrize(
    "name",
    [
        "responses-reasoning-only-in-the-completed-response",
        "responses-reasoning-streamed-and-again-in-the-completed-response",
    ],
)
async def test_a_responses_reasoning_item_is_kept_once_to_be_sent_back(
    scripted_model, make_wire, name
) -> None:
    scripted_model.add(CASES[name].turn)
    turn, _ = await collect(make_wire("openai-responses").stream(request()))
    served = origin_of(scripted_model.base_url("openai-responses"))
    assert [o.item for o in turn.opaque] == [{**REASONING, "origin": served}]  # the server that gave it


async def test_a_chat_tool_name_sent_after_the_first_fragment_names_the_call_before_its_arguments(
    scripted_model, make_wire
) -> None:
    """The call started unnamed; its arguments were then streamed (and shown) under an empty name."""
    scripted_model.add(CASES["chat-tool-name-in-a-later-fragment"].turn)
    _, events = await collect(make_wire("openai-chat").stream(request(tools=(READ_TOOL,))))
    calls = [e for e in events if isinstance(e, ToolCallStart | ToolCallDelta)]
    first_delta = next(at for at, e in enumerate(calls) if isinstance(e, ToolCallDelta))
    named = [e.name for e in calls[:first_delta] if isinstance(e, ToolCallStart)]
    assert named[-1:] == ["read"], calls


async def test_a_chat_tool_call_whose_id_comes_later_is_answered_under_that_id(
    scripted_model, make_wire
) -> None:
    """The call started under a made-up id (`call_0`); once the server names it, it is the server's
    id that the call streams, ends and is answered under in the next request."""
    scripted_model.add(CASES["chat-tool-id-with-the-last-arguments"].turn, {"reply": [{"text": "ok"}]})
    wire = make_wire("openai-chat")
    turn, seen = await collect(wire.stream(request(tools=(READ_TOOL,))))
    streamed = [(type(e).__name__, e.id) for e in seen if isinstance(e, ToolCallStart | ToolCallDelta)]
    # its arguments held until the id comes (nothing streams under the made-up id), then started
    # again under it with the arguments so far, and streamed on under it
    assert streamed == [
        ("ToolCallStart", "call_0"),
        ("ToolCallStart", "c1"),
        ("ToolCallDelta", "c1"),
        ("ToolCallDelta", "c1"),
    ]
    deltas = [e.arguments for e in seen if isinstance(e, ToolCallDelta) and e.id == "c1"]
    assert "".join(deltas) == A_ARGS
    history = request().conversation.append(turn.to_message(), ToolResult("c1", "contents"))
    await collect(wire.stream(WireRequest("m", history, (READ_TOOL,))))
    assistant, result = scripted_model.requests[-1].body["messages"][-2:]
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1"]
    assert result == {"role": "tool", "tool_call_id": "c1", "content": "contents"}


# --- HTTP ------------------------------------------------------------------------------------------

NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
    "</center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
)


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic-messages"])
async def test_an_html_error_page_is_reported_by_its_title(scripted_model, make_wire, wire) -> None:
    page = {"status": 502, "body": NGINX_502, "headers": {"content-type": "text/html"}}
    scripted_model.add(page, page, page)
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.failure is not None and turn.failure.status == 502 and len(scripted_model.requests) == 3
    assert "502 Bad Gateway (an HTML page)" in turn.failure.message
    assert "<" not in turn.failure.message


async def test_a_connection_reset_mid_stream_is_retried_once_whole(scripted_model, make_wire) -> None:
    body = events(*CHAT_HELLO, "[DONE]")
    scripted_model.add(raw(body, raw_bytes=40, cut_after_chunks=2), raw(body, framing="close"))
    turn, _ = await collect(make_wire("openai-chat").stream(request()))
    assert turn.text == "Hello." and turn.failure is None and len(turn.retries) == 1


async def test_a_stalled_stream_ends_at_the_read_timeout(scripted_model, make_wire) -> None:
    scripted_model.add(raw(events(*CHAT_HELLO, "[DONE]"), raw_bytes=30, hold="never", hold_after_chunks=1))
    wire = make_wire("openai-chat", max_attempts=1, read_timeout=0.2)
    turn, _ = await collect(wire.stream(request()))
    assert turn.failure is not None and "timed out (ReadTimeout)" in turn.failure.message
    assert "sent nothing for retry.read_timeout (0.2 s)" in turn.failure.message  # what to change
    scripted_model.release("never")


def wire_at(server, wire: str, base_url: str):  # type: ignore[no-untyped-def]
    settings = RetrySettings(max_attempts=1)
    return WIRES[wire](Endpoint("third", wire, base_url, None, None), retry=settings)  # type: ignore[arg-type]


HELLO = {"reply": [{"text": "Hello."}]}
NOT_FOUND = {"status": 404, "body": {"detail": "Not Found"}}
MODEL_NOT_FOUND = {"status": 404, "body": {"error": {"message": 'model "m" not found, try pulling it first'}}}


@pytest.mark.parametrize(
    ("wire", "base", "answers", "paths"),
    [
        ("openai-chat", "/v1/", [HELLO, HELLO], ["/v1/chat/completions"] * 2),
        ("anthropic-messages", "", [HELLO, HELLO], ["/v1/messages"] * 2),
        ("anthropic-messages", "/", [HELLO, HELLO], ["/v1/messages"] * 2),
        ("anthropic-messages", "/v1", [HELLO, HELLO], ["/v1/messages"] * 2),
        ("anthropic-messages", "/v1/", [HELLO, HELLO], ["/v1/messages"] * 2),
        # a server with the API under /v1, given a base URL without it (first 404, then there)
        (
            "openai-chat",
            "",
            [NOT_FOUND, HELLO, HELLO],
            ["/chat/completions", "/v1/chat/completions", "/v1/chat/completions"],
        ),
        (
            "openai-responses",
            "/",
            [NOT_FOUND, HELLO, HELLO],
            ["/responses", "/v1/responses", "/v1/responses"],
        ),
        # a mock serving the API's paths at its root, given a base URL with /v1
        (
            "openai-chat",
            "/v1",
            [NOT_FOUND, HELLO, HELLO],
            ["/v1/chat/completions", "/chat/completions", "/chat/completions"],
        ),
    ],
)
async def test_the_base_url_with_or_without_v1_or_a_slash_reaches_the_api(
    scripted_model, wire, base, answers, paths
) -> None:
    scripted_model.add(*answers)
    wire_ = wire_at(scripted_model, wire, scripted_model.url + base)
    for _ in range(2):
        turn, _ = await collect(wire_.stream(request()))
        assert turn.text == "Hello." and turn.failure is None
    await wire_.aclose()
    assert [r.path for r in scripted_model.requests] == paths


async def test_a_404_for_an_unknown_model_is_reported_as_the_server_said(scripted_model) -> None:
    scripted_model.add(MODEL_NOT_FOUND, NOT_FOUND, MODEL_NOT_FOUND)
    wire = wire_at(scripted_model, "openai-chat", scripted_model.url + "/v1")
    for _ in range(2):
        turn, _ = await collect(wire.stream(request()))
        assert turn.failure is not None and turn.failure.status == 404
        assert 'model "m" not found' in turn.failure.message
    await wire.aclose()
    # the other place is asked once, not at every request
    assert [r.path for r in scripted_model.requests] == [
        "/v1/chat/completions",
        "/chat/completions",
        "/v1/chat/completions",
    ]


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic-messages"])
async def test_a_fastapi_error_detail_is_the_message(scripted_model, make_wire, wire) -> None:
    scripted_model.add({"status": 422, "body": {"detail": "max_tokens must be at least 1"}})
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.failure is not None and turn.failure.message.endswith(": max_tokens must be at least 1")


STREAM_OPTIONS_REFUSED = {
    "openai": {
        "status": 400,
        "body": {"error": {"message": "Unrecognized request argument supplied: stream_options"}},
    },
    "pydantic": {
        "status": 422,
        "body": {
            "detail": [
                {
                    "type": "extra_forbidden",
                    "loc": ["body", "stream_options"],
                    "msg": "Extra inputs are not permitted",
                }
            ]
        },
    },
}


@pytest.mark.parametrize("refusal", list(STREAM_OPTIONS_REFUSED))
async def test_stream_options_refused_by_the_server_are_sent_no_more(
    scripted_model, make_wire, refusal
) -> None:
    """Older and strict servers refuse the field asking for usage: the request is sent again without
    it, and the wire's next requests leave it out (no refusal per call)."""
    scripted_model.add(
        STREAM_OPTIONS_REFUSED[refusal], raw(events(*CHAT_HELLO, "[DONE]")), raw(events(*CHAT_HELLO))
    )
    wire = make_wire("openai-chat")
    turn, _ = await collect(wire.stream(request()))
    again, _ = await collect(wire.stream(request("again")))
    assert (turn.text, again.text) == ("Hello.", "Hello.") and turn.failure is again.failure is None
    assert not turn.retries and len(scripted_model.requests) == 3
    first, *later = (r.body for r in scripted_model.requests)
    assert first["stream_options"] == {"include_usage": True}
    assert [b.get("stream_options") for b in later] == [None, None]
    assert later[0] == {k: v for k, v in first.items() if k != "stream_options"}


async def test_stream_options_refused_once_are_sent_by_no_later_wire_of_that_server(
    scripted_model, make_wire
) -> None:
    """Every task opens its own wire: the refusal is remembered for the server's base URL, so a new
    wire does not pay one refused request again."""
    scripted_model.add(
        STREAM_OPTIONS_REFUSED["openai"], raw(events(*CHAT_HELLO, "[DONE]")), raw(events(*CHAT_HELLO))
    )
    await collect(make_wire("openai-chat").stream(request()))
    turn, _ = await collect(make_wire("openai-chat").stream(request("next task")))
    assert turn.text == "Hello." and turn.failure is None and len(scripted_model.requests) == 3
    assert "stream_options" not in scripted_model.requests[-1].body


@pytest.mark.parametrize(
    ("wire", "body"),
    [
        (  # llmock 0.2.2's --context-window, as OpenAI words it
            "openai-chat",
            {
                "error": {
                    "message": "This model's maximum context length is 660 tokens. However, your "
                    "messages resulted in 677 tokens.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "context_length_exceeded",
                }
            },
        ),
        (
            "anthropic-messages",
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 677 tokens > 660 maximum",
                },
            },
        ),
    ],
)
async def test_a_request_over_the_servers_window_says_which_setting_to_lower(
    scripted_model, make_wire, wire, body
) -> None:
    """The server's window is smaller than the one Harnez compacts for (an unknown model's 32k, a
    local server started with less): the refusal says so and names the setting, not only the number."""
    scripted_model.add({"status": 400, "body": body})
    turn, _ = await collect(make_wire(wire).stream(request(model="m")))
    assert turn.failure is not None and not turn.failure.retryable and len(scripted_model.requests) == 1
    assert "677 tokens" in turn.failure.message and ".." not in turn.failure.message
    assert 'set models."scripted/m".context_window in settings.json' in turn.failure.message


async def test_a_400_naming_no_optional_field_fails_at_once(scripted_model, make_wire) -> None:
    scripted_model.add({"status": 400, "body": {"error": {"message": "messages: too many"}}})
    turn, _ = await collect(make_wire("openai-chat").stream(request()))
    assert turn.failure is not None and "messages: too many" in turn.failure.message
    assert len(scripted_model.requests) == 1


async def test_done_with_spaces_around_it_ends_the_answer(scripted_model, make_wire) -> None:
    scripted_model.add(raw(events(*CHAT_HELLO[:2], " [DONE] ")))
    turn, _ = await collect(make_wire("openai-chat").stream(request()))
    assert turn.text == "Hello." and turn.failure is None and not turn.warnings
    assert turn.stop is not None and turn.stop.reason == "end_turn" and len(scripted_model.requests) == 1


@pytest.mark.parametrize("status", [307, 308])
async def test_a_redirect_on_the_same_host_is_followed_with_the_request(
    scripted_model, make_wire, status
) -> None:
    moved = {"status": status, "headers": {"location": "/v2/chat/completions"}, "body": ""}
    scripted_model.add(moved, raw(events(*CHAT_HELLO, "[DONE]")))
    turn, _ = await collect(make_wire("openai-chat").stream(request("again")))
    assert turn.text == "Hello." and turn.failure is None and not turn.retries
    first, second = scripted_model.requests
    assert (first.path, second.path) == ("/v1/chat/completions", "/v2/chat/completions")
    assert second.method == "POST" and second.body == first.body
    assert second.headers["authorization"] == first.headers["authorization"]


@pytest.mark.parametrize(
    ("status", "location"),
    [(307, "http://localhost:{port}/v1/chat/completions"), (301, "/v2/chat/completions")],
    ids=["another-host", "method-changing"],
)
async def test_a_redirect_not_followed_fails_naming_where_it_points(
    scripted_model, make_wire, status, location
) -> None:
    target = location.format(port=scripted_model.port)
    scripted_model.add({"status": status, "headers": {"location": target}, "body": ""})
    turn, _ = await collect(make_wire("openai-chat").stream(request()))
    assert turn.failure is not None and turn.failure.status == status and not turn.failure.retryable
    assert "base_url" in turn.failure.message and "chat/completions" in turn.failure.message
    assert len(scripted_model.requests) == 1  # the key was not sent to the other host
