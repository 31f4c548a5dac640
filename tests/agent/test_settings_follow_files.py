"""Settings files edited while Harnez runs apply from the next prompt on (docs/configuration.md,
"Editing settings while Harnez runs")."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harnez.server.factory import open_agent_server
from harnez.settings import load_settings
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, tool_call


def _write(path: Path, data: dict | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def _global(scripted_model: ScriptedModel, **more: object) -> dict:
    provider = {"wire": "openai-chat", "base_url": scripted_model.base_url("openai-chat")}
    return {"providers": {"chat": provider}, "model": "chat/model-a", **more}


async def test_a_permission_tightened_in_the_project_file_holds_from_the_next_prompt(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, isolated_home: Path
) -> None:
    _write(isolated_home / "settings.json", _global(scripted_model))
    project = workspace / ".harnez" / "settings.json"
    _write(project, {"permissions": {"tools": {"shell": "allow"}}})
    scripted_model.add(
        tool_call("shell", "c1", command="touch FIRST"),
        answer("made"),
        tool_call("shell", "c2", command="touch SECOND"),
        answer("refused"),
    )
    server = await open_agent_server(db_path, load_settings(workspace), approve="allow", remember=False)
    try:
        session = server.create_session(workspace).id
        await server.submit(session, "make the first file")
        await server.wait(session)
        _write(project, {"permissions": {"tools": {"shell": "deny"}}})  # edited while the app runs
        await server.submit(session, "make the second file")
        await server.wait(session)
        completed = [e.body.to_payload() for e in await events(server, session, "tool-completed")]
    finally:
        await server.close()
    assert (workspace / "FIRST").exists()
    assert not (workspace / "SECOND").exists()
    assert not completed[0]["is_error"] and completed[1]["is_error"]


async def test_a_new_default_model_reaches_a_session_opened_before_the_edit(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, isolated_home: Path
) -> None:
    _write(isolated_home / "settings.json", _global(scripted_model))
    scripted_model.add(answer("one"), answer("two"), answer("three"))
    server = await open_agent_server(db_path, load_settings(workspace), approve="deny", remember=False)
    try:
        first = server.create_session(workspace, model=server.settings.model).id  # as the TUI opens one
        await server.submit(first, "hi")
        await server.wait(first)
        waiting = server.create_session(workspace, model=server.settings.model).id  # new, nothing sent
        _write(isolated_home / "settings.json", _global(scripted_model, model="chat/model-b"))
        await server.submit(waiting, "hello")
        await server.wait(waiting)
        await server.submit(first, "again")
        await server.wait(first)
        chosen = (await server.get_session(first)).model, (await server.get_session(waiting)).model
    finally:
        await server.close()
    models = [request.body["model"] for request in scripted_model.requests]
    assert models == ["model-a", "model-b", "model-a"]  # a stored session keeps the model it runs
    assert chosen == ("chat/model-a", "chat/model-b")


async def test_a_settings_file_broken_by_an_edit_fails_the_prompt_with_its_name_and_loses_nothing(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, isolated_home: Path
) -> None:
    _write(isolated_home / "settings.json", _global(scripted_model))
    project = workspace / ".harnez" / "settings.json"
    scripted_model.add(answer("one"), answer("three"))
    server = await open_agent_server(db_path, load_settings(workspace), approve="deny", remember=False)
    try:
        session = server.create_session(workspace).id
        await server.submit(session, "first")
        await server.wait(session)
        _write(project, '{"permissions": {"tools": {"shell": "deny"},}}')  # a trailing comma
        await server.submit(session, "second")
        broken = await server.wait(session)
        _write(project, {"permissions": {"tools": {"shell": "deny"}}})  # fixed
        await server.submit(session, "third")
        fixed = await server.wait(session)
        prompts = [e.body.to_payload()["text"] for e in await events(server, session, "user-message")]
    finally:
        await server.close()
    assert broken is not None and broken.stop == "failed"
    assert broken.error is not None and str(project) in broken.error and "not valid JSON" in broken.error
    assert fixed is not None and fixed.stop == "completed"
    assert prompts == ["first", "second", "third"]
    assert len(scripted_model.requests) == 2  # the broken settings asked no model


async def test_settings_whose_files_did_not_change_are_not_read_again(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, isolated_home: Path
) -> None:
    _write(isolated_home / "settings.json", _global(scripted_model))
    scripted_model.add(answer("one"), answer("two"))
    server = await open_agent_server(db_path, load_settings(workspace), approve="deny", remember=False)
    try:
        read = server.settings
        session = server.create_session(workspace).id
        for prompt in ("one", "two"):
            await server.submit(session, prompt)
            await server.wait(session)
        unchanged = server.settings is read
        _write(isolated_home / "settings.json", _global(scripted_model, theme="nord"))
        changed = server.reread_settings()
    finally:
        await server.close()
    assert unchanged and changed and server.settings.theme == "nord"


def test_the_same_size_written_twice_in_one_clock_tick_is_a_change(
    workspace: Path, isolated_home: Path
) -> None:
    path = isolated_home / "settings.json"
    _write(path, {"theme": "nord"})
    settings = load_settings(workspace)
    before = path.stat()
    _write(path, {"theme": "dark"})  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same modification time
    assert settings.files_changed()
    assert not load_settings(workspace).files_changed()


async def test_a_settings_file_emptied_while_running_fails_closed(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path, isolated_home: Path
) -> None:
    """An editor empties a file before writing it: caught then, the file's `deny` must not become
    the default `ask` (nor, headless, a policy's `allow`)."""
    _write(isolated_home / "settings.json", _global(scripted_model))
    project = workspace / ".harnez" / "settings.json"
    _write(project, {"permissions": {"tools": {"shell": "deny"}}})
    scripted_model.add(answer("one"), tool_call("shell", "c1", command="touch RAN"), answer("two"))
    server = await open_agent_server(db_path, load_settings(workspace), approve="allow", remember=False)
    try:
        session = server.create_session(workspace).id
        await server.submit(session, "first")
        await server.wait(session)
        project.write_text("", encoding="utf-8")  # the instant between emptying and writing
        await server.submit(session, "second")
        emptied = await server.wait(session)
        project.unlink()  # deleting the file is how to use no project settings
        await server.submit(session, "third")
        deleted = await server.wait(session)
    finally:
        await server.close()
    assert emptied is not None and emptied.stop == "failed" and emptied.error is not None
    assert "was emptied" in emptied.error and str(project) in emptied.error
    assert deleted is not None and deleted.stop == "completed"  # no project file: the default rules
    assert (workspace / "RAN").exists()  # (this run's --approve allow answered the default `ask`)
