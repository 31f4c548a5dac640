"""Each wire streams text, reasoning, chunked tool calls, usage and the stop over real HTTP."""

from __future__ import annotations

import pytest

from harnez.wires import (
    OpaqueItem,
    ReasoningDelta,
    Stop,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    UsageReport,
    collect,
)
from tests.wires.helpers import ALL_WIRES, READ_TOOL, request

TOOL_TURN = {
    "model": "served-model-2025",
    "reply": [
        {"reasoning": "I should read it"},
        {"text": ["Let me ", "look."]},
        {"tool_call": {"id": "call_7", "name": "read", "arguments": {"path": "src/app.py"}, "chunks": 4}},
    ],
    "usage": {"input": 100, "output": 40, "cache_read": 60, "reasoning": 12},
}


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_a_tool_turn_streams_in_order_and_folds_into_one_turn(scripted_model, make_wire, wire) -> None:
    scripted_model.add(TOOL_TURN)
    turn, events = await collect(make_wire(wire).stream(request(tools=(READ_TOOL,))))

    deltas = [e for e in events if isinstance(e, (TextDelta, ReasoningDelta))]
    assert [e.text for e in deltas if isinstance(e, ReasoningDelta)] == ["I ", "should ", "read ", "it"]
    assert [e.text for e in deltas if isinstance(e, TextDelta)] == ["Let me ", "look."]
    arg_deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert len(arg_deltas) == 4 and {e.id for e in arg_deltas} == {"call_7"}
    start = events.index(ToolCallStart("call_7", "read"))
    end = next(i for i, e in enumerate(events) if isinstance(e, ToolCallEnd))
    assert start < events.index(arg_deltas[0]) < end
    assert turn.text == "Let me look."
    assert turn.reasoning == "I should read it"
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_7", "read", {"path": "src/app.py"})
    ]
    assert turn.stop == Stop("tool_use", turn.stop.raw, "served-model-2025")
    assert turn.model == "served-model-2025"
    assert isinstance(events[-1], Stop) and turn.failure is None and turn.warnings == []


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("openai-chat", Usage(input=100, output=40, cache_read=60, cache_write=None, reasoning=12)),
        ("openai-responses", Usage(input=100, output=40, cache_read=60, cache_write=None, reasoning=12)),
        ("anthropic-messages", Usage(input=100, output=40, cache_read=60, cache_write=None, reasoning=None)),
    ],
)
async def test_usage_counts_input_without_cache_reads(scripted_model, make_wire, wire, expected) -> None:
    scripted_model.add(TOOL_TURN)
    turn, events = await collect(make_wire(wire).stream(request()))
    assert turn.usage == expected
    assert sum(isinstance(e, UsageReport) for e in events) == 1


async def test_anthropic_reports_cache_writes_apart(scripted_model, make_wire) -> None:
    scripted_model.add({"reply": [{"text": "ok"}], "usage": {"input": 5, "output": 2, "cache_write": 900}})
    turn, _ = await collect(make_wire("anthropic-messages").stream(request()))
    assert turn.usage == Usage(input=5, output=2, cache_read=None, cache_write=900)


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_usage_not_reported_stays_unknown(scripted_model, make_wire, wire) -> None:
    scripted_model.add({"reply": [{"text": "ok"}]})
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.text == "ok" and turn.stop is not None and turn.stop.reason == "end_turn"
    if wire != "anthropic-messages":  # Anthropic always reports tokens in message_start
        assert turn.usage is None


@pytest.mark.parametrize("wire", ALL_WIRES)
@pytest.mark.parametrize("stop", ["max_tokens", "content_filter"])
async def test_stop_reasons_are_normalized(scripted_model, make_wire, wire, stop) -> None:
    scripted_model.add({"reply": [{"text": "cut"}], "stop": stop})
    turn, _ = await collect(make_wire(wire).stream(request()))
    assert turn.stop is not None and turn.stop.reason == stop
    assert turn.stop.raw in {"length", "max_output_tokens", "max_tokens", "content_filter", "refusal"}


@pytest.mark.parametrize("wire", ["openai-responses", "anthropic-messages"])
async def test_reasoning_comes_back_as_an_opaque_item_of_its_wire(scripted_model, make_wire, wire) -> None:
    scripted_model.add({"reply": [{"reasoning": "deep thought", "signature": "SIG-XYZ"}, {"text": "42"}]})
    turn, events = await collect(make_wire(wire).stream(request(thinking="high")))
    [opaque] = [e.opaque for e in events if isinstance(e, OpaqueItem)]
    assert opaque.wire == wire
    assert "SIG-XYZ" in opaque.item.values()
    assert turn.opaque == [opaque]


@pytest.mark.parametrize("wire", ALL_WIRES)
async def test_arguments_that_are_not_json_are_reported_on_the_call(scripted_model, make_wire, wire) -> None:
    scripted_model.add(
        {"reply": [{"tool_call": {"id": "c1", "name": "read", "arguments": '{"path": ', "chunks": 2}}]}
    )
    turn, _ = await collect(make_wire(wire).stream(request()))
    [call] = turn.tool_calls
    assert (
        call.arguments == {} and call.raw_arguments == '{"path": ' and "not valid JSON" in (call.error or "")
    )
