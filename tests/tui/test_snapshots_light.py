"""The light theme: the same streamed answer with a tool diff, readable on a light background."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harnez.server import server as server_module
from harnez.server.server import Server
from harnez.settings import Settings
from harnez.tui.app import HarnezApp
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import answer_work, shows_a_title, wait_for

WORKSPACE = Path("/harnez-demo/project")


@pytest.fixture(autouse=True)
def fixed_session_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = itertools.count(1)
    monkeypatch.setattr(server_module, "new_session_id", lambda: f"{next(counter):02x}c0ffee" + "0" * 24)


def test_streamed_answer_in_the_light_theme(snap_compare, db_path: Path) -> None:
    settings = Settings(theme="textual-light", model="scripted/demo")

    async def open_server() -> Server:
        return await Server.open(db_path, settings, work=answer_work)

    app = HarnezApp(open_server, WORKSPACE, settings)

    async def send(pilot) -> None:
        await wait_for(pilot, lambda: app.ready)
        assert app.theme == "textual-light"
        prompt = app.screen.query_one(PromptInput)
        prompt.cursor_blink = False  # a slow run must not catch the cursor mid-blink
        prompt.load_text("Say hello")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query(TaskEndBlock), "task end")
        await wait_for(pilot, lambda: shows_a_title(app), "the session's title")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 48), run_before=send)
