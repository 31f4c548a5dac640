"""Declared programs over loopback: a shell call naming an undeclared program runs nothing, fails with a
message the model can act on, and emits `program-refused`; declared ones run (docs/tools.md)."""

from __future__ import annotations

from pathlib import Path

from harnez.testing.scripted_model import ScriptedModel
from tests.agent.agents_support import delegate, only_child, project_agents, write_agent
from tests.agent.helpers import answer, events, make_settings, run_task, tool_call, tool_outputs

ALLOW_SHELL = {"tools": {"shell": "allow"}}


async def test_an_undeclared_program_anywhere_in_the_line_refuses_the_whole_call(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("precious\n")
    scripted_model.add(
        tool_call("shell", "c1", command="echo started > log.txt; git --version && rm keep.txt"),
        answer("ok"),
    )
    server = await open_server(make_settings(scripted_model, permissions=ALLOW_SHELL))
    session_id, outcome = await run_task(server, workspace, "tidy up", programs=["git", "pytest"])
    assert outcome.stop == "completed"
    (refused,) = await events(server, session_id, "program-refused")
    assert (refused.body.call_id, refused.body.program, refused.body.declared) == (
        "c1",
        "rm",
        ["git", "pytest"],
    )
    (completed,) = await events(server, session_id, "tool-completed")
    assert completed.body.is_error and "`rm` is not one of the declared programs (git, pytest)" in (
        completed.body.content
    )
    assert (workspace / "keep.txt").exists() and not (workspace / "log.txt").exists(), "nothing ran"
    assert "nothing ran" in tool_outputs(scripted_model.requests[-1].body)["c1"]
    assert not await events(server, session_id, "approval-required"), "refused before anyone is asked"


async def test_the_task_option_replaces_the_settings_list_and_a_bad_one_fails_the_task(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="git --version"), answer("done"))
    permissions = {**ALLOW_SHELL, "shell": {"programs": ["git"]}}
    server = await open_server(make_settings(scripted_model, permissions=permissions))
    session_id, _ = await run_task(server, workspace, "go", programs=["pytest"])
    (refused,) = await events(server, session_id, "program-refused")
    assert (refused.body.program, refused.body.declared) == ("git", ["pytest"])
    _, outcome = await run_task(server, workspace, "again", programs=["rm -rf /"])
    assert outcome.stop == "failed" and "programs: 'rm -rf /' is not a program name" in outcome.error


async def test_declared_programs_run_without_approval_ask_patterns_still_ask_computed_names_are_refused(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(
        tool_call("shell", "ok", command="cd . && env LC_ALL=C git --version | head -1 > version.txt"),
        tool_call("shell", "asked", command="git push origin main"),
        tool_call("shell", "computed", command='p=rm; "$p" version.txt'),
        answer("done"),
    )
    permissions = {"shell": {"programs": ["git", "head"], "ask": ["git push*"]}}
    server = await open_server(make_settings(scripted_model, permissions=permissions), approve="deny")
    session_id, outcome = await run_task(server, workspace, "version?")
    assert outcome.stop == "completed"
    assert (workspace / "version.txt").read_text().startswith("git version")
    (asked,) = await events(server, session_id, "approval-required")
    assert asked.body.call_id == "asked" and "permissions.shell.ask 'git push*'" in asked.body.reason
    (refused,) = await events(server, session_id, "program-refused")
    assert (refused.body.call_id, refused.body.program) == ("computed", None)
    assert "could not be checked against the declared programs (git, head)" in refused.body.reason
    assert (workspace / "version.txt").exists()


async def test_a_sub_agent_is_held_to_the_programs_its_parent_task_declared(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("precious\n")
    write_agent(project_agents(workspace), "cleaner", "name: cleaner\ndescription: Cleans.\ntools: shell")
    scripted_model.add(
        delegate("d1", "cleaner", "remove keep.txt"),
        tool_call("shell", "c1", command="rm keep.txt"),
        answer("could not"),
        answer("done"),
    )
    server = await open_server(make_settings(scripted_model, permissions=ALLOW_SHELL))
    parent, _ = await run_task(server, workspace, "tidy up", programs=["git"])
    (refused,) = await events(server, await only_child(server, parent), "program-refused")
    assert (refused.body.program, refused.body.declared) == ("rm", ["git"])
    assert (workspace / "keep.txt").exists()
