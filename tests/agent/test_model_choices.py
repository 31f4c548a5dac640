"""The models a picker offers: configured ones and those whose recent calls completed, never one that only failed."""

from __future__ import annotations

from pathlib import Path

from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, make_settings


async def _run_with(server: Server, workspace: Path, model: str):
    session_id = server.create_session(workspace).id
    await server.submit(session_id, "hello", model=model)
    return await server.wait(session_id)


async def test_a_model_that_only_failed_is_not_offered_but_one_that_answered_is(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("Fine."), {"status": 404, "body": {"error": {"message": "no such model"}}})
    server = await open_server(make_settings(scripted_model))
    worked = await _run_with(server, workspace, "chat/answers-well")
    failed = await _run_with(server, workspace, "chat/misspelt-modle")
    chosen_only = server.create_session(workspace).id
    await server.select_model(chosen_only, "chat/never-called")
    assert worked.stop == "completed" and failed.stop == "failed"

    choices = await server.model_choices()
    assert choices[0] == "chat/test-model", "the configured default comes first"
    assert "chat/answers-well" in choices
    assert "chat/misspelt-modle" not in choices and "chat/never-called" not in choices
