"""A model turn stopped at the output limit: the user is told the answer is cut short, and a tool call
whose arguments the limit cut runs nothing while the model hears why."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, make_settings, run_task, tool_outputs


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "anthropic-messages"])
async def test_an_answer_cut_at_the_output_limit_is_said_to_be_cut(
    scripted_model: ScriptedModel, open_server, workspace: Path, wire: str
) -> None:
    scripted_model.add(answer("The first half of a long", stop="max_tokens"))
    server = await open_server(make_settings(scripted_model, wire))
    session_id, outcome = await run_task(server, workspace, "write a lot")
    assert outcome.stop == "completed"
    stored = await server.events_after(session_id)
    (limit,) = [at for at, e in enumerate(stored) if e.kind == "warning" and e.body.code == "output-limit"]
    assert "output limit" in stored[limit].body.message and "max_output" in stored[limit].body.message
    (done,) = [at for at, e in enumerate(stored) if e.kind == "turn-completed"]
    assert limit < done and stored[done].body.stop_reason == "max_tokens"


async def test_a_tool_call_cut_at_the_output_limit_runs_nothing_and_the_model_hears_why(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    cut = {"name": "write", "id": "w1", "arguments": '{"path": "big.txt", "content": "aaa'}
    scripted_model.add(
        {"reply": [{"tool_call": cut}], "stop": "max_tokens"},
        answer("I will write it in parts."),
    )
    server = await open_server(make_settings(scripted_model, permissions={"tools": {"write": "allow"}}))
    session_id, outcome = await run_task(server, workspace, "write a big file")
    assert outcome.stop == "completed" and not (workspace / "big.txt").exists()
    told = tool_outputs(scripted_model.requests[-1].body)["w1"]
    assert "not valid JSON" in told and "output limit" in told and "send less in one call" in told
    (warning,) = [
        e.body for e in await events(server, session_id, "warning") if e.body.code == "output-limit"
    ]
    assert "The arguments of write were cut" in warning.message
