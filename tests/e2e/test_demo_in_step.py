"""The demo model answers each request by what it is, not by what other requests took before.

The demo loops over two turns: list the folder, then explain. Taken in turn order, a task stopped
after the first (Ctrl+C, Esc) or a second client (the app and `harnez run` side by side) left the
next prompt answered 'That was the `list` tool' with no tool called. Real HTTP to the demo server,
on each of the three wires.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from harnez.testing.script import Script, ScriptError
from harnez.testing.scripted_model import ScriptedModel, demo_script

PROMPT = "What is in this folder?"
CALL = "demo_list"
RESULT = ".harnez/\nnotes.txt"

# A first prompt, and the same conversation given the tool's result back, per wire: (path, bodies).
WIRES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "chat": (
        "/v1/chat/completions",
        {"model": "demo", "messages": [{"role": "user", "content": PROMPT}]},
        {
            "model": "demo",
            "messages": [
                {"role": "user", "content": PROMPT},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": CALL, "type": "function", "function": {"name": "list", "arguments": "{}"}}
                    ],
                },
                {"role": "tool", "tool_call_id": CALL, "content": RESULT},
            ],
        },
    ),
    "responses": (
        "/v1/responses",
        {"model": "demo", "input": [{"role": "user", "content": PROMPT}]},
        {
            "model": "demo",
            "input": [
                {"role": "user", "content": PROMPT},
                {"type": "function_call", "call_id": CALL, "name": "list", "arguments": "{}"},
                {"type": "function_call_output", "call_id": CALL, "output": RESULT},
            ],
        },
    ),
    "anthropic": (
        "/v1/messages",
        {"model": "demo", "max_tokens": 100, "messages": [{"role": "user", "content": PROMPT}]},
        {
            "model": "demo",
            "max_tokens": 100,
            "tools": [{"name": "list", "input_schema": {"type": "object"}}],
            "messages": [
                {"role": "user", "content": PROMPT},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": CALL, "name": "list", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": CALL, "content": RESULT}],
                },
            ],
        },
    ),
}


def _answer(model: ScriptedModel, path: str, body: dict[str, Any]) -> str:
    response = httpx.post(model.url + path, json=body, timeout=10)
    assert response.status_code == 200, response.text
    return response.text


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_prompt_after_a_stopped_task_gets_the_tool_call_again(wire: str) -> None:
    path, prompt, with_result = WIRES[wire]
    with ScriptedModel(demo_script()) as model:
        first = _answer(model, path, prompt)  # the task is stopped here: its result never sent
        again = _answer(model, path, prompt)
        explained = _answer(model, path, with_result)
        twice = _answer(model, path, with_result)  # another client's task, past its tool call too
    assert CALL in first and "That was the" not in first
    assert CALL in again and "That was the" not in again
    assert "That was the `list` tool" in explained and "That was the `list` tool" in twice


def test_a_turn_answering_something_unknown_is_refused_saying_what_it_can_answer() -> None:
    with pytest.raises(ScriptError, match="answers 'tool' is not one of prompt, tool-result"):
        Script.from_data([{"answers": "tool", "reply": [{"text": "hi"}]}])
