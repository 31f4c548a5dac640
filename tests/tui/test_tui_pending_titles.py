"""The app names, once idle, the sessions headless runs left with their excerpt."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harnez.server.server import Server
from harnez.tui import app as app_module
from tests.titles.title_support import EXCERPT, PROMPT, done_work
from tests.tui.helpers import wait_for


def _title(db_path: Path) -> tuple[str, str, int]:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT title, title_source, naming_used FROM sessions").fetchone()


async def test_the_app_makes_the_keyword_title_a_headless_run_left_to_it(
    make_app, db_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    headless = await Server.open(db_path, work=done_work)
    headless.titles.defer = True  # as `harnez run` opens it
    await headless.submit(headless.create_session(workspace).id, PROMPT)
    await headless.wait_for_titles(10)
    await headless.close()
    assert _title(db_path) == (EXCERPT, "excerpt", 2)
    monkeypatch.setattr(app_module, "PENDING_TITLES_AFTER", 0.05)
    app = make_app(open_picker=True)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: _title(db_path)[1] == "keywords", "the keyword title", tries=3000)
    assert _title(db_path) == ("WAL checkpoint races — group commit", "keywords", 1)
