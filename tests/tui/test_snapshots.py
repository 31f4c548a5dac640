"""How the screens look: an empty session, a streamed answer with a diff, picker search, an error."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from harnez.server import server as server_module
from harnez.server.server import Server
from harnez.tui.app import HarnezApp
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import answer_work, failing_work, seed_session, shows_a_title, wait_for

WORKSPACE = Path("/harnez-demo/project")
"""A fixed workspace path, so the screen shows the same text on every run (it need not exist)."""


@pytest.fixture(autouse=True)
def fixed_session_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic session ids (the short id is shown in the picker)."""
    counter = itertools.count(1)
    monkeypatch.setattr(server_module, "new_session_id", lambda: f"{next(counter):02x}c0ffee" + "0" * 24)


def build(db_path: Path, work=answer_work, **options) -> HarnezApp:
    async def open_server() -> Server:
        return await Server.open(db_path, work=work)

    return HarnezApp(open_server, WORKSPACE, None, **options)


async def send_and_wait(pilot, text: str) -> None:
    await wait_for(pilot, lambda: pilot.app.ready)
    prompt = pilot.app.screen.query_one(PromptInput)
    prompt.cursor_blink = False  # a slow run must not catch the cursor mid-blink
    prompt.load_text(text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: pilot.app.screen.query(TaskEndBlock), "task end")
    await wait_for(pilot, lambda: shows_a_title(pilot.app), "the session's title")
    await pilot.pause()


def test_empty_session(snap_compare, db_path: Path) -> None:
    app = build(db_path)

    async def ready(pilot) -> None:
        await wait_for(pilot, lambda: app.ready)
        pilot.app.screen.query_one(PromptInput).cursor_blink = False  # mid-blink on a slow run

    assert snap_compare(app, terminal_size=(80, 20), run_before=ready)


def test_streamed_answer_with_a_tool_diff(snap_compare, db_path: Path) -> None:
    app = build(db_path)
    assert snap_compare(
        app, terminal_size=(100, 48), run_before=lambda pilot: send_and_wait(pilot, "Say hello")
    )


def test_failed_task(snap_compare, db_path: Path) -> None:
    app = build(db_path, failing_work)
    assert snap_compare(app, terminal_size=(80, 20), run_before=lambda pilot: send_and_wait(pilot, "Try it"))


def test_picker_search_results(snap_compare, db_path: Path) -> None:
    async def seed() -> None:
        server = await Server.open(db_path)
        try:
            await seed_session(
                server,
                WORKSPACE,
                "plan the zebra migration",
                "The zebra tables move first.",
                title="Zebra migration",
            )
            await seed_session(server, WORKSPACE, "fix the login form")
            await seed_session(server, WORKSPACE, "a zebra crossing in the docs", title="Docs pass")
        finally:
            await server.close()

    asyncio.run(seed())
    app = build(db_path, open_picker=True)

    async def search(pilot) -> None:
        await wait_for(pilot, lambda: app.ready and app.screen.records)
        await pilot.press(*"zebra")
        await wait_for(
            pilot,
            lambda: (
                app.screen.shown_query == "zebra"
                and app.screen.shown_full_text
                and len(app.screen.records) == 2
            ),
            "the full-text results of the whole word",
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=search)
