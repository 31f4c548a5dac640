""" "Allow for this session" survives a restart: the grants are rebuilt from the stored events."""

from __future__ import annotations

from pathlib import Path

from harnez.agent.work import AgentWork
from harnez.server import Server
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, answer_approvals, events, make_settings, tool_call


async def test_a_session_grant_still_covers_the_command_after_a_restart(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add(
        tool_call("shell", "c1", command="echo granted-once >> log.txt"),
        answer("first"),
        tool_call("shell", "c2", command="echo granted-once >> log.txt"),
        answer("second"),
        tool_call("shell", "c3", command="echo other >> log.txt"),
        answer("third"),
    )
    settings = make_settings(scripted_model)

    first = await Server.open(db_path, settings, AgentWork(settings, approve="ask"))
    try:
        session = first.create_session(workspace).id
        answering = answer_approvals(first, session, {"shell": ("allow-session", None)})
        await first.submit(session, "log something")
        await first.wait(session)
        assert await answering == ["c1"]
    finally:
        await first.close()

    # A new process; it cannot ask a person (approve="deny"), so whatever still asks is refused.
    second = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
    try:
        await second.submit(session, "log it again")
        await second.wait(session)
        await second.submit(session, "and something else")
        await second.wait(session)
        asked = [e.body.call_id for e in await events(second, session, "approval-required")]
    finally:
        await second.close()
    assert asked == ["c1", "c3"]
    assert (workspace / "log.txt").read_text() == "granted-once\ngranted-once\n"


async def test_a_provider_repeating_call_ids_cannot_widen_a_restored_grant(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    # Local OpenAI-compatible servers number calls per response, so `call_0` comes back every turn.
    scripted_model.add(
        tool_call("shell", "call_0", command="ls"),
        answer("listed"),
        tool_call("shell", "call_0", command="touch PWNED"),
        answer("refused"),
        tool_call("shell", "call_0", command="touch PWNED"),
        answer("refused again"),
    )
    settings = make_settings(scripted_model)

    first = await Server.open(db_path, settings, AgentWork(settings, approve="ask"))
    try:
        session = first.create_session(workspace).id
        answering = answer_approvals(first, session, {"shell": ("allow-session", None)})
        await first.submit(session, "list the files")
        await first.wait(session)
        assert await answering == ["call_0"]
    finally:
        await first.close()

    for _ in range(2):  # a restart that stores the second call under the same id, then another
        later = await Server.open(db_path, settings, AgentWork(settings, approve="deny"))
        try:
            await later.submit(session, "make a file")
            await later.wait(session)
            completed = [e.body.to_payload() for e in await events(later, session, "tool-completed")]
        finally:
            await later.close()
        assert not (workspace / "PWNED").exists()
        assert completed[-1]["is_error"] and "denied" in completed[-1]["content"]


async def test_the_answer_stores_the_grant_the_person_gave(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="git status && ls -la"), answer("done"))
    settings = make_settings(scripted_model)
    server = await Server.open(db_path, settings, AgentWork(settings, approve="ask"))
    try:
        session = server.create_session(workspace).id
        answering = answer_approvals(server, session, {"shell": ("allow-session", None)})
        await server.submit(session, "look around")
        await server.wait(session)
        await answering
        resolved = (await events(server, session, "approval-resolved"))[0].body.to_payload()
    finally:
        await server.close()
    assert resolved["grant"] == {"tool": "shell", "commands": ["git status", "ls -la"]}
