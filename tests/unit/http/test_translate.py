"""Stored Harnez events → UHP events and Responses: the pure translation of harnez/http/translate.py."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from harnez import events as ev
from harnez.events import StoredEvent, body_from_payload
from harnez.http.translate import (
    ResponseFacts,
    TaskStream,
    output_text,
    response_object,
    scrub,
    terminal_event,
)
from tests.shared_files import require_uhp_schema

FACTS = ResponseFacts("resp_1", 1796000000.5, "hsess" + "a" * 32, "chrn_x", "chat/m", max_step=2)


def _events(*specs: tuple[str, dict[str, Any]], task: int = 7) -> list[StoredEvent]:
    return [
        StoredEvent("s", seq, task, 0.0, body_from_payload(kind, payload))
        for seq, (kind, payload) in enumerate(specs, start=1)
    ]


def _run(events: list[StoredEvent], annotations: list[dict] = ()) -> tuple[TaskStream, list[dict]]:
    stream = TaskStream(7)
    out = [uhp for event in events for uhp in stream.feed(event)]
    return stream, out + stream.finish(list(annotations))


def _valid(instance: Any, definition: str) -> None:
    jsonschema.Draft202012Validator({**require_uhp_schema(), "$ref": f"#/$defs/{definition}"}).validate(
        instance
    )


TOOL_TASK = _events(
    ("user-message", {"text": "hi", "mode": "prompt"}),
    ("started", {"model": "chat/m", "wire": "openai-chat"}),
    ("turn-started", {"turn": 1}),
    ("reasoning-delta", {"text": "Look "}),
    ("reasoning-delta", {"text": "first."}),
    ("text-delta", {"text": "Let me "}),
    ("text-delta", {"text": "look."}),
    ("tool-arguments-delta", {"call_id": "c1", "tool": "write", "delta": '{"path": "a.md", '}),
    ("tool-arguments-delta", {"call_id": "c1", "tool": "write", "delta": '"content": "x"}'}),
    ("usage", {"input": 100, "output": 20, "cache_read": 50, "cache_write": None}),
    ("turn-completed", {"turn": 1, "stop_reason": "tool_use"}),
    ("tool-requested", {"call_id": "c1", "name": "write", "arguments": {"path": "a.md", "content": "x"}}),
    ("tool-completed", {"call_id": "c1", "name": "write", "content": "Wrote a.md", "is_error": False}),
    ("turn-started", {"turn": 2}),
    ("text-delta", {"text": "Done."}),
    ("usage", {"input": 130, "output": 4}),
    ("turn-completed", {"turn": 2, "stop_reason": "end_turn"}),
    ("finished", {"stop": "completed", "turns": 2, "error": None}),
)


def test_a_tool_task_becomes_reasoning_message_call_output_message_in_order() -> None:
    stream, out = _run(TOOL_TASK)
    assert [item["type"] for item in stream.output] == [
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert stream.output[0]["summary"][0]["text"] == "Look first."
    call = stream.output[2]
    assert call["call_id"] == "c1" and json.loads(call["arguments"]) == {"path": "a.md", "content": "x"}
    assert stream.output[3]["output"] == "Wrote a.md"
    assert output_text(stream.output) == "Let me look.Done."
    assert stream.status == "completed" and stream.written == ["a.md"]
    assert stream.usage == {
        "input_tokens": 230,
        "output_tokens": 24,
        "total_tokens": 254,
        "cache_read_tokens": 50,
    }
    for event in out:
        _valid({**event, "sequence_number": 0}, "Event")


def test_every_item_is_added_before_its_events_and_done_after_them() -> None:
    _, out = _run(TOOL_TASK)
    added, done = {}, {}
    for position, event in enumerate(out):
        index = event.get("output_index")
        if event["type"] == "response.output_item.added":
            added[index] = position
        elif event["type"] == "response.output_item.done":
            done[index] = position
        elif index is not None:
            assert added[index] < position and index not in done, event
    assert sorted(added) == sorted(done) == [0, 1, 2, 3, 4]


def test_deltas_join_into_the_done_events_and_the_final_item() -> None:
    stream, out = _run(TOOL_TASK)
    text = "".join(
        e["delta"] for e in out if e["type"] == "response.output_text.delta" and e["output_index"] == 1
    )
    done = next(e for e in out if e["type"] == "response.output_text.done" and e["output_index"] == 1)
    assert text == done["text"] == stream.output[1]["content"][0]["text"] == "Let me look."
    arguments = "".join(e["delta"] for e in out if e["type"] == "response.function_call_arguments.delta")
    assert arguments == next(
        e["arguments"] for e in out if e["type"] == "response.function_call_arguments.done"
    )


def test_annotations_land_on_the_last_message_before_it_is_done() -> None:
    citation = {
        "type": "container_file_citation",
        "container_id": "cntr_x",
        "file_id": "file_1",
        "filename": "a.md",
        "start_index": 0,
        "end_index": 5,
    }
    stream, out = _run(TOOL_TASK, [citation])
    kinds = [e["type"] for e in out]
    assert kinds.index("response.output_text.annotation.added") < len(kinds) - 1
    assert out[-1]["type"] == "response.output_item.done" and out[-1]["output_index"] == 4
    assert stream.output[4]["content"][0]["annotations"] == [citation]


def test_the_response_is_schema_valid_and_names_session_harness_and_substitution() -> None:
    facts = ResponseFacts(
        "resp_1",
        1796000000.5,
        "hsess" + "a" * 32,
        "chrn_x",
        "chat/m",
        requested_model="other/big",
        fallback_reason="key missing at /home/me/.env",
    )
    stream, _ = _run(TOOL_TASK)
    response = response_object(facts, stream)
    _valid(response, "Response")
    assert response["created_at"] == 1796000000 and response["model"] == "chat/m"
    assert (
        response["metadata"]["session_id"] == facts.session and response["metadata"]["model_fallback"] is True
    )
    assert "/home/me" not in response["metadata"]["model_fallback_reason"]
    created = response_object(facts, TaskStream(7), status="in_progress")
    _valid(created, "Response")
    assert created["output"] == [] and created["status"] == "in_progress" and created["model"] == "chat/m"


def test_a_retried_turn_leaves_its_items_incomplete_and_empty() -> None:
    stream, out = _run(
        _events(
            ("turn-started", {"turn": 1}),
            ("text-delta", {"text": "one two"}),
            ("turn-retried", {"turn": 1, "attempt": 2, "delay": 0.1, "reason": "cut"}),
            ("text-delta", {"text": "one two three"}),
            ("finished", {"stop": "completed", "turns": 1, "error": None}),
        )
    )
    assert [i["status"] for i in stream.output] == ["incomplete", "completed"]
    assert output_text(stream.output) == "one two three"
    voided = next(e for e in out if e["type"] == "response.output_item.done")
    assert voided["item"]["status"] == "incomplete" and voided["item"]["content"][0]["text"] == ""


def test_stops_map_to_statuses_and_errors() -> None:
    def end(stop: str, error: str | None = None, turns: int = 1, failed_call: bool = False) -> dict:
        specs = [("turn-started", {"turn": 1})]
        if failed_call:
            specs.append(("turn-completed", {"turn": 1, "stop_reason": "error"}))
        stream, _ = _run(_events(*specs, ("finished", {"stop": stop, "turns": turns, "error": error})))
        return response_object(FACTS, stream)

    assert end("cancelled")["status"] == "cancelled" and end("cancelled")["error"] is None
    assert terminal_event(end("cancelled"))["type"] == "response.failed"
    failed = end("failed", "Cannot reach http://10.0.0.5:8080/v1 for /srv/app/key.txt", failed_call=True)
    assert failed["error"]["code"] == "provider_error" and "10.0.0.5" not in failed["error"]["message"]
    assert "/srv/app" not in failed["error"]["message"]
    assert end("failed", "No model is configured")["error"]["code"] == "harness_error"
    assert end("interrupted")["status"] == "failed"
    assert end("incomplete", "max", turns=2)["incomplete_details"]["reason"] == "max_step"
    assert end("incomplete", "time", turns=1)["incomplete_details"]["reason"] == "timeout"
    assert terminal_event(end("incomplete", "x"))["type"] == "response.incomplete"


def test_events_of_other_tasks_and_unknown_kinds_make_nothing() -> None:
    stream = TaskStream(7)
    assert stream.feed(StoredEvent("s", 1, 8, 0.0, ev.TextDelta(text="x"))) == []
    assert stream.feed(StoredEvent("s", 2, None, 0.0, ev.TitleChanged(title="t", source="user"))) == []
    assert stream.feed(StoredEvent("s", 3, 7, 0.0, ev.ApprovalRequired(call_id="c", name="shell"))) == []
    assert stream.output == [] and stream.status == "in_progress"


def test_scrub_keeps_plain_text_and_hides_addresses_and_paths() -> None:
    assert scrub("The provider refused the key (401).") == "The provider refused the key (401)."
    assert scrub("GET https://internal.example:8443/v1 failed in /opt/harnez/x.py") == (
        "GET <address> failed in <path>"
    )


def test_a_warning_is_an_item_of_its_own_that_a_retry_keeps_and_cost_warnings_make_none() -> None:
    message = "MCP server `vault` not connected: refused at http://10.0.0.1/mcp; goes on."
    stream, out = _run(
        _events(
            ("started", {"model": "chat/m", "wire": "openai-chat"}),
            ("turn-started", {"turn": 1}),
            ("warning", {"code": "mcp-unavailable", "message": message}),
            ("text-delta", {"text": "lost"}),
            ("turn-retried", {"turn": 1, "attempt": 1, "delay": 0.1, "reason": "503"}),
            ("warning", {"code": "unpriced-model", "message": "no price"}),
            ("text-delta", {"text": "kept"}),
            ("finished", {"stop": "completed", "turns": 1}),
        )
    )
    warned = [item for item in stream.output if item["type"] == "harnez_warning"]
    assert warned == [
        {
            "id": "warn_7_3",
            "type": "harnez_warning",
            "code": "mcp-unavailable",
            "message": "MCP server `vault` not connected: refused at <address> goes on.",
            "status": "completed",
        }
    ]
    assert (
        next(e["item"]["type"] for e in out if e["type"] == "response.output_item.added") == "harnez_warning"
    )
    assert output_text(stream.output) == "kept"
    _valid(warned[0], "OutputItem")
