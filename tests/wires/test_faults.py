"""Faults: what is retried, what is not, and what the caller sees either way."""

from __future__ import annotations

import asyncio
import email.utils
import socket
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from harnez.settings import RetrySettings
from harnez.wires import (
    WIRES,
    Endpoint,
    Failure,
    OpenAIChatWire,
    Retry,
    RetryingWire,
    Stop,
    TextDelta,
    WireWarning,
    collect,
)
from tests.wires.helpers import ALL_WIRES, SECRET, endpoint, request

HELLO = {"reply": [{"text": "Hello brave new world"}], "usage": {"input": 3, "output": 4}}


@pytest.mark.parametrize("wire", ALL_WIRES)
@pytest.mark.parametrize("status", [429, 500, 503, 529])
async def test_transient_statuses_are_retried_then_succeed(
    scripted_model, make_wire, delays, wire, status
) -> None:
    scripted_model.add({"status": status}, HELLO)
    turn, events = await collect(make_wire(wire).stream(request()))
    [retry] = [e for e in events if isinstance(e, Retry)]
    assert retry.attempt == 2 and str(status) in retry.reason
    assert 0.25 <= delays.asked[0] <= 0.5  # base 0.5 s with jitter
    assert turn.text == "Hello brave new world" and turn.failure is None
    assert len(scripted_model.requests) == 2


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_retry_after_seconds_is_honoured(scripted_model, make_wire, delays, wire) -> None:
    scripted_model.add({"status": 429, "headers": {"retry-after": "7"}}, HELLO)
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert delays.asked == [7.0] and turn.text == "Hello brave new world"


async def test_retry_after_as_an_http_date_is_honoured_and_bounded(scripted_model, make_wire, delays) -> None:
    when = email.utils.formatdate(time.time() + 3600, usegmt=True)
    scripted_model.add({"status": 503, "headers": {"retry-after": when}}, HELLO)
    await collect(make_wire("openai-chat", max_delay=12).stream(request()))
    assert delays.asked == [12.0]


async def test_backoff_grows_and_the_last_failure_says_how_many_attempts(
    scripted_model, make_wire, delays
) -> None:
    scripted_model.add({"status": 500}, {"status": 500}, {"status": 500}, HELLO)
    turn, events = await collect(make_wire("anthropic-messages", base_delay=1.0).stream(request()))
    assert [e.attempt for e in events if isinstance(e, Retry)] == [2, 3]
    assert 0.5 <= delays.asked[0] <= 1.0 and 1.0 <= delays.asked[1] <= 2.0
    assert turn.failure is not None and "gave up after 3 attempts" in turn.failure.message
    assert turn.failure.status == 500 and len(scripted_model.requests) == 3


@pytest.mark.parametrize("wire", ALL_WIRES)
@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (400, "scripted error 400"),
        (401, "check the environment variable SCRIPTED_KEY"),
        (403, "permissions"),
        (404, "unknown model 'claude-sonnet-4-5' or wrong base URL"),
    ],
)
async def test_client_errors_are_not_retried_and_say_what_to_fix(
    scripted_model, make_wire, wire, status, hint
) -> None:
    # A first 404 of an OpenAI-style wire asks once more with or without `/v1` (404 there too here).
    asked_elsewhere = status == 404 and wire != "anthropic-messages"
    scripted_model.add({"status": status}, *([{"status": 404}] if asked_elsewhere else []), HELLO)
    turn, events = await collect(make_wire(wire).stream(request()))
    assert not any(isinstance(e, Retry) for e in events)
    assert turn.failure is not None and turn.failure.status == status and not turn.failure.retryable
    assert hint in turn.failure.message
    assert len(scripted_model.requests) == 1 + asked_elsewhere


