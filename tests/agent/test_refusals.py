"""Paths outside the workspace are never used without approval; unpublished tools run nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harnez.agent.approvals import ApprovalError
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, make_settings, run_task, tool_call, tool_outputs


async def test_outside_paths_are_denied_headless_and_the_model_hears_why(
    scripted_model: ScriptedModel, open_server, workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret value\n")
    os.symlink(secret, workspace / "link.txt")
    scripted_model.add(
        {
            "reply": [
                {"tool_call": {"name": "read", "id": "p1", "arguments": {"path": "../secret.txt"}}},
                {"tool_call": {"name": "read", "id": "p2", "arguments": {"path": str(secret)}}},
                {"tool_call": {"name": "read", "id": "p3", "arguments": {"path": "link.txt"}}},
            ]
        },
        answer("I may not read those."),
    )
    server = await open_server(make_settings(scripted_model), approve="deny")
    session_id, outcome = await run_task(server, workspace, "read the secret")
    assert outcome.stop == "completed"
    outputs = tool_outputs(scripted_model.requests[-1].body)
    assert set(outputs) == {"p1", "p2", "p3"}
    for text in outputs.values():
        assert "the secret value" not in text and "approve=deny" in text
    asked = await events(server, session_id, "approval-required")
    assert [e.body.call_id for e in asked] == ["p1", "p2", "p3"]
    assert all("outside the workspace" in e.body.reason for e in asked)
    resolved = await events(server, session_id, "approval-resolved")
    assert {(e.body.verdict, e.body.by) for e in resolved} == {("deny", "policy")}


async def test_read_only_mode_denies_the_shell_by_rule_without_asking(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "m1", command="touch made.txt"), answer("ok"))
    server = await open_server(make_settings(scripted_model), approve="allow")
    session_id, _ = await run_task(server, workspace, "make a file", mode="read-only")
    assert not (workspace / "made.txt").exists()
    assert "read-only mode" in tool_outputs(scripted_model.requests[-1].body)["m1"]
    assert await events(server, session_id, "approval-required") == []


async def test_an_unpublished_tool_runs_nothing_and_warns(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(tool_call("teleport", "u1", to="mars"), answer("Fine, no teleport."))
    settings = make_settings(scripted_model, permissions={"tools": {"write": "deny"}})
    server = await open_server(settings)
    session_id, outcome = await run_task(server, workspace, "beam me")
    assert outcome.stop == "completed"
    (warning,) = [e for e in await events(server, session_id, "warning") if e.body.code == "unpublished-tool"]
    assert "teleport" in warning.body.message
    assert "There is no tool named 'teleport'" in tool_outputs(scripted_model.requests[-1].body)["u1"]
    (started,) = await events(server, session_id, "started")
    assert started.body.withheld == ["write"] and "write" not in started.body.tools
    names = [tool["function"]["name"] for tool in scripted_model.requests[0].body["tools"]]
    assert names == started.body.tools
    record = await server.get_session(session_id)
    (row,) = await server.store.ledger.tool_executions(record.num)
    assert (row["tool"], row["outcome"], row["is_error"]) == ("teleport", "unpublished", 1)


async def test_answering_an_unknown_call_is_a_clear_error(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    server = await open_server(make_settings(scripted_model))
    with pytest.raises(ApprovalError, match="No tool call 'nope' waits for approval"):
        server.answer_approval("s" * 32, "nope", "allow")
    with pytest.raises(ApprovalError, match="answer one of allow, allow-session, deny"):
        server.answer_approval("s" * 32, "nope", "sure")
