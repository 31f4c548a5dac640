"""A server that ignores `"stream": true` and answers one JSON object is read like its stream."""

from __future__ import annotations

import pytest

from harnez.wires import collect
from tests.wires.helpers import ALL_WIRES, READ_TOOL, SECRET, request
from tests.wires.test_streaming import TOOL_TURN


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_a_whole_answer_folds_into_the_same_turn_as_its_stream(scripted_model, make_wire, wire) -> None:
    scripted_model.add(TOOL_TURN, {**TOOL_TURN, "whole": True})
    streamed, _ = await collect(make_wire(wire).stream(request(tools=(READ_TOOL,))))
    whole, _ = await collect(make_wire(wire).stream(request(tools=(READ_TOOL,))))

    assert all(r.body["stream"] is True for r in scripted_model.requests)  # both asked for a stream
    assert whole.failure is None and whole.warnings == [] and whole.retries == []
    assert (
        (whole.text, whole.reasoning)
        == (streamed.text, streamed.reasoning)
        == ("Let me look.", "I should read it")
    )
    assert whole.tool_calls == streamed.tool_calls and whole.tool_calls[0].arguments == {"path": "src/app.py"}
    assert whole.opaque == streamed.opaque  # thinking signatures, encrypted reasoning: sent back next turn
    assert whole.usage == streamed.usage and whole.usage is not None
    assert whole.stop == streamed.stop and whole.model == "served-model-2025"


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_a_whole_text_answer_ends_the_turn(scripted_model, make_wire, wire) -> None:
    scripted_model.add({"reply": [{"text": "Just this."}], "whole": True})
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.text == "Just this." and turn.stop is not None and turn.stop.reason == "end_turn"
    assert turn.tool_calls == [] and turn.failure is None


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_json_that_is_no_answer_fails_once_naming_what_to_check(
    scripted_model, make_wire, wire
) -> None:
    scripted_model.add({"status": 200, "body": {"object": "list", "data": []}})
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.failure is not None and not turn.failure.retryable
    assert "not a" in turn.failure.message and "base_url" in turn.failure.message
    assert len(scripted_model.requests) == 1  # not retried: asking again would get the same


@pytest.mark.parametrize(
    ("wire", "body"),
    [
        ("openai-chat", {"error": {"message": "quota gone", "code": "insufficient_quota"}}),
        ("openai-responses", {"error": {"message": "quota gone", "code": "insufficient_quota"}}),
        (
            "anthropic-messages",
            {"type": "error", "error": {"type": "invalid_request_error", "message": "quota gone"}},
        ),
    ],
)
async def test_an_error_object_answered_with_200_is_reported(scripted_model, make_wire, wire, body) -> None:
    scripted_model.add({"status": 200, "body": body})
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.failure is not None and "quota gone" in turn.failure.message
    assert "in its answer" in turn.failure.message and "mid-stream" not in turn.failure.message


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_a_key_echoed_in_a_whole_answer_or_non_answer_is_masked(
    scripted_model, make_wire, wire
) -> None:
    scripted_model.add(
        {"reply": [{"text": f"your key is {SECRET}"}], "whole": True},
        {"status": 200, "body": {"echo": SECRET}},
    )
    turn, _ = await collect(make_wire(wire).stream(request()))
    failed, _ = await collect(make_wire(wire).stream(request()))
    assert SECRET not in turn.text and "your key is" in turn.text
    assert failed.failure is not None and SECRET not in failed.failure.message