async def test_a_400_carries_the_providers_own_message(scripted_model, make_wire) -> None:
    body = {"error": {"message": "max_tokens: 999999 > 64000, the maximum for this model"}}
    scripted_model.add({"status": 400, "body": body})
    turn, _ = await collect(make_wire("openai-chat").stream(request()))
    assert turn.failure is not None and "max_tokens: 999999 > 64000" in turn.failure.message


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_a_stream_cut_after_output_is_retried_without_duplicated_text(
    scripted_model, make_wire, wire
) -> None:
    scripted_model.add({**HELLO, "cut_after_chunks": 4}, HELLO)
    turn, events = await collect(make_wire(wire).stream(request()))
    first_attempt = events[: next(i for i, e in enumerate(events) if isinstance(e, Retry))]
    assert any(isinstance(e, TextDelta) for e in first_attempt)
    assert turn.text == "Hello brave new world"
    assert turn.usage is not None and turn.usage.output == 4 and len(turn.retries) == 1


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_a_slow_stream_arrives_whole(scripted_model, make_wire, wire) -> None:
    scripted_model.add({**HELLO, "delay_per_chunk": 0.01})
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.text == "Hello brave new world" and turn.stop is not None


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_a_malformed_line_is_a_warning_not_a_crash(scripted_model, make_wire, wire) -> None:
    scripted_model.add({**HELLO, "malformed_line": "data: this is not json"})
    scripted_model.add({**HELLO, "malformed_line": "garbage without a field"})
    for code, raw in (
        ("malformed-sse-data", "this is not json"),
        ("malformed-sse-line", "garbage without a field"),
    ):
        turn, _ = await collect(make_wire(wire).stream(request()))
        assert [(w.code, w.raw) for w in turn.warnings] == [(code, raw)]
        assert turn.text == "Hello brave new world" and turn.failure is None


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_an_unknown_stream_item_is_kept_in_a_warning(scripted_model, make_wire, wire) -> None:
    item = {"type": "response.telepathy.delta", "payload": {"mood": "curious"}}
    scripted_model.add({**HELLO, "unknown_item": item})
    turn, _ = await collect(make_wire(wire).stream(request()))
    [warning] = turn.warnings
    assert warning.code == "unknown-stream-event" and warning.raw == item
    assert turn.text == "Hello brave new world"


async def test_a_held_response_waits_for_release(scripted_model, make_wire) -> None:
    scripted_model.add({**HELLO, "hold": "gate", "hold_after_chunks": 2})
    seen: list[object] = []

    async def consume() -> None:
        async for event in make_wire("openai-chat").stream(request()):
            seen.append(event)

    task = asyncio.create_task(consume())
    while not any(isinstance(e, TextDelta) for e in seen):
        await asyncio.sleep(0.01)
    assert not any(isinstance(e, Stop) for e in seen)
    scripted_model.release("gate")
    await asyncio.wait_for(task, 10)
    assert isinstance(seen[-1], Stop)


class CountingTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, counting the responses it opened and those closed since."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.opened = self.closed = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.opened += 1
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            extensions=response.extensions,
            stream=CountedBody(response.stream, self),
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class CountedBody(httpx.AsyncByteStream):
    def __init__(self, body: httpx.AsyncByteStream, transport: CountingTransport) -> None:
        self.body, self.transport = body, transport

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.body:
            yield chunk

    async def aclose(self) -> None:
        self.transport.closed += 1
        await self.body.aclose()


OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.mark.parametrize(
    ("wire_name", "failed"),
    [
        ("anthropic-messages", {**HELLO, "unknown_item": OVERLOADED}),  # reported mid-stream, body still open
        ("openai-chat", {"status": 503}),
        ("openai-chat", {**HELLO, "cut_after_chunks": 2}),
    ],
    ids=["overloaded-mid-stream", "503", "cut"],
)
async def test_a_failed_attempt_is_closed_before_the_wait_and_the_next_attempt(
    scripted_model, wire_name, failed
) -> None:
    transport = CountingTransport()
    open_while_waiting: list[int] = []

    async def sleep(delay: float) -> None:
        open_while_waiting.append(transport.opened - transport.closed)

    settings = RetrySettings(max_attempts=2, base_delay=0.1)
    scripted_model.add(failed, HELLO)
    async with httpx.AsyncClient(transport=transport) as client:
        inner = WIRES[wire_name](endpoint(scripted_model, wire_name), retry=settings, client=client)
        turn, _ = await collect(RetryingWire(inner, settings, sleep=sleep).stream(request()))
    assert turn.text == "Hello brave new world"
    assert open_while_waiting == [0], "the failed attempt's response was still open during the wait"
    assert transport.opened == transport.closed == 2


