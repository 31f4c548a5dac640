"""A delegation under control: the parent's cancel, its approvals, its permissions, and its deletion."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.errors import SessionNotFoundError
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.agents_support import delegate, only_child, reviewer
from tests.agent.helpers import (
    answer,
    answer_approvals,
    events,
    first_event,
    make_settings,
    run_task,
    tool_call,
    tool_outputs,
)


async def test_cancelling_the_parent_cancels_the_child_and_keeps_what_it_had_answered(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace)
    scripted_model.add(
        delegate("d1", "reviewer", "Review everything"),
        {"reply": [{"text": ["Found ", "two ", "bugs ", "so far"]}], "hold": "child", "hold_after_chunks": 4},
        answer("after the cancel"),
    )
    server = await open_server(make_settings(scripted_model))
    parent = server.create_session(workspace).id
    await server.submit(parent, "review")
    began = await first_event(server, parent, lambda e: e.kind == "delegate-started")
    child = began.body.child
    await first_event(server, child, lambda e: e.kind == "text-delta" and "bugs" in e.body.text)
    assert await server.cancel(parent)
    scripted_model.release("child")
    assert server.running(parent) is None and server.running(child) is None
    ((parent_end,), (child_end,)) = [await events(server, s, "finished") for s in (parent, child)]
    assert parent_end.body.stop == child_end.body.stop == "cancelled"
    (ended,) = await events(server, parent, "delegate-finished")
    assert ended.body.stop == "cancelled" and ended.body.calls == 1
    (result,) = await events(server, parent, "delegated")
    assert result.body.is_error and result.body.text.startswith("The reviewer agent was cancelled")
    assert result.body.text.endswith("Found two bugs")
    (completed,) = [e for e in await events(server, parent, "tool-completed") if e.body.name == "delegate"]
    assert completed.body.cancelled and completed.body.content == result.body.text
    assert (await server.delegation_of(child)).stop == "cancelled"  # type: ignore[union-attr]
    await server.submit(parent, "go on")
    await server.wait(parent)
    assert tool_outputs(scripted_model.requests[-1].body)["d1"] == f"[error] {result.body.text}"


async def test_the_childs_approvals_are_asked_in_the_parent_and_an_allow_for_the_session_is_shared(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace, tools="read, shell")
    scripted_model.add(
        delegate("d1", "reviewer", "Run the check"),
        tool_call("shell", "s1", command="echo checked"),
        answer("The check printed checked."),
        tool_call("shell", "p1", command="echo checked"),
        answer("done"),
    )
    server = await open_server(make_settings(scripted_model))
    parent = server.create_session(workspace).id
    answering = answer_approvals(server, parent, {"shell": ("allow-session", None)})
    await server.submit(parent, "check")
    await server.wait(parent)
    assert await answering == ["d1/s1"]
    child = await only_child(server, parent)
    (asked,) = await events(server, parent, "approval-required")
    assert asked.body.name == "shell" and asked.body.reason.startswith("Sub-agent reviewer: ")
    (answered,) = await events(server, parent, "approval-resolved")
    assert (answered.body.call_id, answered.body.verdict, answered.body.by) == (
        "d1/s1",
        "allow-session",
        "user",
    )
    (child_asked,) = await events(server, child, "approval-required")
    assert child_asked.body.call_id == "s1"
    (ran,) = await events(server, child, "tool-completed")
    assert "checked" in ran.body.content and not ran.body.is_error
    own = [e for e in await events(server, parent, "tool-completed") if e.body.name == "shell"]
    assert own[0].body.call_id == "p1" and not own[0].body.is_error  # no second question


async def test_a_headless_policy_answers_the_childs_calls_and_the_parent_sees_it(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace, tools="shell")
    scripted_model.add(
        delegate("d1", "reviewer", "Delete it"),
        tool_call("shell", "s1", command="rm -rf build"),
        answer("I could not delete it."),
        answer("ok"),
    )
    server = await open_server(make_settings(scripted_model), approve="deny")
    parent, _ = await run_task(server, workspace, "clean")
    child = await only_child(server, parent)
    (answered,) = await events(server, parent, "approval-resolved")
    assert (answered.body.call_id, answered.body.verdict, answered.body.by) == ("d1/s1", "deny", "policy")
    (ran,) = await events(server, child, "tool-completed")
    assert ran.body.is_error and "did not run" in ran.body.content


async def test_the_child_never_gets_a_tool_its_parent_withheld_or_its_agent_did_not_name(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace, tools="read, shell")
    scripted_model.add(
        delegate("d1", "reviewer", "Try everything"),
        tool_call("shell", "s1", command="echo no"),
        tool_call("write", "w1", path="x.txt", content="no"),
        answer("Neither ran."),
        answer("ok"),
    )
    server = await open_server(make_settings(scripted_model))
    parent, _ = await run_task(server, workspace, "go", disabled_tools=["shell"])
    child = await only_child(server, parent)
    (started,) = await events(server, child, "started")
    assert started.body.tools == ["read"] and "shell" in started.body.withheld
    warnings = await events(server, child, "warning")
    unpublished = [w.body.call_id for w in warnings if w.body.code == "unpublished-tool"]
    assert unpublished == ["s1", "w1"]
    assert not (workspace / "x.txt").exists()
    assert (await server.delegation_of(child)).tools == ("read",)  # type: ignore[union-attr]


async def test_a_child_of_a_read_only_task_is_read_only_too(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace, tools="read, write")
    scripted_model.add(
        delegate("d1", "reviewer", "Write it"),
        tool_call("write", "w1", path="x.txt", content="no"),
        answer("Refused."),
        answer("ok"),
    )
    server = await open_server(make_settings(scripted_model))
    parent, _ = await run_task(server, workspace, "go", mode="read-only")
    child = await only_child(server, parent)
    (refused,) = await events(server, child, "tool-completed")
    assert refused.body.is_error and "read-only" in refused.body.content
    assert not (workspace / "x.txt").exists()


async def test_deleting_the_parent_deletes_its_children(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    reviewer(workspace)
    scripted_model.add(delegate("d1", "reviewer", "Find the okapi"), answer("okapi here"), answer("ok"))
    server = await open_server(make_settings(scripted_model))
    parent, _ = await run_task(server, workspace, "go")
    child = await only_child(server, parent)
    await server.delete_session(parent)
    with pytest.raises(SessionNotFoundError):
        await server.get_session(child)
    rows = await server.store.db.fetchall("SELECT COUNT(*) FROM delegations")
    assert rows[0][0] == 0
    docs = await server.store.db.fetchall("SELECT COUNT(*) FROM search_docs WHERE text LIKE '%okapi%'")
    assert docs[0][0] == 0


async def test_without_agents_nothing_is_offered_and_settings_or_the_task_can_withhold_delegate(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("plain"), answer("still plain"), answer("plain again"))
    server = await open_server(make_settings(scripted_model))
    session, _ = await run_task(server, workspace, "hi")
    (started,) = await events(server, session, "started")
    assert "delegate" not in started.body.tools and started.body.agents == []
    reviewer(workspace)
    denied = make_settings(scripted_model, permissions={"tools": {"delegate": "deny"}})
    server = await open_server(denied)
    session, _ = await run_task(server, workspace, "hi")
    (started,) = await events(server, session, "started")
    assert "delegate" not in started.body.tools and "delegate" in started.body.withheld
    assert started.body.agents == []
    server = await open_server(make_settings(scripted_model))
    session, _ = await run_task(server, workspace, "hi", disabled_tools=["delegate"])
    (started,) = await events(server, session, "started")
    assert "delegate" not in started.body.tools and started.body.withheld == ["delegate"]


async def test_after_a_restart_a_resumed_child_and_its_parent_keep_every_shared_grant(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    reviewer(workspace, tools="shell")
    scripted_model.add(
        tool_call("shell", "p1", command="echo parent >> log.txt"),
        delegate("d1", "reviewer", "Log yourself"),
        tool_call("shell", "s1", command="echo child >> log.txt"),
        answer("logged"),
        answer("both logged"),
        tool_call("shell", "s2", command="echo child >> log.txt"),
        tool_call("shell", "s3", command="echo parent >> log.txt"),
        answer("child again"),
        tool_call("shell", "p2", command="echo parent >> log.txt"),
        answer("parent again"),
    )
    settings = make_settings(scripted_model)
    first = await Server.open(db_path, settings, AgentWork(settings, approve="ask"))
    try:
        parent = first.create_session(workspace).id
        answering = answer_approvals(first, parent, {"shell": ("allow-session", None)})
        await first.submit(parent, "log")
        await first.wait(parent)
        assert await answering == ["p1", "d1/s1"]
        child = await only_child(first, parent)
    finally:
        await first.close()

    # A new process that cannot ask (approve="deny"): the child is resumed first, then the parent.
    second = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
    try:
        for session in (child, parent):
            await second.submit(session, "again")
            await second.wait(session)
        asked = {
            s: [e.body.call_id for e in await events(second, s, "approval-required")] for s in (parent, child)
        }
    finally:
        await second.close()
    assert asked == {parent: ["p1", "d1/s1"], child: ["s1"]}
    assert (workspace / "log.txt").read_text().split() == ["parent", "child", "child", "parent", "parent"]
