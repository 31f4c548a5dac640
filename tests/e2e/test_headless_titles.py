"""A headless run stores its session's excerpt and leaves the keyword or model title to a later process."""

from __future__ import annotations

import json
import sqlite3

import pytest

from harnez.server.factory import open_agent_server
from harnez.settings import load_settings
from tests.e2e.helpers import SECRET, HeadlessWorkspace, json_lines

PROMPT = "Fix the flaky test in test_store.py: the WAL checkpoint races with the group commit"
EXCERPT = "Fix the flaky test in test_store.py: the WAL checkpoint races with the group…"


def _stored(headless: HeadlessWorkspace) -> tuple[str, str, int]:
    with sqlite3.connect(headless.database) as db:
        return db.execute("SELECT title, title_source, naming_used FROM sessions").fetchone()


async def _name_later(headless: HeadlessWorkspace, rename: str | None = None) -> int:
    """What the next non-headless process does when idle (the app: `name_pending_titles`), after
    the person renamed the newest session to `rename`."""
    settings = load_settings(headless.path, headless.env)
    server = await open_agent_server(headless.database, settings, remember=False)
    try:
        if rename is not None:
            await server.rename((await server.newest_session(headless.path)).id, rename)
        named = await server.name_pending_titles()
        assert await server.name_pending_titles() == 0  # claimed once: never named twice
        return named
    finally:
        await server.close()


async def test_a_run_stores_the_excerpt_at_once_and_a_later_process_makes_the_keyword_title(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add({"reply": [{"text": "done"}]})
    done = headless.harnez("run", "--json", "--input", PROMPT)
    assert done.returncode == 0, done.stderr
    titles = [(e["title"], e["source"]) for e in json_lines(done.stdout) if e["kind"] == "title-changed"]
    assert titles == [(EXCERPT, "excerpt")]  # the --json stream is complete: the title it stored
    assert _stored(headless) == (EXCERPT, "excerpt", 2)  # still to be named
    assert await _name_later(headless) == 1
    assert _stored(headless) == ("WAL checkpoint races — group commit", "keywords", 1)


async def test_a_model_title_is_asked_by_the_later_process_and_a_rename_before_it_wins(
    headless: HeadlessWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNEZ_TEST_KEY", SECRET)
    settings_file = headless.path / ".harnez" / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["session"] = {"title": {"source": "model/responses/namer"}}
    settings_file.write_text(json.dumps(settings))
    for _ in range(2):
        headless.model.add({"path": "/chat/completions", "reply": [{"text": "done"}]})
        assert headless.harnez("run", "--input", PROMPT).returncode == 0
    assert len(headless.model.requests) == 2  # the tasks only: no title request delayed either run
    headless.model.add({"path": "/responses", "reply": [{"text": "Named Later"}]})
    assert await _name_later(headless, rename="Mine") == 1
    with sqlite3.connect(headless.database) as db:
        rows = db.execute("SELECT title, title_source, naming_used FROM sessions ORDER BY num").fetchall()
    assert rows == [("Named Later", "model", 1), ("Mine", "user", 1)]
    assert len(headless.model.requests) == 3  # one naming request: none for the renamed session