async def test_a_refused_connection_is_retried_then_reported(delays) -> None:
    with socket.socket() as sock:  # bound, then released: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ep = Endpoint("down", "openai-chat", f"http://127.0.0.1:{port}/v1", SECRET, "DOWN_KEY")
    settings = RetrySettings(max_attempts=2, base_delay=0.1)
    wire = RetryingWire(OpenAIChatWire(ep, retry=settings), settings, sleep=delays)
    turn, events = await collect(wire.stream(request()))
    await wire.aclose()
    assert sum(isinstance(e, Retry) for e in events) == 1
    assert turn.failure is not None and "cannot connect" in turn.failure.message


async def test_the_key_never_shows_in_events_messages_or_reprs(scripted_model, make_wire) -> None:
    scripted_model.add(
        {"status": 401, "body": {"error": {"message": f"Incorrect API key provided: {SECRET}"}}}
    )
    wire = make_wire("openai-chat")
    _, events = await collect(wire.stream(request()))
    [failure] = [e for e in events if isinstance(e, Failure)]
    assert "[redacted]" in failure.message
    for text in [repr(e) for e in events] + [repr(wire), repr(endpoint(scripted_model, "openai-chat"))]:
        assert SECRET not in text
    assert scripted_model.requests[-1].headers["authorization"] == f"Bearer {SECRET}"


@pytest.mark.parametrize("wire_name", ["openai-chat", "anthropic-messages"])
async def test_the_key_is_masked_in_stream_errors_malformed_lines_and_unknown_items(
    scripted_model, make_wire, wire_name
) -> None:
    error = (
        {"error": {"message": f"key {SECRET} revoked"}}
        if wire_name == "openai-chat"
        else {"type": "error", "error": {"type": "invalid_request_error", "message": f"key {SECRET} revoked"}}
    )
    scripted_model.add(
        {
            "reply": [{"text": "hi"}],
            "malformed_line": f"junk {SECRET}",
            "unknown_item": {"type": "novel", "echo": SECRET},
        },
        {"reply": [{"text": "partial"}], "unknown_item": error},
    )
    wire = make_wire(wire_name)
    first = [e for e in (await collect(wire.stream(request())))[1] if isinstance(e, WireWarning)]
    turn, _ = await collect(wire.stream(request()))
    assert first and turn.failure is not None and "[redacted]" in turn.failure.message
    assert all(SECRET not in repr(e) for e in first) and SECRET not in turn.failure.message


async def test_anthropic_overload_mid_stream_is_retried(scripted_model, make_wire) -> None:
    scripted_model.add({**HELLO, "unknown_item": OVERLOADED}, HELLO)
    turn, events = await collect(make_wire("anthropic-messages").stream(request()))
    assert any(isinstance(e, Retry) and "overloaded_error" in e.reason for e in events)
    assert turn.text == "Hello brave new world" and not turn.warnings


async def test_request_timeout_limits_the_whole_request_not_each_read(scripted_model, make_wire) -> None:
    # A chunk every 50 ms never trips a per-read limit; the whole request still ends at 0.5 s.
    drip = {"reply": [{"text": " ".join(["slow"] * 200)}], "delay_per_chunk": 0.05}
    scripted_model.add(drip)
    wire = make_wire("openai-chat", max_attempts=1, request_timeout=0.5, read_timeout=5)
    turn, _ = await collect(wire.stream(request()))
    assert turn.failure is not None and "retry.request_timeout (0.5 s)" in turn.failure.message
