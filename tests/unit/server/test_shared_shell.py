"""`!!command`: the person's command runs as `!` does, and its output also reaches the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.errors import HarnezError
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, make_settings


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic-messages", "openai-responses"])
async def test_a_shared_shell_line_reaches_the_next_request(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, wire: str
) -> None:
    scripted_model.add(answer("First answer."), answer("I see the failing test."))
    settings = make_settings(scripted_model, wire)
    server = await Server.open(db_path, settings, AgentWork(settings))
    try:
        draft = server.create_session(workspace)
        await server.submit(draft.id, "hello")
        await server.wait(draft.id)
        event = await server.run_shell(draft.id, "echo FAILED test_parse-71; exit 1", share=True)
        await server.run_shell(draft.id, "echo private-unshared-72")
        await server.submit(draft.id, "why does it fail?")
        outcome = await server.wait(draft.id)
    finally:
        await server.close()
    assert event.body.shared is True and event.body.exit_code == 1
    assert outcome is not None and outcome.stop == "completed"
    second = json.dumps(scripted_model.requests[1].body)
    assert "FAILED test_parse-71" in second and "exit code 1" in second and "why does it fail?" in second
    assert second.index("FAILED test_parse-71") < second.index("why does it fail?")
    assert "private-unshared-72" not in second


async def test_sharing_is_refused_while_a_task_runs(db_path: Path, workspace: Path) -> None:
    import asyncio

    from harnez.server import TaskOutcome

    gate = asyncio.Event()

    async def waiting(run) -> TaskOutcome:
        await gate.wait()
        return TaskOutcome("completed", 1)

    server = await Server.open(db_path, work=waiting)
    try:
        draft = server.create_session(workspace)
        await server.submit(draft.id, "long job")
        with pytest.raises(HarnezError, match="A task is running"):
            await server.run_shell(draft.id, "echo hi", share=True)
        plain = await server.run_shell(draft.id, "echo hi")
        assert plain.body.shared is False
        gate.set()
        await server.wait(draft.id)
    finally:
        await server.close()
