"""A task given an output schema answers through the `answer` tool, checked against the schema, on every wire."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harnez.settings import ModelInfo
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import (
    PROVIDERS,
    answer,
    events,
    kinds,
    make_settings,
    run_task,
    tool_outputs,
    user_texts,
)

VERDICT = {
    "type": "object",
    "properties": {"verdict": {"enum": ["pass", "fail"]}, "failures": {"type": "integer", "minimum": 0}},
    "required": ["verdict", "failures"],
    "additionalProperties": False,
}


def answer_call(call_id: str, **arguments: Any) -> dict[str, Any]:
    return {
        "reply": [{"tool_call": {"name": "answer", "id": call_id, "arguments": arguments}}],
        "usage": {"input": 90, "output": 12},
    }


def published_tool(body: dict[str, Any], name: str) -> dict[str, Any]:
    """The tool called `name` as a request of any wire publishes it: its input schema."""
    for tool in body.get("tools", []):
        if tool.get("name") == name:  # responses, anthropic
            return tool.get("parameters") or tool["input_schema"]
        if tool.get("function", {}).get("name") == name:  # chat completions
            return tool["function"]["parameters"]
    raise AssertionError(f"{name} was not published")


@pytest.mark.parametrize("wire", sorted(PROVIDERS.values()))
async def test_a_valid_answer_is_published_checked_and_emitted_and_ends_the_task(
    wire: str, scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer_call("a1", verdict="pass", failures=0))
    server = await open_server(make_settings(scripted_model, wire))
    session_id, outcome = await run_task(server, workspace, "did the tests pass?", output_schema=VERDICT)

    assert outcome.stop == "completed" and outcome.turns == 1
    (answered,) = await events(server, session_id, "answered")
    assert answered.body.answer == {"verdict": "pass", "failures": 0} and answered.body.call_id == "a1"
    seen = await kinds(server, session_id)
    assert seen.index("tool-completed") < seen.index("answered") < seen.index("finished")
    (started,) = await events(server, session_id, "started")
    assert started.body.tools[-1] == "answer"
    request = scripted_model.requests[0].body
    assert published_tool(request, "answer") == VERDICT
    assert "tool_choice" not in request  # nothing is forced before the model had its chance


async def test_an_answer_that_does_not_match_goes_back_with_every_problem(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(
        answer_call("a1", verdict="maybe", failures=-2, extra=True),
        answer_call("a2", verdict="fail", failures=3),
    )
    server = await open_server(make_settings(scripted_model))
    session_id, outcome = await run_task(server, workspace, "verdict?", output_schema=VERDICT)

    assert outcome.stop == "completed" and outcome.turns == 2
    told = tool_outputs(scripted_model.requests[1].body)["a1"]
    assert told.startswith("[error] The answer does not match the schema:")
    assert "$.verdict: 'maybe' is not one of ['pass', 'fail']" in told
    assert "$.failures: -2 is less than the minimum of 0" in told
    assert "('extra' was unexpected)" in told and told.endswith("Fix it and call answer again.")
    (answered,) = await events(server, session_id, "answered")
    assert answered.body.answer == {"verdict": "fail", "failures": 3}


@pytest.mark.parametrize("wire", sorted(PROVIDERS.values()))
async def test_prose_is_nudged_once_and_the_next_turn_is_held_to_the_answer_tool(
    wire: str, scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("All green, nothing failed."), answer_call("a1", verdict="pass", failures=0))
    server = await open_server(make_settings(scripted_model, wire))
    session_id, outcome = await run_task(server, workspace, "verdict?", output_schema=VERDICT)

    assert outcome.stop == "completed" and outcome.turns == 2
    (nudged,) = await events(server, session_id, "answer-nudged")
    assert nudged.body.forced is True and "`answer`" in nudged.body.message
    second = scripted_model.requests[1].body
    assert user_texts(second)[-1] == nudged.body.message
    forced = {
        "openai-chat": {"type": "function", "function": {"name": "answer"}},
        "openai-responses": {"type": "function", "name": "answer"},
        "anthropic-messages": {"type": "tool", "name": "answer"},
    }
    assert second["tool_choice"] == forced[wire]
    assert len(await events(server, session_id, "answered")) == 1


async def test_a_model_that_still_answers_in_prose_fails_the_task_after_one_nudge(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("It passed."), answer("Really, it passed."))
    server = await open_server(make_settings(scripted_model))
    session_id, outcome = await run_task(server, workspace, "verdict?", output_schema=VERDICT)

    assert outcome.stop == "failed" and outcome.turns == 2
    assert "without a valid answer through the `answer` tool" in outcome.error
    assert len(await events(server, session_id, "answer-nudged")) == 1
    assert not await events(server, session_id, "answered")
    assert len(scripted_model.requests) == 2


async def test_a_schema_that_is_not_an_object_is_wrapped_for_the_wire_and_unwrapped_in_the_answer(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    names = {"type": "array", "items": {"$ref": "#/$defs/name"}, "$defs": {"name": {"type": "string"}}}
    scripted_model.add(answer_call("a1", answer=["ada", 7]), answer_call("a2", answer=["ada", "alan"]))
    server = await open_server(make_settings(scripted_model))
    session_id, outcome = await run_task(server, workspace, "who?", output_schema=names)

    assert outcome.stop == "completed"
    published = published_tool(scripted_model.requests[0].body, "answer")
    assert published["type"] == "object" and published["required"] == ["answer"]
    assert published["$defs"] == names["$defs"]  # the $ref still resolves from the root
    assert "$[1]: 7 is not of type 'string'" in tool_outputs(scripted_model.requests[1].body)["a1"]
    (answered,) = await events(server, session_id, "answered")
    assert answered.body.answer == ["ada", "alan"]


async def test_an_anthropic_model_that_thinks_is_nudged_without_a_forced_tool(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    settings = make_settings(scripted_model, "anthropic-messages")
    settings = settings.model_copy(
        update={"model": "anth/test-model:high", "models": {"anth/test-model": ModelInfo(thinking=True)}}
    )
    scripted_model.add(answer("pass"), answer_call("a1", verdict="pass", failures=0))
    server = await open_server(settings)
    session_id, outcome = await run_task(server, workspace, "verdict?", output_schema=VERDICT)

    assert outcome.stop == "completed"
    (nudged,) = await events(server, session_id, "answer-nudged")
    assert nudged.body.forced is False
    second = scripted_model.requests[1].body
    assert "thinking" in second and "tool_choice" not in second


async def test_a_bad_schema_fails_the_task_before_any_request(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    server = await open_server(make_settings(scripted_model))
    _, outcome = await run_task(server, workspace, "verdict?", output_schema={"type": "strin"})

    assert outcome.stop == "failed" and outcome.turns == 0
    assert outcome.error.startswith("output_schema is not a valid JSON Schema: 'strin' is not valid")
    assert "(at $.type)" in outcome.error and not scripted_model.requests
