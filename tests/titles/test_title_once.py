"""Naming runs once per session, on its first normal prompt, and that use survives restarts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from title_support import (
    KEY_ENV,
    PROMPT,
    GatedWork,
    events_of,
    first_prompt,
    open_server,
    provider,
    settings_for,
    title_of,
)

from harnez.testing.scripted_model import ScriptedModel

KEYWORD_TITLE = "WAL checkpoint races — group commit"
OTHER = "Refactor the SSE parser to use httpx-sse and handle malformed lines"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-once-test-key")


async def test_a_follow_up_prompt_never_renames(db_path: Path, workspace: Path) -> None:
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    session_id = await first_prompt(server, workspace)
    await server.wait(session_id)
    await server.titles.wait_idle()
    await server.submit(session_id, OTHER)
    await server.wait(session_id)
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == (KEYWORD_TITLE, "keywords")
    assert len(await events_of(server, session_id, "title-changed")) == 1
    await server.close()


async def test_queued_and_steering_prompts_never_rename(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add({"reply": [{"text": "Model title"}]})
    work = GatedWork()
    server = await open_server(
        db_path, settings_for("model/local/m", {"local": provider(scripted_model)}), work
    )
    session_id = await first_prompt(server, workspace)
    await server.submit(session_id, OTHER, steer=True)
    await server.submit(session_id, "Add a --json flag to harnez run so CI can parse the output")
    work.open()
    await server.wait(session_id)
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == ("Model title", "model")
    modes = [e["mode"] for e in await events_of(server, session_id, "user-message")]
    assert modes == ["prompt", "steering", "prompt"]  # the queued prompt ran as a task of its own
    assert len(await events_of(server, session_id, "prompt-queued")) == 1
    assert len(scripted_model.requests) == 1
    assert scripted_model.requests[0].body["messages"][-1]["content"] == PROMPT
    await server.close()


async def test_a_prompt_in_a_second_session_names_that_session_only(db_path: Path, workspace: Path) -> None:
    server = await open_server(db_path, settings_for("keywords/yake", {}))
    first = await first_prompt(server, workspace)
    second = await first_prompt(server, workspace, OTHER)
    await server.titles.wait_idle()
    assert await title_of(server, first) == (KEYWORD_TITLE, "keywords")
    assert await title_of(server, second) == ("SSE parser — handle malformed lines", "keywords")
    await server.close()


async def test_generation_off_still_uses_up_the_first_prompt(db_path: Path, workspace: Path) -> None:
    server = await open_server(db_path, settings_for("keywords/yake", {}, generated=False))
    session_id = await first_prompt(server, workspace)
    await server.wait(session_id)
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == (None, None)
    await server.close()

    server = await open_server(db_path, settings_for("keywords/yake", {}, generated=True))
    await server.submit(session_id, OTHER)
    await server.wait(session_id)
    await server.titles.wait_idle()
    assert await title_of(server, session_id) == (None, None)
    fresh = await first_prompt(server, workspace, OTHER)
    await server.titles.wait_idle()
    assert await title_of(server, fresh) == ("SSE parser — handle malformed lines", "keywords")
    await server.close()


CHILD = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from harnez.server import Server, TaskOutcome
    from harnez.settings import load_settings

    async def work(run):
        return TaskOutcome("completed", 1)

    async def main(workspace, database, session_id, prompt):
        settings = load_settings(Path(workspace))
        server = await Server.open(Path(database), settings, work=work)
        if not session_id:
            session_id = server.create_session(Path(workspace)).id
        await server.submit(session_id, prompt)
        await server.wait(session_id)
        await server.titles.wait_idle()
        record = await server.get_session(session_id)
        await server.close()
        print(json.dumps({"id": session_id, "title": record.title, "generated": settings.session.title.generated}))

    asyncio.run(main(*sys.argv[1:]))
""")


def _run_child(workspace: Path, db_path: Path, session_id: str, prompt: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(workspace), str(db_path), session_id, prompt],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _project_settings(workspace: Path, generated: bool) -> None:
    folder = workspace / ".harnez"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"session": {"title": {"generated": generated}}}))


def test_turning_generation_on_after_a_restart_never_names_an_existing_session(
    db_path: Path, workspace: Path
) -> None:
    _project_settings(workspace, generated=False)
    first = _run_child(workspace, db_path, "", PROMPT)
    assert first["title"] is None and first["generated"] is False
    _project_settings(workspace, generated=True)
    again = _run_child(workspace, db_path, str(first["id"]), OTHER)
    assert again["generated"] is True and again["title"] is None
    fresh = _run_child(workspace, db_path, "", OTHER)
    assert fresh["title"] == "SSE parser — handle malformed lines"
